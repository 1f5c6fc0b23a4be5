"""Inspect tasks whose completions stop (``stop_reason="stop"``, as at a stop sequence) inside an unclosed
``<think>`` block, for ``tests/adapters/test_inspect_open_reasoning.py`` (issue #33, the unclosed-reasoning
rule on Inspect).

8 problems x 4 epochs, ``mockllm`` outputs scripted per problem (:data:`DRAWS`, by ``problem % 2``): each
draw is ``(value, open)``: ``"G"`` the gold answer, ``"W"`` a wrong one, and ``open`` a completion that ends
inside ``<think>`` (no ``</think>`` after it) while still holding a number that ``match(numeric=True)``
extracts. A wrong open draw is unfinished; an open draw holding the gold answer is correct, so finished.

``think_kpass`` scores with ``kpass_scorer(match(numeric=True))`` and ``kpass_metrics("fin@1", "cons@4")``;
``think_plain`` scores the same completions with plain ``match(numeric=True)``.

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
N_PROBLEMS = 8
#: Per problem type: (answer, open) of its 4 draws.
DRAWS = (
    (("G", 0), ("W", 1), ("W", 1), ("G", 1)),   # two wrong answers inside an unclosed block, one gold one
    (("G", 0), ("G", 0), ("W", 0), ("W", 1)),
)


def gold(problem: int) -> int:
    return 100 + problem


def draws(problem: int) -> tuple[tuple[str, int], ...]:
    return DRAWS[problem % len(DRAWS)]


def draw(problem: int, epoch: int) -> str:
    """The completion of a problem's generation at a 1-based epoch."""
    value, open_block = draws(problem)[epoch - 1]
    answer = gold(problem) if value == "G" else gold(problem) + 1
    if open_block:
        return f"<think>Let me work: so maybe {answer}"
    return f"<think>Working it out.</think>\nANSWER: {answer}"


class Scripted:
    """custom_outputs callable: problem ``pNN`` gets its draws for epochs 1, 2, ... in call order."""

    def __init__(self) -> None:
        self.calls: Counter[int] = Counter()

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        problem = int(re.search(r"Problem p(\d+)", input[-1].text).group(1))
        self.calls[problem] += 1
        output = ModelOutput.from_content(model="fixture", content=draw(problem, self.calls[problem]),
                                          stop_reason="stop")
        output.usage = ModelUsage(input_tokens=10, output_tokens=12, total_tokens=22)
        return output


def dataset() -> list[Sample]:
    return [Sample(id=f"p{i:02d}", input=f"Problem p{i:02d}: what is the number?", target=str(gold(i)))
            for i in range(N_PROBLEMS)]


def _task(name: str, scorer: Any) -> Task:
    return Task(name=name, dataset=dataset(), solver=generate(), scorer=scorer,
                model=get_model("mockllm/model", custom_outputs=Scripted(), memoize=False),
                config=GenerateConfig(max_tokens=64), epochs=EPOCHS)


@task
def think_kpass() -> Task:
    from kpass.adapters.inspect_metrics import kpass_metrics
    from kpass.adapters.inspect_scorers import kpass_scorer

    return _task("think_kpass", kpass_scorer(match(numeric=True), metrics=[kpass_metrics("fin@1", "cons@4")]))


@task
def think_plain() -> Task:
    return _task("think_plain", match(numeric=True))
