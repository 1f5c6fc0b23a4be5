"""Exit codes after the review: options are checked before the data is read (exit 2), the data's
faults are data errors (exit 1), one validator per kind of argument, ASCII-only spec digits,
one ``--intersect`` flag, and a power pilot that says when it pools tasks."""

from __future__ import annotations

import argparse
import json
import pathlib

import pytest

import kpass

from .conftest import make_records

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "sample_tables" / "two_models.jsonl"


# ------------------------------------------------------------------------------------------
# --method is checked up front, against the core's public names


def test_method_is_checked_before_any_file_is_read(run_cli, tmp_path):
    missing = tmp_path / "missing.jsonl"  # never opened: the option is wrong whatever the data
    code, out, err = run_cli("report", missing, "--method", "magic")
    assert code == 2 and out == ""
    assert ("--method must be one of ['auto', 't', 'clustered-t', 'bootstrap', 'bca', 'studentized']; got 'magic'."
            in err), err
    code, _, err = run_cli("report", missing, "--method", "mover")
    assert code == 2 and "--method 'mover' combines the intervals of two models" in err
    code, _, err = run_cli("report", missing, "--method", "clustered-t")
    assert code == 2 and "--method 'clustered-t' needs --cluster-by (one label per problem); got --cluster-by None" in err
    code, _, err = run_cli("compare", missing, "-b", "x", "--method", "t", "--cluster-by", "cluster")
    assert code == 2 and "--method 't' ignores --cluster-by" in err
    code, _, err = run_cli("budget", missing, "--method", "magic")
    assert code == 2 and "--method must be one of" in err
    code, _, err = run_cli("compare", EXAMPLE, "-b", "base", "--method", "mover")  # paired: mover is valid
    assert code == 0, err


def test_python_api_raises_usage_errors_that_are_value_errors():
    pm = kpass.make_plugin_manager(load_entry_points=False)
    table = kpass.SampleTable.from_records(make_records(model="a") + make_records(model="b"), source="mem")
    for call in (lambda: kpass.compute_report(table, "pass@1", method="magic", plugin_manager=pm, rng=0),
                 lambda: kpass.compute_comparison(table, "pass@1", baseline="zzz", plugin_manager=pm, rng=0),
                 lambda: kpass.compute_comparison(table, "pass@1", baseline="a", models=["q"], plugin_manager=pm, rng=0)):
        with pytest.raises(kpass.UsageError) as error:
            call()
        assert isinstance(error.value, ValueError)
    assert kpass.cli.UsageError is kpass.UsageError


# ------------------------------------------------------------------------------------------
# data faults exit 1


def test_core_errors_caused_by_the_data_are_data_errors(run_cli, write_jsonl):
    # one cluster: no clustered interval for the budget curve; before, a usage error (exit 2)
    path = write_jsonl(make_records(finished=True, cluster="only"))
    code, out, err = run_cli("budget", path, "--cluster-by", "cluster")
    assert code == 1 and out == "" and "single cluster" in err and "kpass: data error:" in err
    # a pilot whose every sample is right: the power formula cannot use it (the data's fault)
    def always(j, s):
        return True

    pilot = write_jsonl(make_records(model="a", correct=always) + make_records(model="b", correct=always),
                        name="pilot.jsonl")
    code, _, err = run_cli("power", pilot, "--baseline", "a", "--effect", "0.1")
    assert code == 1 and "the pilot gives inputs the power formula cannot use" in err
    code, _, err = run_cli("power", "--between-variance", "0", "--effect", "0.1")  # typed in: usage
    assert code == 2 and "variance of the per-problem difference is 0" in err


# ------------------------------------------------------------------------------------------
# spec digits


@pytest.mark.parametrize("spec", ["pass@²", "pass@1,²", "pass@٣", "fin@1(B=²)", "g-pass@4_0.٥"])
def test_spec_digits_are_ascii(run_cli, spec):
    code, out, err = run_cli("report", EXAMPLE, "-m", spec)
    assert code == 2 and out == ""
    assert f"invalid metric spec {spec!r}" in err and "valid metric specs:" in err
    assert "invalid literal" not in err


# ------------------------------------------------------------------------------------------
# one validator per kind of argument


def test_argument_types_are_shared_by_every_subcommand(run_cli):
    from kpass.cli import argtypes

    for command in (("report", EXAMPLE), ("budget", EXAMPLE), ("compare", EXAMPLE, "-b", "base")):
        code, _, err = run_cli(*command, "--confidence", "1.5")
        assert code == 2 and "--confidence must be in the open interval (0, 1); got 1.5." in err, command
        code, _, err = run_cli(*command, "--confidence", "high")
        assert code == 2 and "argument --confidence: expected a number; got 'high'" in err, command
        code, _, err = run_cli(*command, "--seed", "-3")
        assert code == 2 and "--seed must be a non-negative integer seed; got -3." in err, command
        code, _, err = run_cli(*command, "--n-resamples", "0")
        assert code == 2 and "--n-resamples must be an integer >= 2; got 0." in err, command
        code, _, err = run_cli(*command, "--n-resamples", "2.5")
        assert code == 2 and "argument --n-resamples: expected an integer; got '2.5'" in err, command
    assert argtypes.positive_int("+12") == 12 and argtypes.integer("-3") == -3 and argtypes.number("1e-1") == 0.1
    assert argtypes.budget_list("2048, 8k,as-run") == [2048, 8192, None]
    assert argtypes.k_list("1,4,16") == [1, 4, 16] and argtypes.fields(" model, ,task") == ("model", "task")
    assert argtypes.fraction("7/8") == argtypes.fraction("0.875")
    for function, text in [(argtypes.positive_int, "²"), (argtypes.positive_int, "0"), (argtypes.k_list, "1,²"),
                           (argtypes.budget_list, "²k"), (argtypes.budget_list, ""), (argtypes.probability, "1"),
                           (argtypes.positive_float, "inf"), (argtypes.fraction, "3/2"),
                           (argtypes.integer, "1.0"), (argtypes.integer, "9" * 31), (argtypes.number, "one")]:
        with pytest.raises(argparse.ArgumentTypeError):
            function(text)


# ------------------------------------------------------------------------------------------
# --intersect everywhere, --intersection kept as an alias


def test_one_intersect_flag_for_compare_and_decompose(run_cli, write_jsonl):
    records = [r for r in make_records(model="a", n_problems=5, finished=True, output_tokens=10)
               + make_records(model="b", n_problems=5, finished=True, output_tokens=10)
               if not (r["model"] == "b" and r["problem_id"] == "p4")]
    path = write_jsonl(records)
    code, _, err = run_cli("compare", path, "-b", "a", "--method", "t")
    assert code == 1 and "(use --intersect to compare the common ones" in err
    outputs = []
    for flag in ("--intersect", "--intersection"):
        code, out, err = run_cli("compare", path, "-b", "a", "--method", "t", flag, "-f", "json")
        assert code == 0, err
        outputs.append(json.loads(out)["rows"])
        code, _, err = run_cli("decompose", path, "--baseline", "a", "--model", "b", "--n-resamples", "20", flag)
        assert code == 0, err
    assert outputs[0] == outputs[1]


# ------------------------------------------------------------------------------------------
# C11: a power pilot that pools tasks says so


def test_power_pilot_pooling_tasks_is_said(run_cli):
    code, out, err = run_cli("power", EXAMPLE, "--baseline", "base", "--effect", "0.05")
    assert code == 0, err
    assert "\nnote: [power] arith; logic: the pilot pools the problems of 2 tasks as one benchmark" in out
    code, out, err = run_cli("power", EXAMPLE, "--baseline", "base", "--effect", "0.05", "--task", "arith",
                             "-f", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["pilot_problems"] == 24 and data["notes"] == []
