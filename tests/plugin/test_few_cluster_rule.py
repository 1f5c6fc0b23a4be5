"""One few-cluster rule on every path (issue #16): the API, the CLI, lm-eval's stderr and Inspect's
metrics give the same interval and standard error for fewer than 10 clusters, and the same note."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

import kpass
from kpass.metrics import FEW_CLUSTERS, IntervalMethodWarning, few_clusters_note, mean_ci, pass_at_k

# 16 problems in 3 topics, 16 samples each: the lm-eval case (pass@8 near 0.6)
N_SAMPLES = 16
CORRECT = [0, 16, 3, 1, 0, 5, 2, 12, 0, 1, 6, 0, 2, 0, 9, 4]
TOPICS = ["algebra"] * 5 + ["geometry"] * 5 + ["counting"] * 6
SEED = 0


def _values():
    return pass_at_k(np.full(16, N_SAMPLES), np.array(CORRECT), 8)


def _api(**kwargs):
    with pytest.warns(IntervalMethodWarning, match="only 3 clusters") as caught:
        result = mean_ci(_values(), clusters=TOPICS, rng=SEED, **kwargs)
    return result, [str(w.message) for w in caught if issubclass(w.category, IntervalMethodWarning)]


def test_the_api_uses_the_few_cluster_score_interval_and_says_so():
    result, messages = _api()
    note = few_clusters_note(3)
    assert messages == [note]
    assert result.details["scale"] == "score (few clusters)"
    assert result.details["bound_methods"] == ("score", "score")
    # the standard error is never below that of as many independent 0/1 problems
    p = result.estimate
    assert result.standard_error >= np.sqrt(p * (1 - p) / 16) - 1e-15
    plain = mean_ci(_values(), method="t")
    assert result.standard_error > 0.8 * plain.standard_error       # not the 0.0377
    assert result.low < result.estimate < result.high
    # the rule is the default's only: an explicit method keeps its own interval (and its own note)
    with pytest.warns(IntervalMethodWarning, match="'clustered-t' is then usually too narrow"):
        mean_ci(_values(), clusters=TOPICS, method="clustered-t")
    assert few_clusters_note(FEW_CLUSTERS) is None and few_clusters_note(None) is None


def test_the_cli_shows_the_same_interval_and_note(run_cli, write_jsonl):
    records = [{"model": "m", "task": "t", "problem_id": f"p{j}", "sample_index": s, "correct": s < c,
                "subject": TOPICS[j]} for j, c in enumerate(CORRECT) for s in range(N_SAMPLES)]
    path = write_jsonl(records)
    code, out, err = run_cli("report", path, "-m", "pass@8", "--cluster-by", "subject", "--format", "json",
                             "--seed", SEED, "--no-progress")
    assert code == 0, err
    data = json.loads(out)
    (row,) = data["rows"]
    result, _ = _api()
    assert (row["estimate"], row["low"], row["high"], row["standard_error"]) == pytest.approx(
        (result.estimate, result.low, result.high, result.standard_error), abs=1e-12)
    (note,) = [note for note in data["notes"] if note["kind"] == "few-clusters"]
    assert note["rows"] == ["m / t / pass@8"] and note["detail"] == few_clusters_note(3)  # the core's whole text
    assert note["text"].startswith("fewer than 10 clusters") and len(note["text"]) < len(note["detail"])
    assert note["doc"] == "docs/notes.md#few-clusters"


def test_lm_eval_stderr_is_the_same_and_logs_the_note(caplog):
    from kpass.adapters import lm_eval_metrics as m

    items = []
    for correct, topic in zip(CORRECT, TOPICS):
        answers = ["1"] * correct + ["0"] * (N_SAMPLES - correct)
        out = m.kpass(references=["1"], predictions=[m.KSampleAnswers(answers, topic)], metrics="pass@8")
        items.append(out["pass@8"])
    with caplog.at_level(logging.WARNING, logger=m.__name__):
        stderr = m.kpass_stderr(items, n_resamples=10_000)
    result, _ = _api(n_resamples=10_000)
    assert m.BOOTSTRAP_SEED == SEED
    assert stderr == pytest.approx(result.standard_error, abs=1e-12)
    assert any(few_clusters_note(3) in record.getMessage() for record in caplog.records)


def test_inspect_metrics_give_the_same_interval_stderr_and_note(caplog):
    from inspect_ai.scorer import SampleScore, Score

    from kpass.adapters import inspect_metrics as im

    scores = [SampleScore(score=Score(value="C" if s < c else "I"), sample_id=f"p{j}",
                          sample_metadata={"topic": TOPICS[j]})
              for j, c in enumerate(CORRECT) for s in range(N_SAMPLES)]
    from kpass.adapters import inspect_warnings

    inspect_warnings.LOGGED_NOTES.clear()
    with caplog.at_level(logging.WARNING, logger=im.__name__):
        metric = im.kpass_metrics("pass@8", cluster="topic", rng=SEED)
        value = metric(scores)
    result, _ = _api()
    assert (value["pass@8"], value["pass@8_lower"], value["pass@8_upper"], value["pass@8_stderr"]) == pytest.approx(
        (result.estimate, result.low, result.high, result.standard_error), abs=1e-12)
    # one short line on Inspect's console, the full note in the metric's kpass params (the log)
    messages = [record.getMessage() for record in caplog.records]
    assert ("kpass metrics: pass@8: only 3 clusters (full note in the log's kpass params; "
            "docs/notes.md#few-clusters)") in messages
    assert not any(few_clusters_note(3) in message for message in messages)
    from kpass.adapters.inspect_compat import metric_params

    notes = metric_params(metric)["kpass"]["notes"]
    (note,) = [note for note in notes if note["kind"] == "few-clusters"]
    assert note["rows"] == ["pass@8"] and note["detail"] == few_clusters_note(3)  # the full note in the log
    assert note["doc"] == "docs/notes.md#few-clusters"


def test_paired_comparisons_follow_the_rule_too():
    rng = np.random.default_rng(3)
    b = np.clip(_values() - 0.3 * rng.random(16), 0, 1)
    with pytest.warns(IntervalMethodWarning, match="only 3 clusters") as caught:
        result = kpass.paired_difference(_values(), b, clusters=TOPICS, rng=SEED)
    assert few_clusters_note(3) in [str(w.message) for w in caught]
    assert result.details["model_scales"] == ("score (few clusters)", "score (few clusters)")
    assert result.low < result.estimate < result.high
