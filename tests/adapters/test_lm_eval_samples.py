"""Per-sample answers and verdicts from lm-eval's K repeats (kpass.adapters.lm_eval_samples)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kpass.adapters.lm_eval_samples import (
    SamplePipeline,
    ScoredDocuments,
    binary_verdict,
    choose_metric,
    identical_response_share,
    sample_columns,
    sample_pipelines,
    score_samples,
    task_key,
)

REGEX = {"function": "regex", "regex_pattern": r"The answer is (\-?[0-9]+)"}
FILTER_LIST = [  # gsm8k-style pipelines plus a self-consistency one
    {"name": "strict-match", "filter": [REGEX, {"function": "take_first"}]},
    {"name": "maj@4", "filter": [REGEX, {"function": "majority_vote"}, {"function": "take_first"}]},
    {"name": "flexible", "filter": [{"function": "regex", "regex_pattern": "(-?[0-9]+)", "group_select": -1,
                                     "fallback": "NONE"}, {"function": "take_first_k", "k": 2}]},
]
RESPONSES = [
    [" The answer is 33.", " The answer is 32.", " I am not sure.", " The answer is 33."],
    [" The answer is 22.", " The answer is 22.", " The answer is 21.", " The answer is 22."],
]
DOCS = [{"id": "q0", "topic": "addition", "question": "What is 22 + 11?"},
        {"id": "q1", "topic": "subtraction", "question": "What is 27 - 5?"}]


def test_sample_pipelines_drop_selection_steps_and_keep_the_rest():
    strict, majority, flexible = sample_pipelines(FILTER_LIST)
    assert (strict.name, strict.step_names(), strict.removed) == ("strict-match", ["regex"], ("take_first",))
    assert majority.step_names() == ["regex"] and majority.removed == ("majority_vote", "take_first")
    assert flexible.removed == ("take_first_k",)
    assert strict.fallbacks == frozenset({"[invalid]"}) and flexible.fallbacks == frozenset({"NONE"})


def test_default_pipeline_keeps_the_raw_generations():
    (none,) = sample_pipelines(None)
    assert none.name == "none" and none.removed == ("take_first",)
    assert none.apply(RESPONSES, DOCS) == RESPONSES
    assert task_key("gsm8k", "none") == "gsm8k" and task_key("gsm8k", "strict-match") == "gsm8k/strict-match"


def test_a_pipeline_extracts_one_answer_per_generation():
    strict = sample_pipelines(FILTER_LIST)[0]
    answers = strict.apply(RESPONSES, DOCS)
    assert answers == [["33", "32", "[invalid]", "33"], ["22", "22", "21", "22"]]
    assert [strict.answer_or_none(a) for a in answers[0]] == ["33", "32", None, "33"]
    assert strict.answer_or_none("  ") is None and strict.answer_or_none(7) == "7"


def test_a_step_that_selects_under_another_name_is_an_error():
    pipeline = SamplePipeline("mine", (("custom", {"filter_fn": lambda resps, docs: [r[:1] for r in resps]}),),
                              (), frozenset())
    with pytest.raises(ValueError, match=r"filter pipeline 'mine' .* does not keep one answer per response: "
                                         r"document 0 has 4 responses"):
        pipeline.apply(RESPONSES, DOCS)


@pytest.mark.parametrize("entry", [{"filter": []}, {"name": "x"}, "take_first"])
def test_malformed_filter_list_entries_are_named(entry):
    with pytest.raises(ValueError, match="`filter_list` entry 0 must be a mapping"):
        sample_pipelines([entry])


def test_a_step_without_function_is_named():
    with pytest.raises(ValueError, match="filter pipeline 'p': every step needs a 'function'"):
        sample_pipelines([{"name": "p", "filter": [{"regex_pattern": "x"}]}])


@pytest.mark.parametrize("value, verdict", [(1, True), (0, False), (True, True), (np.float64(1.0), True),
                                            (np.float64(0.0), False), (1.0, True)])
def test_binary_verdicts(value, verdict):
    assert binary_verdict(value, metric="exact_match", where="doc 0") is verdict


@pytest.mark.parametrize("value", [0.5, math.nan, None, "1", 2])
def test_non_binary_metric_values_are_refused(value):
    with pytest.raises(ValueError, match=r"metric 'f1' returned .* for doc 3; kpass's k-sample metrics need a "
                                         r"binary verdict"):
        binary_verdict(value, metric="f1", where="doc 3")


def test_choose_metric_takes_the_first_numeric_metric_and_skips_kpass_values():
    result = {"pass@8": {"metric": "pass@8", "kpass_samples": {}}, "exact_match": 1.0, "acc": 0}
    assert choose_metric(result, None, task="t") == "exact_match"
    assert choose_metric(result, "acc", task="t") == "acc"
    with pytest.raises(ValueError, match=r"task 't' has no metric 'bleu'; its metrics are \['acc', 'exact_match'"):
        choose_metric(result, "bleu", task="t")
    with pytest.raises(ValueError, match="task 't' has no numeric per-sample metric"):
        choose_metric({"pass@8": {"kpass_samples": {}}}, None, task="t")


def test_score_samples_judges_every_answer_with_the_task_metric():
    answers = [["33", "32", "[invalid]"], ["22", "21"]]
    gold = ["33", "22"]
    calls = []

    def score(d, answer):
        calls.append((d, answer))
        return {"exact_match": float(answer == gold[d]), "other": 0.5}

    metric, verdicts = score_samples(answers, score, metric=None, task="t", doc_ids=[10, 11])
    assert metric == "exact_match"
    assert verdicts == [[True, False, False], [True, False]]
    assert len(calls) == 5  # distinct answers per document
    with pytest.raises(ValueError, match=r"metric 'other' returned 0.5 for task 't', doc_id 10, sample 0"):
        score_samples(answers, score, metric="other", task="t", doc_ids=[10, 11])


def test_identical_response_share():
    assert identical_response_share([["a", "a"], ["a", "b"], ["c"], ["d", "d", "d"]]) == pytest.approx(2 / 3)
    assert identical_response_share([["a"], ["b"]]) == 0.0


def test_sample_columns_one_row_per_generation_with_the_gold_class_canonical():
    strict = sample_pipelines(FILTER_LIST)[0]
    answers = [["Paris", "paris", "[invalid]", "Rome"]]
    verdicts = [[True, True, False, False]]  # e.g. exact_match with ignore_case
    columns, lines = sample_columns(model="m", task="capitals", pipeline=strict, cluster_by="passage",
                                    scored=ScoredDocuments(doc_ids=[7], docs=[{"country": "France", "passage": "p1", "long": "x" * 100}], targets=["Paris"],
                                                           answers=answers, verdicts=verdicts,
                                                           lines=[5]))
    assert columns["task"] == ["capitals/strict-match"] * 4
    assert columns["problem_id"] == ["7"] * 4 and columns["sample_index"] == [0, 1, 2, 3]
    assert columns["answer"] == ["Paris", "Paris", None, "Rome"]
    assert columns["gold"] == ["Paris"] * 4 and columns["cluster"] == ["p1"] * 4
    assert columns["doc.country"] == ["France"] * 4 and "doc.long" not in columns
    assert lines == [5, 5, 5, 5]


def test_sample_columns_cluster_field_must_exist():
    strict = sample_pipelines(FILTER_LIST)[0]
    with pytest.raises(ValueError, match=r"cluster field 'topic': document 3 of task 't' has no field 'topic'; "
                                         r"its fields are \['id'\]"):
        sample_columns(model="m", task="t", pipeline=strict, cluster_by="topic",
                       scored=ScoredDocuments(doc_ids=[3], docs=[{"id": "q"}], targets=["1"],
                                              answers=[["1"]], verdicts=[[True]]))


def test_sample_columns_take_the_cluster_from_a_kpass_cluster_step():
    (pipeline,) = sample_pipelines([{"name": "all", "filter": [REGEX, {"function": "kpass_cluster",
                                                                       "field": "topic"}]}])
    assert pipeline.cluster_field == "topic"
    columns, _ = sample_columns(model="m", task="t", pipeline=pipeline,
                                scored=ScoredDocuments(doc_ids=[0, 1], docs=DOCS, targets=["33", "22"],
                                                       answers=[["33"], ["21"]], verdicts=[[True], [False]]))
    assert columns["cluster"] == ["addition", "subtraction"]


def test_the_flag_the_reader_and_the_yaml_metrics_record_the_same_answers():
    # one function decides the recorded answer (recorded_answer); the answer classes are then the core's
    from kpass.adapters.lm_eval_metrics import kpass as kpass_metric
    from kpass.adapters.lm_eval_samples import recorded_answer

    answers = ["paris", "PARIS", "Rome", "[invalid]", "  ", "rome"]
    out = kpass_metric(references=["Paris"], predictions=[answers], metrics="cons@2", ignore_case=True)
    samples = out["cons@2"]["kpass_samples"]
    assert samples["correct"] == [True, True, False, False, False, False]
    assert samples["answers"] == ["Paris", "Paris", "Rome", None, None, "rome"]
    (pipeline,) = sample_pipelines([{"name": "all", "filter": [{"function": "regex", "regex_pattern": "(.*)"}]}])
    columns, _ = sample_columns(model="m", task="t", pipeline=pipeline,
                                scored=ScoredDocuments(doc_ids=[0], docs=[{}], targets=["Paris"],
                                                       answers=[answers], verdicts=[samples["correct"]]))
    assert columns["answer"] == samples["answers"]
    assert [recorded_answer(a, v, "Paris", frozenset({"[invalid]"})) for a, v in zip(answers, samples["correct"])] \
        == samples["answers"]
    assert recorded_answer("7", True, None, frozenset()) == "7"   # no gold text: the answer itself
    assert recorded_answer(7, False, "8", frozenset()) == "7"
