"""kpass metrics in lm-eval's registry and the patched stderr (kpass.adapters.lm_eval_metrics)."""

from __future__ import annotations

import logging
import math
from fractions import Fraction

import numpy as np
import pytest

import lm_eval.api.metrics as lm_metrics
import lm_eval.api.registry as lm_eval_registry
import lm_eval.evaluator_utils as evaluator_utils

import kpass
from kpass.adapters import lm_eval_metrics as m

# answers of four problems, eight samples each ("[invalid]": nothing extracted), gold first
PROBLEMS = [
    ("33", ["33", "32", "[invalid]", "33", "23", "23", "23", "33"], "addition"),
    ("22", ["22"] * 8, "subtraction"),
    ("75", ["74", "74", "76", "[invalid]", "74", "75", "74", "74"], "multiplication"),
    ("44", ["34"] * 8, "addition"),
]


def _items(metric: str, clustered: bool = False, **kwargs):
    items = []
    for gold, answers, topic in PROBLEMS:
        prediction = m.KSampleAnswers(answers, topic) if clustered else list(answers)
        out = m.kpass(references=[gold], predictions=[prediction], metrics=metric, **kwargs)
        items.append(out[metric])
    return items


def test_importing_registers_metrics_aggregation_and_filter():
    assert lm_eval_registry.get_metric("kpass") is m.kpass
    for name in m.KPASS_METRIC_NAMES:
        assert lm_eval_registry.get_metric_aggregation(name) is m.kpass_aggregation
        assert lm_eval_registry.is_higher_better(name) is True
    assert lm_eval_registry.get_aggregation("kpass") is m.kpass_aggregation
    assert lm_eval_registry.get_filter("kpass_cluster") is m.KpassClusterFilter
    # lm-eval's own metrics are still there (registered before ours)
    assert lm_eval_registry.get_metric("exact_match") is lm_metrics.exact_match_fn
    m._register()  # idempotent


def test_one_document_gives_one_record_per_canonical_metric():
    out = m.kpass(references=["33"], predictions=[PROBLEMS[0][1]], metrics="pass@1,8 maj@4 g-pass@8_0.5")
    assert list(out) == ["kpass_identical_samples", "pass@1", "pass@8", "cons@4", "G-Pass@8_0.5"]
    record = out["cons@4"]
    assert record["metric"] == "cons@4"
    samples = record["kpass_samples"]
    assert samples["correct"] == [True, False, False, True, False, False, False, True]
    assert samples["answers"] == ["33", "32", None, "33", "23", "23", "23", "33"]
    assert samples["gold"] == "33" and samples["cluster"] is None


def _specs_of(out):
    return [name for name in out if name != m.IDENTICAL_METRIC]


def test_named_functions_build_their_specs():
    predictions = [PROBLEMS[0][1]]
    assert list(m.kpass_pass_at_k(references=["33"], predictions=predictions, k=1))[0] == m.IDENTICAL_METRIC
    assert _specs_of(m.kpass_pass_at_k(references=["33"], predictions=predictions, k=[1, 8])) == ["pass@1", "pass@8"]
    assert _specs_of(m.kpass_pass_hat_k(references=["33"], predictions=predictions, k=2)) == ["pass^2"]
    assert _specs_of(m.kpass_cons_at_k(references=["33"], predictions=predictions, k=[4])) == ["cons@4"]
    assert _specs_of(m.kpass_g_pass_at_k(references=["33"], predictions=predictions, k=8, tau=[0.5, 1.0])) == [
        "G-Pass@8_0.5", "G-Pass@8_1.0"]
    assert _specs_of(m.kpass_mg_pass_at_k(references=["33"], predictions=predictions, k=8)) == ["mG-Pass@8"]
    assert _specs_of(m.kpass(references=["33"], predictions=predictions, k=[2])) == ["pass@2"]
    with pytest.raises(ValueError, match="`k` is required"):
        m.kpass_pass_at_k(references=["33"], predictions=predictions)


def test_verdicts_come_from_score_with_and_its_options():
    out = m.kpass(references=["Paris"], predictions=[["paris", "PARIS", "Rome"]], metrics="pass@1",
                  ignore_case=True)
    assert out["pass@1"]["kpass_samples"]["correct"] == [True, True, False]
    assert out["pass@1"]["kpass_samples"]["answers"] == ["Paris", "Paris", "Rome"]  # the gold class is one class
    strict = m.kpass(references=["Paris"], predictions=[["paris", "Paris"]], metrics="pass@1")
    assert strict["pass@1"]["kpass_samples"]["correct"] == [False, True]
    with pytest.raises(ValueError, match="`score_with` names no registered lm-eval metric"):
        m.kpass(references=["1"], predictions=[["1"]], metrics="pass@1", score_with="no_such_metric")


def test_aggregation_equals_the_core_on_the_same_counts():
    n = np.array([len(answers) for _, answers, _ in PROBLEMS])
    c = np.array([sum(a == gold for a in answers) for gold, answers, _ in PROBLEMS])
    assert m.kpass_aggregation(_items("pass@1")) == pytest.approx(np.mean(c / n), rel=1e-15)
    assert m.kpass_aggregation(_items("pass@4")) == pytest.approx(np.mean(kpass.pass_at_k(n, c, 4)), rel=1e-15)
    assert m.kpass_aggregation(_items("G-Pass@8_0.5")) == pytest.approx(
        np.mean(kpass.g_pass_at_k(n, c, 8, tau=Fraction(1, 2))), rel=1e-15)
    answers = [[None if a == "[invalid]" else a for a in row] for _, row, _ in PROBLEMS]
    counts, invalid = kpass.class_counts_from_answers(answers, [gold for gold, _, _ in PROBLEMS])
    assert m.kpass_aggregation(_items("cons@8")) == pytest.approx(
        np.mean(kpass.cons_at_k(counts, 8, n_invalid=invalid)), rel=1e-15)


def test_stderr_is_kpass_default_interval_and_clusters():
    # issue #16 changed this contract: lm-eval's stderr is the standard error of kpass's default
    # interval (the CLI's SE column), no longer the percentile-bootstrap SD, so that the few-cluster
    # rule holds on this path too
    items = _items("pass@4")
    values = kpass.pass_at_k([8] * 4, [3, 8, 1, 0], 4)
    expected = kpass.mean_ci(values, rng=m.BOOTSTRAP_SEED, n_resamples=2000)
    assert m.kpass_stderr(items, n_resamples=2000) == pytest.approx(expected.standard_error, rel=1e-12)
    clustered = _items("pass@4", clustered=True)
    with pytest.warns(kpass.IntervalMethodWarning, match="only 3 clusters"):
        by_cluster = kpass.mean_ci(values, clusters=["addition", "subtraction", "multiplication", "addition"],
                                   rng=m.BOOTSTRAP_SEED, n_resamples=2000)
    assert m.kpass_stderr(clustered, n_resamples=2000) == pytest.approx(by_cluster.standard_error, rel=1e-12)
    assert by_cluster.standard_error != expected.standard_error


def test_lm_eval_asks_the_patched_stderr_for_metric():
    assert getattr(evaluator_utils.stderr_for_metric, "_kpass_patched", False)
    stderr = evaluator_utils.stderr_for_metric(metric=m.kpass_aggregation, bootstrap_iters=500)
    items = _items("pass@1")
    assert stderr(items) == m.kpass_stderr(items, n_resamples=500)
    assert math.isfinite(stderr(items)) and stderr(items) > 0
    assert evaluator_utils.stderr_for_metric(metric=m.kpass_aggregation, bootstrap_iters=0) is None
    # every other aggregation keeps lm-eval's answer
    assert evaluator_utils.stderr_for_metric(metric=lm_metrics.mean, bootstrap_iters=500) is lm_metrics.mean_stderr
    assert evaluator_utils.stderr_for_metric(metric=lambda xs: 0.0, bootstrap_iters=500) is None
    m.install_stderr_patch()  # idempotent: does not wrap twice
    assert evaluator_utils.stderr_for_metric.__wrapped__ is lm_metrics.stderr_for_metric


def test_too_few_samples_aggregate_to_nan_with_a_warning(caplog):
    items = [m.kpass(references=["1"], predictions=["1"], metrics="pass@4")["pass@4"],
             m.kpass(references=["1"], predictions=["2"], metrics="pass@4")["pass@4"]]
    with caplog.at_level(logging.WARNING, logger="kpass.adapters.lm_eval_metrics"):
        assert math.isnan(m.kpass_aggregation(items))
        assert math.isnan(m.kpass_stderr(items, n_resamples=100))
    assert "kpass metric pass@4: no problem has enough samples" in caplog.text
    assert "take_first" in caplog.text


def test_documents_with_too_few_answers_are_counted_named_and_reported(caplog):
    # two documents with 8 answers, one with 2 (a filter that dropped answers): pass@4 leaves the
    # third out, says so in the log and gives lm-eval one more metric, pass@4_excluded
    outputs = [m.kpass(references=[gold], predictions=[answers], metrics="pass@1,4")
               for gold, answers in [("33", PROBLEMS[0][1]), ("22", PROBLEMS[1][1]), ("75", ["75", "1"])]]
    assert [sorted(_specs_of(out)) for out in outputs] == [["pass@1", "pass@4"]] * 2 + [
        ["pass@1", "pass@4", "pass@4_excluded"]]
    items = [out["pass@4"] for out in outputs]
    with caplog.at_level(logging.WARNING, logger="kpass.adapters.lm_eval_metrics"):
        value = m.kpass_aggregation(items)
    assert value == pytest.approx(float(np.mean(kpass.pass_at_k([8, 8], [3, 8], 4))), abs=1e-15)
    assert ("kpass metric pass@4: 1 of 3 documents left out of the estimate (2 samples, pass@4 needs 4): "
            "documents 2 (positions in lm-eval's document order); their number is reported as pass@4_excluded"
            in caplog.text)
    excluded = [out["pass@4_excluded"] for out in outputs if "pass@4_excluded" in out]
    assert m.kpass_aggregation(excluded) == 1.0
    stderr = evaluator_utils.stderr_for_metric(metric=m.kpass_aggregation, bootstrap_iters=100)
    assert stderr(excluded * 2) == "N/A"  # a count has no standard error (lm-eval's own "N/A")
    assert math.isfinite(stderr(items))
    # pass@1 needs one answer: nothing is left out, nothing is logged
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kpass.adapters.lm_eval_metrics"):
        m.kpass_aggregation([out["pass@1"] for out in outputs])
    assert "left out" not in caplog.text


def test_inconsistent_answers_are_the_report_path_error():
    # the aggregation counts answer classes through kpass.compute_report, hence through the core's
    # class_counts_from_codes: a correct sample without an answer is the same DataError as everywhere
    item = {"metric": "cons@2", "kpass_samples": {"correct": [True, False], "answers": [None, "5"], "gold": None,
                                                  "cluster": None}}
    with pytest.raises(kpass.DataError, match="judged correct but has no answer"):
        m.kpass_aggregation([item])


def test_aggregation_refuses_other_values():
    with pytest.raises(ValueError, match="the `kpass` aggregation takes the values of kpass's lm-eval metrics"):
        m.kpass_aggregation([1.0, 0.0])
    mixed = _items("pass@1")[:2] + _items("pass@2")[:2]
    with pytest.raises(ValueError, match=r"got metrics \['pass@1', 'pass@2'\]"):
        m.kpass_aggregation(mixed)


def test_kpass_cluster_filter_tags_every_document():
    tagged = m.KpassClusterFilter(field="topic").apply([["1", "2"], "3"], [{"topic": "a"}, {"topic": 7}])
    assert [list(x) for x in tagged] == [["1", "2"], ["3"]]
    assert [x.cluster for x in tagged] == ["a", "7"]
    with pytest.raises(ValueError, match=r"document has no field 'passage'; its fields are \['topic'\]"):
        m.KpassClusterFilter(field="passage").apply([["1"]], [{"topic": "a"}])
    with pytest.raises(ValueError, match="filter kpass_cluster needs `field:`"):
        m.KpassClusterFilter()


def test_identical_answers_are_counted_in_lm_eval_results_and_warned(caplog):
    """The seed trap in a YAML's kpass metrics: the share of documents with K identical answers."""
    items = []
    for gold, answers, _ in PROBLEMS:
        items.append(m.kpass(references=[gold], predictions=[answers], metrics="pass@8")[m.IDENTICAL_METRIC])
    with caplog.at_level(logging.WARNING):
        assert m.kpass_aggregation(items) == 0.5  # "22" x8 and "34" x8
    assert "got K identical answers" not in caplog.text  # half is not most
    trap = [m.kpass(references=["1"], predictions=[["7"] * 8], metrics="pass@8")[m.IDENTICAL_METRIC]] * 3
    with caplog.at_level(logging.WARNING):
        assert m.kpass_aggregation(trap + items[:1]) == 0.75
    assert "3 of 4 documents got K identical answers" in caplog.text
    assert math.isnan(m.kpass_stderr(trap))
