"""Inspect tasks for the token-budget tests of the Inspect adapter (``test_inspect_budget.py``).

A ``mockllm`` model answers every problem with scripted draws (one per epoch) whose final answer
ends at a known output-token position. Texts are built from pieces whose cl100k_base tokens are
known (the test checks one of them against tiktoken)::

    "step" + " step" * (w - 1)          w tokens of thinking
    " so the answer is 17."             7 tokens: " so", " the", " answer", " is", " ", "17", "."
    " I do not know."                   5 tokens

Draw codes ``(code, w)``, with ``MAX_TOKENS = 40``:

- ``C`` correct answer, then stop: answer complete at token ``w + 6``, ``w + 7`` tokens;
- ``W`` wrong answer (gold + 1), then stop: the same positions;
- ``A`` correct answer, then thinking on until the limit: answer at ``w + 6``, cut off at 40 tokens
  (stop reason ``max_tokens``);
- ``T`` thinking until the limit without an answer: 40 tokens, stop reason ``max_tokens``;
- ``X`` no answer, stopped on its own: ``w + 5`` tokens.

Every output sets ``usage=ModelUsage(...)`` with exactly those token counts (no tokenizer is used
by Inspect). ``budget_kpass`` scores with ``kpass_scorer(pattern(...))``; ``budget_plain`` with
``pattern(...)`` alone (a log made without kpass).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import pattern
from inspect_ai.solver import generate

EPOCHS = 4
MAX_TOKENS = 40
ANSWER_PATTERN = r"answer is (\d+)"

PROBLEMS = {  # id: (gold, draws)
    "b1": (17, [("C", 2), ("C", 10), ("W", 5), ("T", 0)]),
    "b2": (23, [("C", 20), ("C", 30), ("A", 5), ("X", 3)]),
    "b3": (31, [("W", 1), ("W", 15), ("T", 0), ("T", 0)]),
    "b4": (42, [("C", 1), ("A", 20), ("C", 6), ("X", 10)]),
    "b5": (56, [("T", 0), ("C", 14), ("C", 3), ("W", 25)]),
    "b6": (64, [("A", 12), ("C", 33), ("W", 2), ("C", 9)]),
}


def thinking(words: int) -> str:
    return " ".join(["step"] * words)


def draw_text(code: str, words: int, gold: int) -> tuple[str, str, int]:
    """``(text, stop_reason, output_tokens)`` of one draw."""
    if code in ("C", "W"):
        answer = gold if code == "C" else gold + 1
        return f"{thinking(words)} so the answer is {answer}.", "stop", words + 7
    if code == "A":
        tail = "".join([" step"] * (MAX_TOKENS - words - 7))
        return f"{thinking(words)} so the answer is {gold}.{tail}", "max_tokens", MAX_TOKENS
    if code == "T":
        return thinking(MAX_TOKENS), "max_tokens", MAX_TOKENS
    if code == "X":
        return f"{thinking(words)} I do not know.", "stop", words + 5
    raise ValueError(code)


class ScriptedModel:
    """custom_outputs callable: problem ``pid`` gets its scripted draws in call order."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        pid = re.search(r"Problem (b\d+)", input[-1].text).group(1)
        index = self.calls[pid]
        self.calls[pid] += 1
        gold, draws = PROBLEMS[pid]
        text, stop, tokens = draw_text(*draws[index], gold)
        output = ModelOutput.from_content(model="budget-fixture", content=text, stop_reason=stop)
        output.usage = ModelUsage(input_tokens=10, output_tokens=tokens, total_tokens=10 + tokens)
        return output


def dataset() -> list[Sample]:
    return [Sample(id=pid, input=f"Problem {pid}: think, then say 'the answer is <n>'.", target=str(gold))
            for pid, (gold, _) in PROBLEMS.items()]


def _task(scorer: Any) -> Task:
    return Task(dataset=dataset(), solver=generate(), scorer=scorer,
                model=get_model("mockllm/model", custom_outputs=ScriptedModel(), memoize=False),
                config=GenerateConfig(max_tokens=MAX_TOKENS), epochs=Epochs(EPOCHS))


@task
def budget_kpass() -> Task:
    from kpass.adapters.inspect_scorers import kpass_scorer

    return _task(kpass_scorer(pattern(ANSWER_PATTERN)))


@task
def budget_plain() -> Task:
    return _task(pattern(ANSWER_PATTERN))
