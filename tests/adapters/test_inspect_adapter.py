"""Unit tests of the Inspect adapter (in process, no ``inspect eval``): value mapping, scorers,
metrics, reducers, preflight and the import contract of the plugin module.

The end-to-end tests with the real ``inspect eval`` / ``inspect score`` CLI are in
``test_inspect_e2e.py``.
"""

from __future__ import annotations

import asyncio
import math
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspect_ai.model import ModelName, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import SampleScore, Score, Target, pattern, scorer
from inspect_ai.scorer._reducer import create_reducers
from inspect_ai.solver import TaskState
from inspect_ai.util import registry_create

import kpass
from kpass import metrics as core
from kpass.adapters import inspect_metrics as im
from kpass.adapters.inspect_metrics import kpass_metrics, kpass_preflight
from kpass.adapters.inspect_records import correct_from_value
from kpass.adapters.inspect_scorers import (
    COT_VERIFIER_TEMPLATE,
    cot_verifier,
    kpass_scorer,
    output_digest,
    parse_cot_verdict,
)

ANSWER = r"ANSWER:\s*(-?\d+)"


# ------------------------------------------------------------------------------------ helpers


def _output(text: str, stop: str = "stop", tokens: int = 7) -> ModelOutput:
    out = ModelOutput.from_content(model="m", content=text, stop_reason=stop)
    out.usage = ModelUsage(input_tokens=3, output_tokens=tokens, total_tokens=3 + tokens)
    return out


def _state(text: str, stop: str = "stop", tokens: int = 7, epoch: int = 2) -> TaskState:
    return TaskState(model=ModelName("mockllm/model"), sample_id="q1", epoch=epoch, input="What is 2+2?",
                     messages=[], target=Target("4"), output=_output(text, stop, tokens))


def _run(scorer_fn, state: TaskState) -> Score:
    return asyncio.run(scorer_fn(state, state.target))


def _scores(rows: list[tuple[str, list[str]]], subjects: dict[str, str] | None = None,
            answers: dict[str, list[str | None]] | None = None) -> list[SampleScore]:
    """SampleScores from ``(problem, [values per epoch])``, optional clusters and kpass answers."""
    out = []
    for pid, values in rows:
        for epoch, value in enumerate(values, start=1):
            metadata = None
            if answers is not None:
                metadata = {"kpass": {"answer": answers[pid][epoch - 1], "epoch": epoch}}
            out.append(SampleScore(
                score=Score(value=value, metadata=metadata), sample_id=pid,
                sample_metadata={"subject": subjects[pid]} if subjects else {},
            ))
    return out


ROWS = [  # 6 problems x 4 epochs
    ("p1", ["C", "C", "I", "C"]), ("p2", ["I", "I", "I", "I"]), ("p3", ["C", "I", "I", "I"]),
    ("p4", ["C", "C", "C", "C"]), ("p5", ["I", "C", "I", "C"]), ("p6", ["I", "I", "C", "I"]),
]
SUBJECTS = {"p1": "x", "p2": "x", "p3": "y", "p4": "y", "p5": "y", "p6": "z"}
N = np.array([4] * 6)
C = np.array([sum(v == "C" for v in values) for _, values in ROWS])


# ------------------------------------------------------------------------------------ values


@pytest.mark.parametrize("value, expected", [
    ("C", True), ("I", False), ("P", False), ("N", False), (1, True), (1.0, True), (0, False),
    (0.5, False), (True, True), (False, False), ("yes", True), ("no", False), ("true", True),
    ("1.0", True), ("0", False), (2.0, True),
])
def test_correct_from_value_follows_inspect_pass_at_rule(value, expected):
    # the rule of Inspect's pass_at/pass_k reducers: value_to_float(value) >= 1.0
    from inspect_ai.scorer import value_to_float

    assert correct_from_value(value, where="s") is expected
    assert (value_to_float()(value) >= 1.0) is expected


def test_correct_from_value_unscored_and_errors():
    assert correct_from_value(float("nan"), where="s") is None
    with pytest.raises(TypeError, match=r"sample 7.*several values"):
        correct_from_value({"a": 1}, where="sample 7")
    with pytest.raises(TypeError, match="several values"):
        correct_from_value([1, 0], where="sample 7")
    with pytest.raises(ValueError, match=r"sample 8: score value 'maybe'"):
        correct_from_value("maybe", where="sample 8")


@pytest.mark.parametrize("reply, expected", [
    ("ok\nVERDICT: CORRECT", True), ("VERDICT: INCORRECT", False), ("verdict: correct", True),
    ("VERDICT: CORRECT\n...\nVERDICT: INCORRECT", False), ("VERDICT: **CORRECT**", True),
    ("I think it is correct", None), ("", None), ("VERDICT: maybe", None),
])
def test_parse_cot_verdict(reply, expected):
    assert parse_cot_verdict(reply) is expected


# ------------------------------------------------------------------------------------ scorers


def test_kpass_scorer_keeps_the_wrapped_score_and_records_metadata():
    inner = pattern(ANSWER)
    state = _state("work\nANSWER: 4", tokens=11, epoch=3)
    plain = _run(inner, state)
    wrapped = _run(kpass_scorer(inner), state)
    for field in ("value", "answer", "explanation", "reason"):
        assert getattr(wrapped, field) == getattr(plain, field)
    assert wrapped.metadata["kpass"] == {"answer": "4", "stop_reason": "stop", "output_tokens": 11,
                                         "finished": True, "epoch": 3, "output_digest": output_digest(state.output)}


@pytest.mark.parametrize("text, stop, answer, finished", [
    ("cut off before any answer", "max_tokens", None, False),    # truncated, no answer: unfinished
    ("ANSWER: 4\nthen more ...", "max_tokens", "4", True),       # correct (gold 4): the answer was there
    # wrong, cut at the limit: unfinished although the extractor found an answer in the cut text
    ("ANSWER: 5\nthen more ...", "model_length", "5", False),
    ("ANSWER: 5\nthen more ...", "max_tokens", "5", False),
    ("I do not know", "stop", None, True),                       # stopped on its own: finished
    ("ANSWER: 5", "stop", "5", True),                            # wrong, stopped on its own: finished
])
def test_kpass_scorer_finished_definition(text, stop, answer, finished):
    score = _run(kpass_scorer(pattern(ANSWER)), _state(text, stop))
    assert score.metadata["kpass"]["answer"] == answer
    assert score.metadata["kpass"]["finished"] is finished
    assert score.metadata["kpass"]["stop_reason"] == stop


def test_kpass_scorer_answer_extraction_options_and_inner_metadata():
    @scorer(metrics=[])
    def with_metadata():
        async def score(state, target):
            return Score(value="C", answer="raw", metadata={"mine": 1})
        return score

    text = "ANSWER: 1\nno, ANSWER: 2"
    assert _run(kpass_scorer(with_metadata()), _state(text)).metadata == {
        "mine": 1, "kpass": {"answer": "raw", "stop_reason": "stop", "output_tokens": 7, "finished": True, "epoch": 2,
                             "output_digest": output_digest(_state(text).output)}}
    assert _run(kpass_scorer(with_metadata(), answer=ANSWER), _state(text)).metadata["kpass"]["answer"] == "2"
    assert _run(kpass_scorer(with_metadata(), answer=lambda t: t[-1]), _state(text)).metadata["kpass"]["answer"] == "2"
    with pytest.raises(ValueError, match="not a valid regular expression"):
        kpass_scorer(with_metadata(), answer="(unclosed")
    with pytest.raises(TypeError, match="`answer` must be"):
        kpass_scorer(with_metadata(), answer=3)


def test_kpass_scorer_carries_the_wrapped_metrics_and_registry_name():
    from inspect_ai.util import registry_info

    from kpass.adapters.inspect_compat import scorer_metrics

    inner = pattern(ANSWER)
    wrapped = kpass_scorer(inner)
    assert registry_info(wrapped).name == "kpass/kpass_scorer"
    assert scorer_metrics(wrapped) == scorer_metrics(inner)
    metric = kpass_metrics("pass@1")
    assert scorer_metrics(kpass_scorer(inner, metrics=[metric])) == [metric]


class _Judge:
    def __init__(self, replies):
        self.replies = list(replies)
        self.prompts = []

    def __call__(self, input, tools, tool_choice, config):
        self.prompts.append(input[-1].text)
        out = ModelOutput.from_content(model="judge", content=self.replies[(len(self.prompts) - 1) % len(self.replies)])
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out


def test_cot_verifier_judges_correct_answers_only():
    judge = _Judge(["VERDICT: CORRECT", "VERDICT: INCORRECT", "no idea"])
    verifier = cot_verifier(pattern(ANSWER), model=get_model("mockllm/judge", custom_outputs=judge, memoize=False),
                            verdicts=3)
    right = _run(verifier, _state("2+2 is 4\nANSWER: 4"))
    assert right.value == "C"
    assert right.metadata["kpass"]["cot_verdicts"] == [True, False, None]
    assert right.metadata["kpass_cot_replies"] == ["VERDICT: CORRECT", "VERDICT: INCORRECT", "no idea"]
    assert len(judge.prompts) == 3
    prompt = judge.prompts[0]
    assert "What is 2+2?" in prompt and "2+2 is 4\nANSWER: 4" in prompt and "final answer: 4" in prompt
    assert prompt.rstrip().endswith("if it contains any error.")
    wrong = _run(verifier, _state("ANSWER: 5"))
    assert wrong.value == "I"
    assert wrong.metadata["kpass"]["cot_verdicts"] is None       # never verified
    assert len(judge.prompts) == 3                              # no judge call for a wrong answer


def test_cot_verifier_validation():
    with pytest.raises(ValueError, match="`verdicts` must be an integer >= 1; got 0"):
        cot_verifier(pattern(ANSWER), verdicts=0)
    with pytest.raises(ValueError, match=r"placeholder \{solution\}"):
        cot_verifier(pattern(ANSWER), template="Is it right?")
    assert "{solution}" in COT_VERIFIER_TEMPLATE and "VERDICT: CORRECT" in COT_VERIFIER_TEMPLATE


# ------------------------------------------------------------------------------------ metrics


def test_metric_is_quiet_on_the_empty_call():
    assert kpass_metrics("pass@1,2")([]) == {}


def test_metric_equals_core_on_the_same_counts():
    value = kpass_metrics("pass@1,2", "pass^2", "g-pass@4_0.5", "mg-pass@4")(_scores(ROWS))
    for name, per_problem in [
        ("pass@1", core.pass_at_k(N, C, 1)), ("pass@2", core.pass_at_k(N, C, 2)),
        ("pass^2", core.pass_hat_k(N, C, 2)), ("G-Pass@4_0.5", core.g_pass_at_k(N, C, 4, tau=0.5)),
        ("mG-Pass@4", core.mg_pass_at_k(N, C, 4)),
    ]:
        expected = core.mean_ci(per_problem, rng=0)
        assert value[name] == pytest.approx(float(np.mean(per_problem)), abs=1e-12)
        assert value[f"{name}_lower"] == pytest.approx(expected.low, abs=1e-12)
        assert value[f"{name}_upper"] == pytest.approx(expected.high, abs=1e-12)
        assert value[f"{name}_stderr"] == pytest.approx(expected.standard_error, abs=1e-12)
    assert not any(key.endswith("_excluded") for key in value)
    assert all(math.isfinite(v) for v in value.values())


def test_metric_clustered_standard_error_equals_inspect_stderr_cluster():
    from inspect_ai.scorer import stderr

    scores = _scores(ROWS, SUBJECTS)
    value = kpass_metrics("pass@2", cluster="subject", method="clustered-t")(scores)
    per_problem = core.pass_at_k(N, C, 2)
    reduced = [SampleScore(score=Score(value=float(v)), sample_id=pid, sample_metadata={"subject": SUBJECTS[pid]})
               for (pid, _), v in zip(ROWS, per_problem)]
    assert value["pass@2_stderr"] == pytest.approx(stderr(cluster="subject")(reduced), abs=1e-12)


def test_metric_partial_calls_during_a_run_are_quiet(monkeypatch):
    monkeypatch.setattr(im, "_RUNNING_TASKS", {"eval": (4, frozenset(pid for pid, _ in ROWS))})
    partial = _scores([("p1", ["C"]), ("p2", ["I"])])    # one epoch each so far: pass@2 not yet
    value = kpass_metrics("pass@1,2")(partial)
    assert value["pass@1"] == 0.5 and value["pass@1_stderr"] == 0.5
    assert not any(key.startswith("pass@2") for key in value)
    some = _scores([("p1", ["C", "I"]), ("p2", ["I"])])
    value = kpass_metrics("pass@2")(some)
    assert value["pass@2"] == 1.0 and value["pass@2_excluded"] == 1.0
    assert kpass_metrics("pass@4")(partial) == {}


def test_running_epochs_lookup(monkeypatch):
    monkeypatch.setattr(im, "_RUNNING_TASKS", {"a": (4, frozenset({"p1", "p2"})), "b": (8, frozenset({"p1"}))})
    assert im._running_epochs({"p1"}) == 8          # two running tasks match: the larger epochs
    assert im._running_epochs({"p2"}) == 4
    assert im._running_epochs({"p3"}) is None       # no running task: used outside a run
    monkeypatch.setattr(im, "_RUNNING_TASKS", {"c": (2, frozenset())})
    assert im._running_epochs({"p3"}) == 2          # a task with unknown sample ids matches any


def test_metric_k_larger_than_epochs_is_an_error_naming_metric_and_epochs(monkeypatch):
    monkeypatch.setattr(im, "_RUNNING_TASKS", {"eval": (4, frozenset(pid for pid, _ in ROWS))})
    with pytest.raises(ValueError, match=r"'pass@8' \(needs 8\).*epochs \(4\).*--epochs 8"):
        kpass_metrics("pass@1,8")(_scores([("p1", ["C"])]))
    monkeypatch.setattr(im, "_RUNNING_TASKS", {})
    with pytest.raises(ValueError, match=r"'cons@8' \(needs 8\).*scored epochs \(4\)"):
        kpass_metrics("cons@8")(_scores(ROWS, answers={pid: ["1"] * 4 for pid, _ in ROWS}))


def test_metric_errors_are_clear():
    with pytest.raises(kpass.MetricSpecError, match="invalid metric spec 'pass@x'"):
        kpass_metrics("pass@x")
    with pytest.raises(kpass.UnknownMetricError):
        kpass_metrics("frob@2")
    with pytest.raises(ValueError, match="confidence_level"):
        kpass_metrics("pass@1", confidence_level=1.5)
    with pytest.raises(ValueError, match="`method` must be one of auto, t, clustered-t"):
        kpass_metrics("pass@1", method="wald")
    with pytest.raises(ValueError, match="'clustered-t' needs `cluster`"):
        kpass_metrics("pass@1", method="clustered-t")
    dict_scores = [SampleScore(score=Score(value={"a": 1}), sample_id="p9")]
    with pytest.raises(TypeError, match=r"sample 'p9'.*several values"):
        kpass_metrics("pass@1")(dict_scores)
    with pytest.raises(ValueError, match=r"sample 'p1'.*cluster key 'topic'"):
        kpass_metrics("pass@1", cluster="topic")(_scores(ROWS, SUBJECTS))


def test_metric_uses_kpass_answers_for_cons_at_k():
    answers = {"p1": ["7", "7", "5", "7"], "p2": ["5", "5", "3", None], "p3": ["7", "5", "5", "3"],
               "p4": ["1", "1", "1", "1"], "p5": ["2", "7", "3", "7"], "p6": [None, "4", "9", "4"]}
    value = kpass_metrics("cons@3")(_scores(ROWS, answers=answers))
    # class counts: gold (correct) first, then each wrong answer; None answers abstain
    counts = np.array([[3, 1, 0], [0, 2, 1], [1, 2, 1], [4, 0, 0], [2, 1, 1], [1, 2, 0]])
    invalid = np.array([0, 1, 0, 0, 0, 1])
    assert value["cons@3"] == pytest.approx(float(core.cons_at_k(counts, 3, n_invalid=invalid).mean()), abs=1e-12)


def test_metric_registry_round_trip_and_adaptive_defaults():
    from inspect_ai._util.registry import registry_params  # what Inspect records in a log (private; tests only)
    from inspect_ai.util import registry_info

    metric = kpass_metrics("pass@1,2", cluster="subject")
    assert registry_info(metric).name == "kpass/kpass_metrics"
    params = registry_params(metric)
    assert params["specs"] == ["pass@1,2"] and params["cluster"] == "subject"
    again = registry_create("metric", "kpass/kpass_metrics", **params)       # what `inspect score` does from a log
    assert again(_scores(ROWS, SUBJECTS)) == metric(_scores(ROWS, SUBJECTS))
    default = registry_create("metric", "kpass/kpass_metrics")(_scores(ROWS))
    assert {k for k in default if "_" not in k} == {"pass@1", "pass@2", "pass@4", "pass^1", "pass^2", "pass^4"}
    assert set(registry_create("metric", "kpass/pass_at_k")(_scores(ROWS))) >= {"pass@1", "pass@2", "pass@4"}
    assert "G-Pass@4_0.75" in registry_create("metric", "kpass/g_pass_at_k")(_scores(ROWS))


# ------------------------------------------------------------------------------------ reducers


@given(values=st.lists(st.sampled_from(["C", "I", 1.0, 0.0, float("nan")]), min_size=1, max_size=12),
       k=st.integers(1, 6))
def test_reducers_equal_inspect_pass_at_and_pass_k(values, k):
    scores = [Score(value=v) for v in values]
    ours_at, theirs_at, ours_hat, theirs_hat = create_reducers(
        [f"kpass/pass_at_{k}", f"pass_at_{k}", f"kpass/pass_hat_{k}", f"pass_k_{k}"])
    for ours, theirs in ((ours_at, theirs_at), (ours_hat, theirs_hat)):
        a, b = ours(scores).value, theirs(scores).value
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)


def test_answer_fin_and_cot_reducers():
    def score(value, answer, finished=True, verdicts="absent"):
        data = {"answer": answer, "finished": finished}
        if verdicts != "absent":
            data["cot_verdicts"] = verdicts
        return Score(value=value, metadata={"kpass": data})

    # docs/spec.md MJ17: answers 7,5,5,7,7,3,5,5 with gold 7, k=2, fractional ties -> 3/8
    scores = [score("C" if a == "7" else "I", a) for a in "7 5 5 7 7 3 5 5".split()]
    (cons,) = create_reducers(["kpass/cons_at_2"])
    assert cons(scores).value == pytest.approx(3 / 8, abs=1e-12)
    (fin,) = create_reducers(["kpass/fin_at_1"])
    assert fin([score("C", "1"), score("I", None, False), score("I", None, False)]).value == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="needs the `finished` flag"):
        fin([Score(value="C")])
    cot = [score("C", "1", verdicts=[True, False, False]), score("C", "1", verdicts=[True, True, None]),
           score("I", "2", verdicts=None), score("C", "1", verdicts=[True, True, True])]
    results = {rule: im.cot_pass_at(1, rule=rule)(cot).value for rule in ("any", "majority", "all")}
    assert results == pytest.approx({"any": 3 / 4, "majority": 2 / 4, "all": 1 / 4})
    assert np.isnan(create_reducers(["kpass/pass_at_5"])[0]([Score(value="C")]).value)


# cons@k through the reducer, the metric and the report: one implementation (the core's
# class_counts_from_codes), so the same numbers and the same errors
CONS_ANSWERS = {"p1": ["7", "7", "5", "7"], "p2": ["5", "5", "3", None], "p3": ["7", "5", "5", "3"],
                "p4": ["1", "1", "1", "1"], "p5": ["2", "7", "3", "7"], "p6": [None, "4", "9", "4"]}


def _report_cons(rows, answers, spec):
    """``kpass report``'s number for ``spec`` on the same epochs (a sample table built by hand)."""
    records = [{"model": "m", "task": "t", "problem_id": pid, "sample_index": i, "correct": value == "C",
                "answer": answers[pid][i]} for pid, values in rows for i, value in enumerate(values)]
    table = kpass.SampleTable.from_records(records, source="hand")
    return kpass.compute_report(table, [spec], rng=0).rows[0].estimate


@pytest.mark.parametrize("options", [{}, {"ties": "strict"}, {"invalid": "vote"},
                                     {"ties": "strict", "invalid": "vote"}])
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_cons_at_reducer_equals_the_metric_and_the_report(k, options):
    scores = _scores(ROWS, answers=CONS_ANSWERS)
    reducer = im.cons_at(k, **options)
    per_sample = [reducer([s.score for s in scores if s.sample_id == pid]).value for pid, _ in ROWS]
    spec = f"cons@{k}" + (f"[{','.join(f'{key}={value}' for key, value in options.items())}]" if options else "")
    metric_value = kpass_metrics(spec)(scores)
    name = kpass.parse_metric_specs(spec)[0].name
    assert metric_value[name] == pytest.approx(float(np.mean(per_sample)), abs=1e-12)
    assert _report_cons(ROWS, CONS_ANSWERS, spec) == pytest.approx(float(np.mean(per_sample)), abs=1e-12)


@pytest.mark.parametrize("values, answers, reason", [
    # a correct epoch without an answer (the reducer used to count it as gold: 0.5 here)
    (["C", "C", "I", "I"], [None, "7", "5", "5"], "judged correct but has no answer"),
    # a wrong epoch whose answer equals a correct epoch's (the reducer used to make it a wrong class)
    (["C", "I", "I", "I"], ["7", "7", "5", "5"], "judged incorrect but its answer equals the answer"),
])
def test_inconsistent_answers_are_the_same_error_everywhere(values, answers, reason):
    rows = [("p1", values), ("p2", ["C", "I", "I", "I"])]
    answer_map = {"p1": answers, "p2": ["1", "2", "2", None]}
    scores = _scores(rows, answers=answer_map)
    with pytest.raises(ValueError, match=rf"kpass/cons_at reducer, epoch\(s\) [12]: this sample is {reason}"):
        im.cons_at(2)([s.score for s in scores if s.sample_id == "p1"])
    with pytest.raises(kpass.DataError, match=reason):
        kpass_metrics("cons@2")(scores)
    with pytest.raises(kpass.DataError, match=reason):
        _report_cons(rows, answer_map, "cons@2")
    codes = {None: -1, "7": 0, "5": 1}
    with pytest.raises(core.InconsistentAnswersError, match="disagree"):
        core.class_counts_from_codes([0] * 4, [codes[a] for a in answers], [v == "C" for v in values], 1)
    # without kpass metadata the answer comes from Score.answer, on every path alike
    plain = [Score(value=v, answer=a) for v, a in zip(values, answers)]
    with pytest.raises(ValueError, match=reason):
        im.cons_at(2)(plain)


def test_reducer_options_are_checked_when_the_reducer_is_built():
    with pytest.raises(ValueError, match=r"kpass/cons_at reducer: .*option ties='bogus' must be one of fractional, strict"):
        im.cons_at(2, ties="bogus")
    with pytest.raises(ValueError, match=r"kpass/cons_at reducer: .*option invalid='drop' must be one of abstain, vote"):
        im.cons_at(2, invalid="drop")
    with pytest.raises(ValueError, match=r"kpass/mg_pass_at reducer: .*option variant='exact'"):
        im.mg_pass_at(4, variant="exact")
    with pytest.raises(ValueError, match=r"kpass/cot_pass_at reducer: .*option rule='most'"):
        im.cot_pass_at(2, rule="most")
    with pytest.raises(ValueError, match=r"kpass/g_pass_at reducer: .*tau must be in \[0, 1\]; got 1.5"):
        im.g_pass_at(4, tau=1.5)
    with pytest.raises(ValueError, match=r"`k` of the kpass/cons_at reducer must be an integer >= 1; got 0"):
        im.cons_at(0)
    assert im.g_pass_at(2, tau="0.5")([Score(value="C"), Score(value="I")]).value == pytest.approx(
        float(core.g_pass_at_k([2], [1], 2, tau="0.5")[0]))


def test_inspect_names_kpass_objects_with_the_package_prefix():
    from inspect_ai.util import registry_info

    assert registry_info(im._kpass_metrics).name == "kpass/kpass_metrics"
    assert registry_info(kpass_metrics("pass@1")).name == "kpass/kpass_metrics"
    assert registry_info(kpass_scorer(pattern(ANSWER))).name == "kpass/kpass_scorer"


_IMPORT_IN = "import warnings; warnings.simplefilter('always'); import kpass.adapters.inspect_registry"


def test_a_stale_egg_info_that_hides_the_install_is_reported(tmp_path):
    # Inspect names kpass/... only when it sees kpass as an installed package; a stale
    # kpass.egg-info in the working directory hides the editable install's metadata
    clean = subprocess.run([sys.executable, "-c", _IMPORT_IN], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
    assert clean.returncode == 0 and "without the 'kpass/' prefix" not in clean.stderr, clean.stderr
    stale = tmp_path / "kpass.egg-info"
    stale.mkdir()
    (stale / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: kpass\nVersion: 0.0.1\n")
    shadowed = subprocess.run([sys.executable, "-c", _IMPORT_IN], cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)
    assert shadowed.returncode == 0, shadowed.stderr
    assert "without the 'kpass/' prefix" in shadowed.stderr and "stale kpass.egg-info" in shadowed.stderr


# ------------------------------------------------------------------------------------ preflight


def _spec(metric_options):
    definition = SimpleNamespace(name="kpass/kpass_metrics", options=metric_options)
    return SimpleNamespace(metrics=[definition], scorers=[SimpleNamespace(metrics=[definition])])


def test_one_walker_finds_the_kpass_metrics_of_a_task_hook_preflight_and_reader():
    from kpass.adapters.inspect_reader import _kpass_cluster_key
    from kpass.adapters.inspect_records import kpass_metric_definitions

    first = SimpleNamespace(name="kpass/pass_at_k", options={"k": 2, "cluster": "subject"})
    second = SimpleNamespace(name="kpass/kpass_metrics", options={"specs": ["pass@1,8"], "cluster": "topic"})
    other = SimpleNamespace(name="accuracy", options={})
    spec = SimpleNamespace(metrics={"group": [first, other]},
                           scorers=[SimpleNamespace(metrics=[{"value": [second]}, other]), SimpleNamespace(metrics=None)])
    assert kpass_metric_definitions(spec) == [first, second]
    assert im._kpass_clusters(spec) == ["subject", "topic"]
    assert _kpass_cluster_key(spec) == "subject"
    # the same walker reads a log's JSON (dicts), as the reader sees it
    as_json = {"scorers": [{"name": "match", "metrics": [{"name": "accuracy", "options": {}},
                                                         {"name": "kpass/kpass_metrics", "options": {"cluster": "topic"}}]}]}
    assert [d["name"] for d in kpass_metric_definitions(as_json)] == ["kpass/kpass_metrics"]
    assert _kpass_cluster_key(as_json) == "topic"
    assert [item.name for item in im._kpass_metric_specs(spec)] == ["pass@2", "pass@1", "pass@8"]
    assert kpass_metric_definitions(SimpleNamespace()) == []


def test_answers_are_read_and_cleaned_one_way():
    from kpass.adapters.inspect_records import answer_of, clean_answer

    assert [clean_answer(v) for v in (" 4 ", "", "  ", None, float("nan"), 4)] == ["4", None, None, None, None, "4"]
    assert answer_of(Score(value="C", answer=" 7 ")) == "7"
    assert answer_of(Score(value="C", answer="7", metadata={"kpass": {"answer": None}})) is None  # kpass wins
    assert answer_of(Score(value="C", answer="7", metadata={"kpass": {"answer": "8"}})) == "8"
    from kpass.adapters import inspect_scorers

    assert not hasattr(inspect_scorers, "_clean_answer")  # the scorers use inspect_records.clean_answer


def test_preflight_checks_epochs_and_cluster_keys_before_any_sample():
    preflight = kpass_preflight()
    samples = [SimpleNamespace(id="a", metadata={"subject": "x"}), SimpleNamespace(id="b", metadata={})]
    with pytest.raises(ValueError, match=r"^kpass metric 'pass@8' \(needs 8\) needs more samples.*epochs \(4\)"):
        asyncio.run(preflight.start_task(_spec({"specs": ["pass@1,8"]}), samples, 4))
    with pytest.raises(ValueError, match=r"cluster by the sample-metadata key 'subject'.*1 sample\(s\).*'b'"):
        asyncio.run(preflight.start_task(_spec({"specs": ["pass@4"], "cluster": "subject"}), samples, 4))
    assert asyncio.run(preflight.start_task(_spec({"specs": ["pass@4"]}), samples, 4)) == "kpass_preflight"


# ------------------------------------------------------------------------------------ plugin


def test_plugin_module_imports_and_registers_without_inspect():
    code = (
        "import sys; sys.modules['inspect_ai'] = None\n"   # any `import inspect_ai` now fails
        "import kpass.adapters.inspect_plugin\n"
        "from kpass import make_plugin_manager, get_registry\n"
        "registry = get_registry(make_plugin_manager())\n"
        "assert type(registry.readers['inspect']).__name__ == 'InspectLogReader', registry.readers\n"
        "assert not registry.readers['inspect'].can_read('pyproject.toml')\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_reader_can_read_only_inspect_logs(tmp_path):
    from kpass.adapters.inspect_reader import InspectLogReader

    reader = InspectLogReader()
    other = tmp_path / "results.json"
    other.write_text('{"results": {}, "version": 1}')
    csv = tmp_path / "samples.csv"
    csv.write_text("model,task\n")
    assert not reader.can_read(tmp_path)  # a directory without a log Inspect's listing shows
    inspect_json = tmp_path / "log.json"
    inspect_json.write_text('{\n  "version": 2,\n  "status": "success",\n  "eval": {}}')
    broken = tmp_path / "broken.eval"
    broken.write_bytes(b"PK\x03\x04 truncated")
    assert not reader.can_read(other) and not reader.can_read(csv)
    assert reader.can_read(inspect_json) and reader.can_read(broken)
    assert reader.can_read(tmp_path)  # now it holds one (broken.eval): a log directory, as inspect view --log-dir
    with pytest.raises(kpass.DataError, match=r"broken\.eval: cannot read this Inspect log"):
        reader.read(broken)
