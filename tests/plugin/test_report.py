"""compute_report / compute_comparison give exactly the core's numbers on the same counts, and
list every problem they leave out."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kpass
from kpass import metrics as core

from .conftest import make_records


@pytest.fixture(scope="module")
def pm():
    return kpass.make_plugin_manager(load_entry_points=False)


def random_records(seed, models=("a", "b"), tasks=("t1", "t2"), n_problems=12, n_range=(8, 17), answers=True):
    rng = np.random.default_rng(seed)
    records = []
    for task in tasks:
        p = rng.beta(0.7, 0.7, size=n_problems)
        n = rng.integers(*n_range, size=n_problems)
        for model_index, model in enumerate(models):
            for j in range(n_problems):
                for s in range(int(n[j])):
                    correct = bool(rng.random() < min(1.0, p[j] + 0.1 * model_index))
                    answer = "gold" if correct else (None if rng.random() < 0.1 else f"w{rng.integers(3)}")
                    record = {"model": model, "task": task, "problem_id": f"q{j}", "sample_index": s,
                              # a correct sample has finished (a sample table rejects the contradiction)
                              "correct": correct, "finished": bool(rng.random() < 0.9) or correct,
                              "cluster": f"c{j % 4}",
                              "cot_verdicts": [bool(rng.random() < 0.7) for _ in range(3)] if correct else None}
                    if answers:
                        record["answer"] = answer
                    records.append(record)
    rng.shuffle(records)  # row order never matters
    return records


def per_problem(records, model, task):
    """(n, c, f, answers per problem, verdicts per problem), ordered by problem id as first seen."""
    mine = [r for r in records if r["model"] == model and r["task"] == task]
    # problems in the table's order (first appearance of the id in the file), samples by sample_index
    first_seen = list(dict.fromkeys(r["problem_id"] for r in records))
    present = {r["problem_id"] for r in mine}
    out = {pid: {"n": 0, "c": 0, "f": 0, "answers": [], "correct": [], "verdicts": [], "finished": []}
           for pid in first_seen if pid in present}
    for r in sorted(mine, key=lambda r: r["sample_index"]):
        entry = out[r["problem_id"]]
        entry["n"] += 1
        entry["c"] += r["correct"]
        entry["f"] += r["finished"]
        entry["answers"].append(r.get("answer"))
        entry["correct"].append(r["correct"])
        entry["finished"].append(r["finished"])
        entry["verdicts"].append(r["cot_verdicts"] or [])
    return out


SPECS = ("pass@1,8,12 pass^2 g-pass@8_0.5 mg-pass@8 cons@5[ties=strict] maj@4 maj@4[cut=vote] "
         "cot-pass@4[rule=majority] fin@2")


def expected_values(spec, problems):
    n = np.array([p["n"] for p in problems.values()])
    c = np.array([p["c"] for p in problems.values()])
    f = np.array([p["f"] for p in problems.values()])
    keep = n >= spec.k
    n, c, f = n[keep], c[keep], f[keep]
    chosen = [p for p, k in zip(problems.values(), keep) if k]
    family = spec.family
    if family == "pass@k":
        return core.pass_at_k(n, c, spec.k)
    if family == "pass^k":
        return core.pass_hat_k(n, c, spec.k)
    if family == "G-Pass@k":
        return core.g_pass_at_k(n, c, spec.k, tau=spec.params["tau"])
    if family == "mG-Pass@k":
        return core.mg_pass_at_k(n, c, spec.k)
    if family == "fin@k":
        return core.fin_at_k(n, f, spec.k)
    if family == "cons@k":
        # the gold class is the correct samples; the core's own answer-class builder on the same answers;
        # the answer of an unfinished sample abstains (no answer) unless cut=vote
        vote = spec.option("cut") == "vote"
        answers = [["GOLD" if ok else (a if done or vote else None)
                    for a, ok, done in zip(p["answers"], p["correct"], p["finished"])] for p in chosen]
        counts, invalid = core.class_counts_from_answers(answers, ["GOLD"] * len(chosen))
        return core.cons_at_k(counts, spec.k, n_invalid=invalid, ties=spec.option("ties"), invalid=spec.option("invalid"))
    if family == "CoT-Pass@k":
        d = []
        for p in chosen:  # literal loop over samples: majority of yes over no, ties veto
            d.append(sum(ok and sum(v) > len(v) - sum(v) for ok, v in zip(p["correct"], p["verdicts"])))
        return core.cot_pass_at_k(n, np.array(d), spec.k)
    raise AssertionError(family)


@pytest.mark.filterwarnings("ignore::kpass.metrics.DegenerateIntervalWarning")
def test_report_equals_the_core_on_the_same_counts(pm):
    records = random_records(0)
    table = kpass.SampleTable.from_records(records, source="mem")
    specs = kpass.parse_metric_specs(SPECS, plugin_manager=pm)
    report = kpass.compute_report(table, specs, plugin_manager=pm, rng=1, n_resamples=500)
    assert len(report.rows) == 2 * 2 * len(specs)
    for model in ("a", "b"):
        for task in ("t1", "t2"):
            problems = per_problem(records, model, task)
            for spec in specs:
                values = expected_values(spec, problems)
                row = report.row(spec.name, model=model, task=task)
                assert row.estimate == pytest.approx(values.mean(), abs=1e-12), spec.name
                result = core.mean_ci(values, rng=1, n_resamples=500)
                assert (row.low, row.high, row.standard_error) == pytest.approx(
                    (result.low, result.high, result.standard_error), abs=1e-12)
                assert row.method == result.rule and result.method == core.DEFAULT_INTERVAL_METHOD  # the column names the rule
                assert row.n_problems == len(values)
                n = np.array([p["n"] for p in problems.values()])
                assert row.n_samples == n[n >= spec.k].sum()
                assert row.n_excluded == int((n < spec.k).sum())
    # every excluded problem is listed with its reason, and nothing else is
    listed = {(e.model, e.task, e.metric, pid) for e in report.exclusions for pid in e.problem_ids}
    expected = set()
    for model in ("a", "b"):
        for task in ("t1", "t2"):
            for pid, p in per_problem(records, model, task).items():
                for spec in specs:
                    if p["n"] < spec.k:
                        expected.add((model, task, spec.name, pid))
    assert listed == expected and expected


def test_methods_clusters_and_confidence_pass_through(pm):
    records = random_records(1, models=("a",), tasks=("t",), n_problems=16)
    table = kpass.SampleTable.from_records(records, source="mem")
    problems = per_problem(records, "a", "t")
    n = np.array([p["n"] for p in problems.values()])
    c = np.array([p["c"] for p in problems.values()])
    clusters = [f"c{int(pid[1:]) % 4}" for pid in problems]
    values = core.pass_at_k(n, c, 1)
    row = kpass.compute_report(table, "pass@1", method="t", confidence_level=0.9, plugin_manager=pm, rng=0).rows[0]
    expected = core.mean_ci(values, method="t", confidence_level=0.9)
    assert (row.estimate, row.low, row.high, row.method) == pytest.approx(
        (expected.estimate, expected.low, expected.high, "t"))
    row = kpass.compute_report(table, "pass@1", method="clustered-t", cluster_by="cluster", plugin_manager=pm, rng=0).rows[0]
    expected = core.mean_ci(values, clusters=clusters, method="clustered-t")
    assert row.standard_error == pytest.approx(expected.standard_error, abs=1e-15)
    assert row.n_clusters == 4 and row.method == "clustered-t"


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 6))
def test_pass_at_k_matches_core_for_any_table(seed, k):
    pm = kpass.make_plugin_manager(load_entry_points=False)
    records = random_records(seed, models=("m",), tasks=("t",), n_problems=5, n_range=(1, 8), answers=False)
    table = kpass.SampleTable.from_records(records, source="mem")
    problems = per_problem(records, "m", "t")
    n = np.array([p["n"] for p in problems.values()])
    c = np.array([p["c"] for p in problems.values()])
    keep = n >= k
    if keep.sum() == 0:  # k above every n: an error naming the largest n, not an empty row
        with pytest.raises(kpass.DataError, match=f"the largest n.*Lower k to at most {n.max()}"):
            kpass.compute_report(table, f"pass@{k}", plugin_manager=pm, method="t", rng=0)
    else:
        (row,) = kpass.compute_report(table, f"pass@{k}", plugin_manager=pm, method="t", rng=0).rows
        assert row.estimate == pytest.approx(core.pass_at_k(n[keep], c[keep], k).mean(), abs=1e-12)
        assert row.n_problems + row.n_excluded == len(n)


def test_single_problem_gives_an_estimate_without_interval(pm):
    table = kpass.SampleTable.from_records(make_records(n_problems=1, n=4), source="mem")
    (row,) = kpass.compute_report(table, "pass@1", plugin_manager=pm, rng=0).rows
    assert row.estimate == 0.5 and row.low is None and row.note.startswith("no interval")


def test_by_other_fields_and_no_grouping(pm):
    records = random_records(2, answers=False)
    table = kpass.SampleTable.from_records(records, source="mem")
    report = kpass.compute_report(table, "pass@1", by=("model",), plugin_manager=pm, method="t", rng=0)
    assert [row.group for row in report.rows] == [(("model", "a"),), (("model", "b"),)]
    assert report.rows[0].n_problems == 24  # both tasks' problems, told apart by task
    # by=() would pool the two models' problems (48 "problems", two models averaged): refused
    with pytest.raises(kpass.UsageError, match="Include model in --by"):
        kpass.compute_report(table, "pass@1", by=(), plugin_manager=pm, method="t", rng=0)
    one_model = kpass.SampleTable.from_records([r for r in records if r["model"] == "a"], source="mem")
    report = kpass.compute_report(one_model, "pass@1", by=(), plugin_manager=pm, method="t", rng=0)
    assert report.rows[0].n_problems == 24 and report.rows[0].group == ()
    with pytest.raises(kpass.DataError, match="--by names the field 'nope'"):
        kpass.compute_report(table, "pass@1", by=("nope",), plugin_manager=pm, rng=0)


def test_budget_specs_use_the_core_budget_counts(pm):
    # sample 3 never finished, so it is wrong (correct implies finished)
    records = make_records(n_problems=3, n=4, correct=lambda j, s: (j + s) % 2 == 0 and s != 3,
                           finished=lambda j, s: s != 3, output_tokens=lambda j, s: 100 * (s + 1),
                           answer_token=lambda j, s: None if s == 3 else 100 * (s + 1))
    table = kpass.SampleTable.from_records(records, source="mem")
    report = kpass.compute_report(table, "fin@1(B=250) pass@1(B=250)", plugin_manager=pm, method="t", rng=0)
    fin = report.row("fin@1(B=250)")
    assert fin.estimate == pytest.approx(0.5)  # samples 0 and 1 answer within 250 tokens
    passed = report.row("pass@1(B=250)")
    c = np.array([sum(r["correct"] for r in records if r["problem_id"] == f"p{j}" and r["sample_index"] < 2)
                  for j in range(3)])
    assert passed.estimate == pytest.approx(core.pass_at_k([4, 4, 4], c, 1).mean())


# ------------------------------------------------------------------------------------------
# comparisons


def test_comparison_equals_paired_difference(pm):
    records = random_records(4, n_range=(8, 9))
    table = kpass.SampleTable.from_records(records, source="mem")
    comparison = kpass.compute_comparison(table, "pass@1,4 cons@3", baseline="a", plugin_manager=pm, rng=3,
                                          n_resamples=400)
    assert len(comparison.rows) == 2 * 3
    specs = {s.name: s for s in kpass.parse_metric_specs("pass@1,4 cons@3", plugin_manager=pm)}
    for row in comparison.rows:
        spec = specs[row.metric]
        a = expected_values(spec, per_problem(records, "b", row.task))
        b = expected_values(spec, per_problem(records, "a", row.task))
        expected = core.paired_difference(a, b, rng=3, n_resamples=400)
        assert row.model == "b" and row.baseline == "a"
        assert (row.estimate, row.low, row.high, row.p_value, row.correlation) == pytest.approx(
            (expected.estimate, expected.low, expected.high, expected.p_value, expected.correlation), abs=1e-12)
        assert row.estimate_model == pytest.approx(a.mean()) and row.estimate_baseline == pytest.approx(b.mean())
    assert comparison.exclusions == []


def test_comparison_needs_the_same_problems_unless_intersection(pm):
    records = [r for r in make_records(model="a", n_problems=5) + make_records(model="b", n_problems=5)
               if not (r["model"] == "b" and r["problem_id"] == "p4")]
    table = kpass.SampleTable.from_records(records, source="mem")
    with pytest.raises(kpass.DataError, match=r"1 only under 'a'.*e.g. t/p4.*--intersect "):
        kpass.compute_comparison(table, "pass@1", baseline="b", plugin_manager=pm, rng=0)
    comparison = kpass.compute_comparison(table, "pass@1", baseline="b", intersect=True, plugin_manager=pm, method="t", rng=0)
    (row,) = comparison.rows
    assert row.n_problems == 4 and row.n_excluded == 1
    (exclusion,) = comparison.exclusions
    assert exclusion.problem_ids == ("p4",) and exclusion.reason == "only under 'a', not under 'b'"
    with pytest.raises(ValueError, match="baseline model 'zzz' is not in the table; models: a, b"):
        kpass.compute_comparison(table, "pass@1", baseline="zzz", plugin_manager=pm, rng=0)


def test_comparison_excludes_problems_short_in_either_model(pm):
    records = [r for r in make_records(model="a", n_problems=5, n=8) + make_records(model="b", n_problems=5, n=8)
               if not (r["model"] == "a" and r["problem_id"] == "p2" and r["sample_index"] >= 3)]
    table = kpass.SampleTable.from_records(records, source="mem")
    comparison = kpass.compute_comparison(table, "pass@4", baseline="a", plugin_manager=pm, method="t", rng=0)
    (row,) = comparison.rows
    assert row.n_problems == 4 and row.n_excluded == 1
    (exclusion,) = comparison.exclusions
    assert exclusion.problem_ids == ("p2",) and exclusion.reason == "a: 3 samples, pass@4 needs 4"


def test_report_serialises_to_json(pm):
    table = kpass.SampleTable.from_records(random_records(5, answers=False), source="mem")
    report = kpass.compute_report(table, "pass@1,16", plugin_manager=pm, method="t", rng=0)
    data = json.loads(json.dumps(report.as_dict(), allow_nan=False))
    assert data["metrics"] == ["pass@1", "pass@16"] and data["by"] == ["model", "task"]
    assert sum(row["n_excluded"] for row in data["rows"]) == sum(e["n_problems"] for e in data["exclusions"])
