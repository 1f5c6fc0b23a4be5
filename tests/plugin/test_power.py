"""``kpass power``: the core's Miller (2024) formulas on explicit inputs or on a pilot table."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from scipy import stats

import kpass
from kpass import metrics as core
from kpass.reports.power import power_inputs_from_table

from .conftest import make_records

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "sample_tables" / "two_models.jsonl"


def test_explicit_inputs_equal_the_core(run_cli):
    code, out, err = run_cli("power", "--between-variance", "0.02", "--within-variance-a", "0.2",
                             "--within-variance-b", "0.2", "--samples-a", "4", "--samples-b", "4", "--effect", "0.03",
                             "-f", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["required_problems"] == core.required_problems(
        0.03, between_variance=0.02, within_variance_a=0.2, within_variance_b=0.2, samples_per_problem_a=4,
        samples_per_problem_b=4) == 1047  # the core's documented example (Miller 2024 formula)
    code, out, _ = run_cli("power", "--between-variance", "0.02", "--problems", "500", "--confidence", "0.99",
                           "--power", "0.9", "-f", "json")
    assert json.loads(out)["minimum_detectable_effect"] == pytest.approx(core.minimum_detectable_effect(
        500, between_variance=0.02, confidence_level=0.99, power=0.9), rel=1e-15)
    # Miller's formula with alpha = 0.01: z_{1 - alpha/2} + z_{power}
    assert json.loads(out)["minimum_detectable_effect"] == pytest.approx(
        (stats.norm.ppf(0.995) + stats.norm.ppf(0.9)) * np.sqrt(0.02 / 500), rel=1e-12)
    assert json.loads(out)["confidence_level"] == 0.99 and "significance_level" not in json.loads(out)


@pytest.mark.parametrize("effect", [["--effect", "0.03"], ["--problems", "500"]])
def test_the_old_alpha_flag_still_means_the_significance_level(run_cli, effect):
    inputs = ["power", "--between-variance", "0.02", "--within-variance-a", "0.2", *effect, "-f", "json"]
    code, new, err = run_cli(*inputs, "--confidence", "0.99")
    assert code == 0 and err == "", err
    code, old, err = run_cli(*inputs, "--alpha", "0.01")
    assert code == 0 and old == new  # the same numbers, never a silently different level
    assert err == "kpass: --alpha is deprecated and will be removed; use --confidence LEVEL (LEVEL = 1 - alpha)\n"
    assert "--alpha" not in run_cli("power", "--help")[1]
    code, _, err = run_cli(*inputs, "--alpha", "1.5")
    assert code == 2 and "--alpha" in err


def test_pilot_table_equals_power_inputs_from_pilot(run_cli):
    pm = kpass.make_plugin_manager(load_entry_points=False)
    table = kpass.read_samples(EXAMPLE, plugin_manager=pm)
    inputs, notes = power_inputs_from_table(table, model="tuned", baseline="base")
    # the example has two tasks: pooling them is said, never silent
    assert notes == [kpass.Note("power", ("arith", "logic"), "the pilot pools the problems of 2 tasks as one "
                                "benchmark; their variances may differ, so to plan a benchmark of one task give "
                                "--task (Python: task=...)")]
    records = [json.loads(line) for line in EXAMPLE.read_text().splitlines()]

    def counts(model):
        out = {}
        for r in records:
            if r["model"] == model:
                n, c = out.get((r["task"], r["problem_id"]), (0, 0))
                out[(r["task"], r["problem_id"])] = (n + 1, c + r["correct"])
        return out

    a, b = counts("tuned"), counts("base")
    keys = sorted(a)
    expected = core.power_inputs_from_pilot(
        n_samples_a=[a[k][0] for k in keys], n_correct_a=[a[k][1] for k in keys],
        n_samples_b=[b[k][0] for k in keys], n_correct_b=[b[k][1] for k in keys])
    assert inputs.between_variance == pytest.approx(expected.between_variance, rel=1e-12)
    assert inputs.within_variance_a == pytest.approx(expected.within_variance_a, rel=1e-12)
    assert inputs.samples_per_problem_b == pytest.approx(expected.samples_per_problem_b)
    code, out, err = run_cli("power", EXAMPLE, "--baseline", "base", "--effect", "0.05", "-f", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["pilot_model"] == "tuned" and data["pilot_problems"] == 48
    assert data["required_problems"] == core.required_problems(0.05, **expected.power_kwargs())
    code, out, _ = run_cli("power", EXAMPLE, "--baseline", "base", "--effect", "0.05", "--samples-a", "64",
                           "--samples-b", "64", "-f", "json")
    planned = dict(expected.power_kwargs(), samples_per_problem_a=64, samples_per_problem_b=64)
    assert json.loads(out)["required_problems"] == core.required_problems(0.05, **planned)


def test_power_errors(run_cli, write_jsonl):
    code, _, err = run_cli("power", "--effect", "0.1")
    assert code == 2 and "give a pilot file, or --between-variance" in err
    code, _, err = run_cli("power", "--between-variance", "0.02", "--effect", "0.1", "--problems", "3")
    assert code == 2 and "not allowed with argument" in err
    one_sample = write_jsonl(make_records(model="a", n=1) + make_records(model="b", n=1))
    code, _, err = run_cli("power", one_sample, "--baseline", "a", "--effect", "0.1")
    assert code == 1 and "at least 2 samples per problem" in err and "line 5, field 'sample_index'" in err and "model 'b'" in err
    three = write_jsonl(make_records(model="a") + make_records(model="b") + make_records(model="c"), name="three.jsonl")
    code, _, err = run_cli("power", three, "--effect", "0.1")
    assert code == 2 and "choose two with --model and --baseline" in err
    code, out, _ = run_cli("power", three, "--model", "c", "--baseline", "b", "--problems", "100")
    assert code == 0 and "minimum_detectable_effect" in out
    assert np.isfinite(float(out.split("minimum_detectable_effect")[1].split()[0]))
