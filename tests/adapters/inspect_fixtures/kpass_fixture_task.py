"""Inspect tasks for the kpass adapter's end-to-end tests (run with the real ``inspect eval`` CLI).

Every model is Inspect's ``mockllm`` provider with a ``custom_outputs`` callable. Each problem has
a scripted list of draws (one per epoch, ``EPOCHS`` of them); the callable hands out the draws of
a problem in call order, so every problem gets exactly its draws whatever the scheduling. Draw
codes:

- ``C`` correct answer, sound reasoning (the judge says yes, yes, yes)
- ``F`` correct answer, flawed reasoning: judge script Y N N (any: yes, majority: no, all: no)
- ``M`` correct answer, judge script Y Y ? (? = no verdict line: any yes, majority yes, all no)
- ``W1``/``W2``/``W3`` wrong answers gold+1, gold+2, gold+3
- ``T`` cut off by the token limit before any answer (stop_reason max_tokens): wrong, unfinished
- ``A`` cut off by the token limit after the correct answer: correct, finished
- ``X`` stopped without an answer line: wrong, finished

Every output sets ``usage=ModelUsage(...)`` (no tokenizer is ever used).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import mean, pattern, stderr
from inspect_ai.solver import generate

EPOCHS = 4
ANSWER_PATTERN = r"ANSWER:\s*(-?\d+)"

PROBLEMS = {  # id: (subject, gold, draws of model A)
    "p01": ("a", 11, ["C", "C", "C", "C"]),
    "p02": ("a", 12, ["C", "F", "W1", "W1"]),
    "p03": ("a", 13, ["M", "F", "W1", "W2"]),
    "p04": ("b", 14, ["W1", "W1", "W2", "T"]),
    "p05": ("b", 15, ["C", "M", "T", "T"]),
    "p06": ("b", 16, ["F", "F", "F", "C"]),
    "p07": ("b", 17, ["W1", "W2", "W3", "X"]),
    "p08": ("b", 18, ["C", "W1", "W1", "A"]),
    "p09": ("c", 19, ["T", "T", "T", "T"]),
    "p10": ("c", 20, ["C", "C", "F", "W2"]),
    "p11": ("c", 21, ["M", "M", "W1", "X"]),
    "p12": ("c", 22, ["A", "C", "C", "W3"]),
}

#: Model B: model A with every truncated draw answered correctly.
DRAWS_B = {pid: [("C" if code == "T" else code) for code in draws] for pid, (_, _, draws) in PROBLEMS.items()}
DRAWS_A = {pid: list(draws) for pid, (_, _, draws) in PROBLEMS.items()}

JUDGE_SCRIPTS = {"C": "YYY", "F": "YNN", "M": "YY?", "A": "YYY"}

KPASS_SPECS = (
    "pass@1,2,4", "pass^2", "g-pass@4_0.5", "mg-pass@4", "cons@1,2,4", "fin@1",
    "cot-pass@2[rule=any]", "cot-pass@2[rule=majority]", "cot-pass@2[rule=all]",
)


def prompt(pid: str) -> str:
    return f"Problem {pid}: what is the secret number? End with 'ANSWER: <integer>'."


class ScriptedModel:
    """custom_outputs callable: problem ``pid`` gets its scripted draws in call order."""

    def __init__(self, draws: dict[str, list[str]]) -> None:
        self.draws = draws
        self.calls: Counter[str] = Counter()

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        pid = re.search(r"Problem (p\d+)", input[-1].text).group(1)
        index = self.calls[pid]
        self.calls[pid] += 1
        code = self.draws[pid][index]
        gold = PROBLEMS[pid][1]
        header = f"fixture draw {index} of {pid} ({code})"
        if code == "T":
            text, stop, tokens = f"{header}\nworking ... (cut off", "max_tokens", 64
        elif code == "A":
            text = f"{header}\nJUDGE-SCRIPT: {JUDGE_SCRIPTS[code]}\nANSWER: {gold}\nand then more ... (cut off"
            stop, tokens = "max_tokens", 64
        elif code == "X":
            text, stop, tokens = f"{header}\nI do not know.", "stop", 20
        elif code.startswith("W"):
            text, stop, tokens = f"{header}\nANSWER: {gold + int(code[1])}", "stop", 30 + index
        else:
            text, stop, tokens = f"{header}\nJUDGE-SCRIPT: {JUDGE_SCRIPTS[code]}\nANSWER: {gold}", "stop", 40 + index
        output = ModelOutput.from_content(model="fixture", content=text, stop_reason=stop)
        output.usage = ModelUsage(input_tokens=10, output_tokens=tokens, total_tokens=10 + tokens)
        return output


class ScriptedJudge:
    """custom_outputs callable for the CoT judge: follows the JUDGE-SCRIPT of the solution."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        text = input[-1].text
        script = re.search(r"JUDGE-SCRIPT: ([YN?]+)", text).group(1)
        index = self.calls[text]
        self.calls[text] += 1
        verdict = script[index % len(script)]
        reply = {"Y": "Fine.\nVERDICT: CORRECT", "N": "Step 2 is wrong.\nVERDICT: INCORRECT",
                 "?": "I cannot decide."}[verdict]
        output = ModelOutput.from_content(model="judge", content=reply)
        output.usage = ModelUsage(input_tokens=50, output_tokens=5, total_tokens=55)
        return output


def dataset() -> list[Sample]:
    return [Sample(id=pid, input=prompt(pid), target=str(gold), metadata={"subject": subject})
            for pid, (subject, gold, _) in PROBLEMS.items()]


def model(name: str, draws: dict[str, list[str]]):
    return get_model(name, custom_outputs=ScriptedModel(draws), memoize=False)


def judge_roles() -> dict[str, Any]:
    return {"grader": get_model("mockllm/judge", custom_outputs=ScriptedJudge(), memoize=False)}


@task
def fixture_plain() -> Task:
    """No kpass at all: Inspect's own scorer, reducers (from the CLI) and clustered stderr."""
    return Task(dataset=dataset(), solver=generate(), scorer=pattern(ANSWER_PATTERN),
                metrics=[mean(), stderr(cluster="subject")], model=model("mockllm/model", DRAWS_A),
                config=GenerateConfig(max_tokens=64), epochs=Epochs(EPOCHS, ["pass_at_2"]))


def _full(draws: dict[str, list[str]], model_name: str) -> Task:
    from kpass.adapters.inspect_metrics import kpass_metrics
    from kpass.adapters.inspect_scorers import cot_verifier

    return Task(
        name="fixture_full",
        dataset=dataset(), solver=generate(),
        scorer=cot_verifier(pattern(ANSWER_PATTERN), verdicts=3),
        metrics=[mean(), stderr(cluster="subject"),
                 kpass_metrics(*KPASS_SPECS, cluster="subject", method="clustered-t")],
        model=model(model_name, draws), model_roles=judge_roles(),
        config=GenerateConfig(max_tokens=64), epochs=Epochs(EPOCHS, ["pass_at_2"]),
    )


@task
def fixture_full() -> Task:
    """kpass scorer (CoT verifier), kpass metrics and Inspect's metrics on one log (model A)."""
    return _full(DRAWS_A, "mockllm/model")


@task
def fixture_full_b() -> Task:
    """The same task for model B (several models in the reader and compare tests)."""
    return _full(DRAWS_B, "mockllm/model-b")


@task
def fixture_k_too_large(preflight: bool = False) -> Task:
    """kpass pass@8 on a 4-epoch eval: an error naming the metric and the epochs."""
    from kpass.adapters.inspect_metrics import kpass_metrics, kpass_preflight

    return Task(
        name="fixture_k_too_large_preflight" if preflight else "fixture_k_too_large",
        dataset=dataset(), solver=generate(), scorer=pattern(ANSWER_PATTERN),
        metrics=[kpass_metrics("pass@1,8")], model=model("mockllm/model", DRAWS_A),
        config=GenerateConfig(max_tokens=64), epochs=EPOCHS,
        early_stopping=kpass_preflight() if preflight else None,
    )


@task
def fixture_k_too_large_preflight() -> Task:
    return fixture_k_too_large(preflight=True)
