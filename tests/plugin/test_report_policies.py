"""Report and comparison policies fixed after the review: one model per group, null clusters in
compare, one set of defaults (seed 0, 10,000 resamples, the core's methods) on every path, the
reader's notes carried into every output, and k larger than every n."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import kpass
from kpass import metrics as core

from .conftest import make_records

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "sample_tables" / "two_models.jsonl"


@pytest.fixture(scope="module")
def pm():
    return kpass.make_plugin_manager(load_entry_points=False)


@pytest.fixture(scope="module")
def example(pm):
    return kpass.read_samples(EXAMPLE, plugin_manager=pm)


def two_models(n_problems=6, n=4, **extra):
    return (make_records(model="a", n_problems=n_problems, n=n, **extra)
            + make_records(model="b", n_problems=n_problems, n=n, correct=lambda j, s: s < 3, **extra))


# ------------------------------------------------------------------------------------------
# C1: a group may hold one model only


@pytest.mark.parametrize("by", [("task",), ()])
def test_grouping_that_pools_models_is_refused(example, pm, by):
    with pytest.raises(kpass.UsageError, match=r"problems of 2 models \('base', 'tuned'\) into one group.*"
                                               r"Include model in --by \(e\.g\. --by model"):
        kpass.compute_report(example, "pass@1", by=by, plugin_manager=pm, rng=0)
    # one model: the same grouping is fine and pools nothing
    base = kpass.SampleTable.from_records([r for r in example.to_records() if r["model"] == "base"], source="base")
    report = kpass.compute_report(base, "pass@1", by=by, plugin_manager=pm, method="t", rng=0)
    assert sum(row.n_problems for row in report.rows) == base.problem_index.n_problems


def test_grouping_that_pools_models_exits_2_in_report_and_budget(run_cli):
    code, out, err = run_cli("report", EXAMPLE, "--by", "task")
    assert code == 2 and out == "" and "Include model in --by (e.g. --by model,task)" in err
    code, out, err = run_cli("budget", EXAMPLE, "--by", "task")  # the same check, shared
    assert code == 2 and out == "" and "Include model in --by (e.g. --by model,task)" in err


# ------------------------------------------------------------------------------------------
# C2: a null cluster is an error in compare as in report


def test_null_cluster_is_an_error_in_compare(run_cli, write_jsonl, pm):
    records = two_models(cluster=lambda j, s: None if j == 2 else f"c{j % 3}")
    path = write_jsonl(records)
    for command in (("report",), ("compare", "-b", "a")):
        code, _, err = run_cli(*command, path, "--cluster-by", "cluster")
        assert code == 1, (command, err)
        assert "field 'cluster': --cluster-by 'cluster' is null for problem ('a', 't', 'p2')" in err
    table = kpass.SampleTable.from_records(records, source="mem")
    with pytest.raises(kpass.DataError, match="is null for problem"):
        kpass.compute_comparison(table, "pass@1", baseline="a", cluster_by="cluster", plugin_manager=pm, rng=0)


# ------------------------------------------------------------------------------------------
# C4d: the Python API reproduces the CLI; one set of defaults


def test_the_cli_seeds_and_the_python_api_draws_one_seed_per_call(run_cli, example, pm):
    from kpass.reports.report import DEFAULT_N_RESAMPLES, DEFAULT_SEED

    assert (DEFAULT_SEED, DEFAULT_N_RESAMPLES) == (0, 10_000)
    code, out, err = run_cli("report", EXAMPLE, "-m", "pass@1", "-f", "json")
    assert code == 0, err
    report = kpass.compute_report(example, "pass@1", plugin_manager=pm, rng=DEFAULT_SEED)  # as --seed 0
    assert json.loads(out)["rows"] == [row.as_dict() for row in report.rows]
    assert report.rows[0].interval.details["n_resamples"] == 10_000
    assert report.rows[0].interval.details["seed"] == 0
    code, out, err = run_cli("compare", EXAMPLE, "-b", "base", "-m", "pass@1", "-f", "json")
    assert code == 0, err
    comparison = kpass.compute_comparison(example, "pass@1", baseline="base", plugin_manager=pm, rng=DEFAULT_SEED)
    assert json.loads(out)["rows"] == [row.as_dict() for row in comparison.rows]
    assert {row.result.method for row in comparison.rows} == {kpass.metrics.DEFAULT_PAIRED_METHOD}
    assert [row.method for row in comparison.rows] == [row.result.rule for row in comparison.rows]  # the rule shown
    # no rng: as the core (SciPy SPEC 7), fresh entropy, drawn once for the whole call and recorded in
    # every row, so the call can be repeated
    for compute, options, result in ((kpass.compute_report, {}, "interval"),
                                     (kpass.compute_comparison, {"baseline": "base"}, "result")):
        fresh = compute(example, "pass@1,8", plugin_manager=pm, method="bootstrap", n_resamples=200, **options)
        (seed,) = {getattr(row, result).details["seed"] for row in fresh.rows}
        assert isinstance(seed, int) and seed != DEFAULT_SEED
        again = compute(example, "pass@1,8", plugin_manager=pm, method="bootstrap", n_resamples=200, rng=seed,
                        **options)
        assert [row.as_dict() for row in again.rows] == [row.as_dict() for row in fresh.rows]


def test_every_interval_option_is_built_and_checked_in_one_place():
    from kpass.reports.report import interval_options

    options = interval_options()
    assert options == {"method": core.DEFAULT_INTERVAL_METHOD, "confidence_level": 0.95, "n_resamples": 10_000,
                       "rng": None}
    assert interval_options(paired=True)["method"] == kpass.metrics.DEFAULT_PAIRED_METHOD
    # the Python API names its parameters (the CLI says the flags: test_exit_codes.py)
    for bad, message in [({"method": "magic"}, "`method` must be one of .*'magic'"),
                         ({"method": "mover"}, "`method` 'mover'"),
                         ({"method": "clustered-t"}, "needs `cluster_by`"),
                         ({"method": "t", "clustered": True}, "ignores `cluster_by`"),
                         ({"confidence_level": 1.5}, "`confidence_level`"), ({"n_resamples": 1}, "`n_resamples`"),
                         ({"rng": -1}, "`rng`")]:
        with pytest.raises(kpass.UsageError, match=message):
            interval_options(**bad)


def test_leaderboard_pairs_use_the_options_of_compare(example, pm):
    from kpass.reports.leaderboard import build_leaderboard, rank_intervals

    board = build_leaderboard(example, "pass@1", sort="arith/pass@1", curves=False, plugin_manager=pm, rng=0)
    (pair,) = board.data["comparisons"]
    comparison = kpass.compute_comparison(example, "pass@1", baseline="base", plugin_manager=pm, rng=0)
    row = next(r for r in comparison.rows if r.task == "arith")
    sign = 1 if pair["model_a"] == "tuned" else -1
    assert sign * pair["difference"] == pytest.approx(row.estimate, abs=1e-12)
    assert pair["method"] == row.method and board.data["n_resamples"] == 10_000 and board.data["seed"] == 0
    values = np.random.default_rng(5).random((3, 12))
    first = rank_intervals(values, n_resamples=300)  # fresh entropy, recorded
    again = rank_intervals(values, n_resamples=300, rng=first.seed)
    assert isinstance(first.seed, int) and np.array_equal(first.rank_counts, again.rank_counts)
    assert rank_intervals(values, n_resamples=300, rng=5).seed == 5


# ------------------------------------------------------------------------------------------
# C7c: a reader's notes reach every output


def test_table_notes_are_kept_by_concat_and_copied_into_reports(pm):
    a = kpass.SampleTable.from_records(make_records(model="a"), source="a.eval",
                                       notes=["a.eval: 2 unscored epochs left out"])
    b = kpass.SampleTable.from_records(make_records(model="b", correct=lambda j, s: s < 2), source="b.eval",
                                       notes=["b.eval: task x skipped", "a.eval: 2 unscored epochs left out"])
    assert a.notes == ("a.eval: 2 unscored epochs left out",)
    both = kpass.SampleTable.concat([a, b])
    assert both.notes == ("a.eval: 2 unscored epochs left out", "b.eval: task x skipped")
    report = kpass.compute_report(both, "pass@1", plugin_manager=pm, method="t", rng=0)
    expected = [kpass.Note("reader", ("a.eval",), "2 unscored epochs left out"),
                kpass.Note("reader", ("b.eval",), "task x skipped")]
    assert report.notes[:2] == expected
    assert json.loads(kpass.render.formatting.format_report(report, "json"))["notes"][:2] == [
        note.as_dict() for note in expected]
    assert "[reader] b.eval: task x skipped (docs/notes.md#reader)" in kpass.render.formatting.format_report(report, "table")
    comparison = kpass.compute_comparison(both, "pass@1", baseline="a", plugin_manager=pm, method="t", rng=0)
    assert comparison.notes[:2] == expected
    with pytest.raises(TypeError, match="`notes` must be an iterable of strings"):
        kpass.SampleTable.from_records(make_records(), source="x", notes="one string")


# ------------------------------------------------------------------------------------------
# C9: k larger than every n is an error; larger than some n, an exclusion


def test_k_above_every_n_is_a_data_error_naming_the_largest_n(run_cli, write_jsonl, pm):
    path = write_jsonl(two_models(n=4))
    code, out, err = run_cli("report", path, "-m", "pass@1", "pass@64")
    assert code == 1 and out == ""
    assert (f"{path}, field 'sample_index': pass@64 needs 64 samples per problem, but no problem has more than 4 "
            "(the largest n), so every problem would be excluded from it. Lower k to at most 4 (e.g. pass@4)") in err
    code, _, err = run_cli("compare", path, "-b", "a", "-m", "pass^8")
    assert code == 1 and "pass^8 needs 8 samples per problem" in err and "Lower k to at most 4" in err
    # the baseline limits a comparison: k above every n of the baseline is the same error
    records = make_records(model="a", n=4) + make_records(model="b", n=8)
    table = kpass.SampleTable.from_records(records, source="mem")
    with pytest.raises(kpass.DataError, match=r"no problem of the baseline 'a' has more than 4 \(the largest n there"):
        kpass.compute_comparison(table, "pass@8", baseline="a", plugin_manager=pm, rng=0)
    # above some n only: those problems are excluded and listed, as before
    report = kpass.compute_report(table, "pass@8", plugin_manager=pm, method="t", rng=0)
    assert [row.estimate is None for row in report.rows] == [True, False]
    assert report.exclusions[0].reason == "4 samples, pass@8 needs 8"


# ------------------------------------------------------------------------------------------
# Section 3: labels are built once per group, not per (group, metric)


def test_problem_labels_are_built_once_per_group(monkeypatch, example, pm):
    from kpass.reports import report as report_module

    calls = []
    original = report_module._problem_labels
    monkeypatch.setattr(report_module, "_problem_labels", lambda *a: calls.append(a) or original(*a))
    report = kpass.compute_report(example, "pass@1,2,4,8 pass^2", plugin_manager=pm, method="t", rng=0)
    assert len(report.rows) == 4 * 5 and len(calls) == 4  # 4 groups, 5 metrics
    assert report.exclusions[0].problem_ids == ("logic-03", "logic-11", "logic-19")
