"""Inspect tasks with truncated generations, for ``tests/adapters/test_inspect_logs.py``.

20 problems x 4 epochs, ``mockllm`` outputs scripted by (problem, epoch) (:func:`draw`):

- truncated (``stop_reason="max_tokens"``) when ``(problem + epoch) % 5 == 0`` (16 of 80): the cut
  text holds a number, which ``match(numeric=True)`` extracts; it is the gold answer for problem
  ``p01`` (correct although cut: the answer was there) and a wrong number otherwise;
- otherwise it stops on its own with ``ANSWER: <gold>`` when ``(problem * epoch) % 3 != 0``, else a
  wrong answer.

``trunc_kpass`` scores with ``kpass_scorer(match(numeric=True))`` and three kpass metrics on the
one scorer (clustered by ``subject``; ``prefix="flat"``; and a third reporting the same keys as
the first); ``trunc_plain`` scores the same generations with plain ``match(numeric=True)``;
``trunc_k_too_large`` asks for pass@8 on 4 epochs without ``kpass_preflight()``.

Every output sets ``usage=ModelUsage(...)``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

EPOCHS = 4
N_PROBLEMS = 20
SUBJECTS = ("algebra", "geometry", "counting", "numbers", "calculus")


def gold(problem: int) -> int:
    return 100 + problem


def truncated(problem: int, epoch: int) -> bool:
    return (problem + epoch) % 5 == 0


def correct(problem: int, epoch: int) -> bool:
    if truncated(problem, epoch):
        return problem == 1
    return (problem * epoch) % 3 != 0


def finished(problem: int, epoch: int) -> bool:
    """kpass's rule (inspect_records.finished_flag): correct, or not cut at the limit."""
    return correct(problem, epoch) or not truncated(problem, epoch)


def draw(problem: int, epoch: int) -> tuple[str, str]:
    """``(text, stop_reason)`` of a problem's generation at a 1-based epoch."""
    if truncated(problem, epoch):
        last = gold(problem) if problem == 1 else 7
        return f"Let me work: 3 + 4 = 7, so maybe {last} and then", "max_tokens"
    answer = gold(problem) if correct(problem, epoch) else gold(problem) + 1
    return f"Working it out.\nANSWER: {answer}", "stop"


class Scripted:
    """custom_outputs callable: problem ``pNN`` gets its draws for epochs 1, 2, ... in call order."""

    def __init__(self) -> None:
        self.calls: Counter[int] = Counter()

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        problem = int(re.search(r"Problem p(\d+)", input[-1].text).group(1))
        self.calls[problem] += 1
        text, stop = draw(problem, self.calls[problem])
        output = ModelOutput.from_content(model="fixture", content=text, stop_reason=stop)
        output.usage = ModelUsage(input_tokens=10, output_tokens=32 if stop == "max_tokens" else 12,
                                  total_tokens=42 if stop == "max_tokens" else 22)
        return output


def dataset() -> list[Sample]:
    return [Sample(id=f"p{i:02d}", input=f"Problem p{i:02d}: what is the number?", target=str(gold(i)),
                   metadata={"subject": SUBJECTS[i % len(SUBJECTS)]}) for i in range(N_PROBLEMS)]


def _task(name: str, scorer: Any, epochs: int = EPOCHS) -> Task:
    return Task(name=name, dataset=dataset(), solver=generate(), scorer=scorer,
                model=get_model("mockllm/model", custom_outputs=Scripted(), memoize=False),
                config=GenerateConfig(max_tokens=32), epochs=epochs)


@task
def trunc_kpass() -> Task:
    from kpass.adapters.inspect_metrics import kpass_metrics
    from kpass.adapters.inspect_scorers import kpass_scorer

    metrics = [kpass_metrics("pass@1", "fin@1", cluster="subject"),
               kpass_metrics("pass@1", "fin@1", prefix="flat"),
               kpass_metrics("pass@1", "fin@1")]  # the same keys as the first: prefixed, never pass@12
    return _task("trunc_kpass", kpass_scorer(match(numeric=True), metrics=metrics))


@task
def trunc_plain() -> Task:
    return _task("trunc_plain", match(numeric=True))


@task
def trunc_k_too_large() -> Task:
    from kpass.adapters.inspect_metrics import kpass_metrics
    from kpass.adapters.inspect_scorers import kpass_scorer

    return _task("trunc_k_too_large", kpass_scorer(match(numeric=True), metrics=[kpass_metrics("pass@1,8")]))
