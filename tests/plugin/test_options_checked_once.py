"""Options are checked once, by the core; the Python API names its parameters, the CLI its flags."""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

import kpass
from kpass.cli.main import build_parser, flag_names

from .conftest import make_records


@pytest.fixture
def table():
    return kpass.SampleTable.from_records(make_records(n_problems=6, n=4), source="t.jsonl")


@pytest.mark.parametrize("options, parameter", [
    ({"confidence_level": 2}, "`confidence_level`"),
    ({"n_resamples": 1}, "`n_resamples`"),
    ({"rng": -1}, "`rng`"),
    ({"method": "magic"}, "`method`"),
    ({"method": "clustered-t"}, "`cluster_by`"),
])
def test_the_python_api_names_its_parameter(table, options, parameter):
    with pytest.raises(ValueError) as error:
        kpass.compute_report(table, "pass@1", **options)
    message = str(error.value)
    assert parameter in message and "--" not in message, message


def test_the_host_raises_what_the_core_raises(table):
    with pytest.raises(ValueError) as host:
        kpass.compute_report(table, "pass@1", confidence_level=2, rng=0)
    with pytest.raises(ValueError) as core:
        kpass.mean_ci([0.1, 0.5, 0.9], confidence_level=2)
    assert str(host.value) == str(core.value)


def test_the_host_and_the_core_say_rng_alike(table):
    with pytest.raises(ValueError) as host:
        kpass.compute_report(table, "pass@1", rng=-1)
    with pytest.raises(ValueError) as core:
        kpass.mean_ci([0.1, 0.5, 0.9], rng=-1)
    assert str(host.value) == str(core.value) and "`rng`" in str(host.value)


def test_a_generator_is_an_rng_of_the_host_too():
    table = kpass.SampleTable.from_records(make_records(n_problems=12, correct=lambda j, s: s < j % 5),
                                           source="t.jsonl")
    first, again = (kpass.compute_report(table, "pass@1", method="bootstrap", rng=np.random.default_rng(5),
                                         n_resamples=200).rows[0] for _ in range(2))
    assert (first.low, first.high) == (again.low, again.high) and first.low < first.estimate < first.high


#: The public modules whose functions take the bootstrap's seed or generator.
PUBLIC_MODULES = ("kpass", "kpass.metrics", "kpass.reports.report", "kpass.reports.compare", "kpass.reports.leaderboard",
                  "kpass.reports.frontier", "kpass.reports.crossover", "kpass.reports.selection",
                  "kpass.adapters.inspect_metrics", "kpass.adapters.inspect_tasks")


def test_one_name_for_the_bootstrap_seed_across_the_python_api():
    """SciPy SPEC 7: ``rng`` everywhere (int, Generator or None); ``seed`` is only what a result
    records (``details["seed"]``, ``.seed``), and ``--seed`` the flag."""
    takes_rng, takes_seed = [], []
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        for attribute in getattr(module, "__all__", ()):
            function = getattr(module, attribute)
            if not inspect.isfunction(function):
                continue  # result classes record the seed used: a field, not a parameter
            parameters = inspect.signature(function).parameters
            (takes_rng if "rng" in parameters else takes_seed if "seed" in parameters else []).append(
                f"{name}.{attribute}")
    assert takes_seed == [], takes_seed
    for expected in ("kpass.compute_report", "kpass.compute_comparison", "kpass.mean_ci",
                     "kpass.reports.leaderboard.build_leaderboard", "kpass.reports.report.interval_options",
                     "kpass.adapters.inspect_metrics.kpass_metrics"):
        assert expected in takes_rng, takes_rng


def test_the_cli_says_the_flag():
    assert flag_names("`rng` must be an int >= 0; got -1.") == "--seed must be an int >= 0; got -1."
    assert flag_names("`confidence_level` must be in the open interval (0, 1); got 2.") == \
        "--confidence must be in the open interval (0, 1); got 2."
    assert flag_names("`method` 'clustered-t' needs `cluster_by`; got cluster_by=None.") == \
        "--method 'clustered-t' needs --cluster-by; got --cluster-by None."


def test_a_core_option_error_reaches_the_user_as_a_flag(run_cli, write_jsonl):
    path = write_jsonl(make_records())
    code, out, err = run_cli("leaderboard", path, "--n-resamples", "1", "--no-curves")
    assert code == 2 and out == ""
    assert "--n-resamples must be an integer >= 2; got 1" in err, err


def test_the_core_name_of_an_option_is_said_as_its_flag_too():
    """``clusters`` (the core's) and ``cluster_by`` (the API's) are both ``--cluster-by``; a name
    inside another (``sort_by``) is left alone."""
    assert flag_names("`clusters` given; got clusters=None, sort_by=x, by=y.") == \
        "--cluster-by given; got --cluster-by None, sort_by=x, --by y."


def test_one_table_names_every_option():
    """The API's names, the core's and the flags come from one table (kpass.reports.options)."""
    from kpass.cli.main import PARAMETER_FLAGS
    from kpass.reports.options import PARAMETERS, api_names

    assert PARAMETER_FLAGS == {parameter.api: parameter.flag for parameter in PARAMETERS}
    assert len({parameter.api for parameter in PARAMETERS}) == len(PARAMETERS)
    assert api_names("`method` 'clustered-t' needs `clusters`; got clusters=None.") == \
        "`method` 'clustered-t' needs `cluster_by`; got cluster_by=None."
    flags = _flags_of("report") | _flags_of("compare")
    for parameter in PARAMETERS:  # every flag of the table is a real flag of report or compare
        assert parameter.flag in flags, parameter


def _flags_of(command: str) -> set[str]:
    subcommands = next(action for action in build_parser()._actions if action.dest == "command")
    return {option for action in subcommands.choices[command]._actions for option in action.option_strings}


#: Every command that takes the interval flags, with the arguments it requires.
#: compare is paired (the Python API's compute_comparison); the others check as compute_report.
INTERVAL_COMMANDS = {
    "report": (), "compare": ("-b", "base"), "budget": (), "decompose": ("--baseline", "base", "--model", "rl"),
    "leaderboard": (), "crossover": ("--baseline", "base", "--model", "rl"), "frontier": (),
}

#: A bad option as flags, and as the Python API's keyword arguments.
BAD_OPTIONS = [
    (("--confidence", "2"), {"confidence_level": 2.0}),
    (("--confidence", "nan"), {"confidence_level": float("nan")}),
    (("--seed", "-1"), {"rng": -1}),
    (("--n-resamples", "1"), {"n_resamples": 1}),
    (("--n-resamples", str(10**8)), {"n_resamples": 10**8}),
    (("--method", "magic"), {"method": "magic"}),
    (("--method", "clustered-t"), {"method": "clustered-t"}),
    (("--method", "t", "--cluster-by", "cluster"), {"method": "t", "cluster_by": "cluster"}),
]


def _cases():
    for command in INTERVAL_COMMANDS:
        for flags, options in BAD_OPTIONS:
            if "--method" in flags and command in ("crossover", "decompose"):
                continue  # crossover has no --method; decompose's is a choice of its own bootstrap
            yield pytest.param(command, flags, options, id=f"{command} {' '.join(flags)}")


@pytest.mark.parametrize("command, flags, options", list(_cases()))
def test_every_command_says_the_one_check_of_an_option(run_cli, tmp_path, table, command, flags, options):
    """One check per option, the core's: every command prints the message the Python API raises,
    with flags for parameter names, before any file is read."""
    assert {flag for flag in flags if flag.startswith("--")} <= _flags_of(command)
    with pytest.raises(ValueError) as api:
        if command == "compare":
            pair = kpass.SampleTable.from_records(make_records("base") + make_records("rl"), source="t.jsonl")
            kpass.compute_comparison(pair, "pass@1", baseline="base", **options)
        else:
            kpass.compute_report(table, "pass@1", **options)
    missing = tmp_path / "never-read.jsonl"
    code, out, err = run_cli(command, missing, *INTERVAL_COMMANDS[command], *flags)
    assert (code, out) == (2, "")
    assert err.strip() == f"kpass {command}: error: {flag_names(str(api.value))}"
    assert "`" not in err and "clusters" not in err
