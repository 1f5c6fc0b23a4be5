"""Options are checked once, by the core; the Python API names its parameters, the CLI its flags."""

from __future__ import annotations

import pytest

import kpass
from kpass.cli.main import flag_names

from .conftest import make_records


@pytest.fixture
def table():
    return kpass.SampleTable.from_records(make_records(n_problems=6, n=4), source="t.jsonl")


@pytest.mark.parametrize("options, parameter", [
    ({"confidence_level": 2}, "`confidence_level`"),
    ({"n_resamples": 1}, "`n_resamples`"),
    ({"seed": -1}, "`seed`"),
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
        kpass.compute_report(table, "pass@1", confidence_level=2)
    with pytest.raises(ValueError) as core:
        kpass.mean_ci([0.1, 0.5, 0.9], confidence_level=2)
    assert str(host.value) == str(core.value)


def test_the_cli_says_the_flag():
    assert flag_names("`confidence_level` must be in the open interval (0, 1); got 2.") == \
        "--confidence must be in the open interval (0, 1); got 2."
    assert flag_names("`method` 'clustered-t' needs `cluster_by`; got cluster_by=None.") == \
        "--method 'clustered-t' needs --cluster-by; got --cluster-by None."


def test_a_core_option_error_reaches_the_user_as_a_flag(run_cli, write_jsonl):
    path = write_jsonl(make_records())
    code, out, err = run_cli("leaderboard", path, "--n-resamples", "1", "--no-curves")
    assert code == 2 and out == ""
    assert "--n-resamples must be an integer >= 2; got 1" in err, err
