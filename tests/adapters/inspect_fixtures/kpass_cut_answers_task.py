"""Inspect tasks whose generations are cut at ``max_tokens`` with a number in the cut text, for
``tests/adapters/test_inspect_cut_answers.py`` (issue #33 point 2).

12 problems x 8 epochs, ``mockllm`` outputs scripted per problem (:data:`DRAWS`, by ``problem % 4``):
each draw is ``(value, cut)``: ``"G"`` the gold answer, ``"W1"``/``"W2"``/``"X"`` wrong answers, and
``cut`` a generation stopped at the limit (``stop_reason="max_tokens"``) whose text still holds its
number, which ``match(numeric=True)`` extracts as the answer. A cut draw holding the gold answer is
correct (the answer was emitted), so finished; the other cut draws are unfinished, and their
answers abstain from cons@k by default.

``cut_kpass`` scores with ``kpass_scorer(match(numeric=True))`` and ``kpass_metrics("cons@8",
"cons@8[cut=vote]", "fin@1")`` plus Inspect's own ``mean()`` of the per-sample values that the
``kpass/cons_at`` epoch reducer (abstaining) gives; ``cut_plain`` scores the same generations with plain ``match(numeric=True)``.

Every output sets ``usage=ModelUsage(...)``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match, mean
from inspect_ai.solver import generate

EPOCHS = 8
N_PROBLEMS = 12
#: Per problem type: (answer, cut) of its 8 draws.
DRAWS = (
    (("G", 0), ("G", 0), ("G", 0), ("W1", 0), ("W1", 0), ("X", 1), ("X", 1), ("X", 1)),   # cut X ties gold
    (("G", 0), ("G", 0), ("G", 0), ("G", 0), ("W1", 0), ("X", 1), ("X", 1), ("X", 1)),   # gold wins both ways
    (("G", 0), ("G", 0), ("W1", 0), ("W1", 0), ("W1", 0), ("X", 1), ("X", 1), ("X", 1)),  # W1 wins both ways
    (("G", 0), ("G", 0), ("G", 1), ("W1", 0), ("W1", 0), ("W1", 1), ("W1", 1), ("W2", 0)),  # cut W1 outvotes gold
)


def gold(problem: int) -> int:
    return 100 + problem


def draws(problem: int) -> tuple[tuple[str, int], ...]:
    return DRAWS[problem % len(DRAWS)]


def number(problem: int, value: str) -> int:
    return {"G": gold(problem), "W1": gold(problem) + 1, "W2": gold(problem) + 2, "X": 7}[value]


def draw(problem: int, epoch: int) -> tuple[str, str]:
    """``(text, stop_reason)`` of a problem's generation at a 1-based epoch."""
    value, cut = draws(problem)[epoch - 1]
    if cut:
        return f"Let me work: so maybe {number(problem, value)} and then", "max_tokens"
    return f"Working it out.\nANSWER: {number(problem, value)}", "stop"


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
    return [Sample(id=f"p{i:02d}", input=f"Problem p{i:02d}: what is the number?", target=str(gold(i)))
            for i in range(N_PROBLEMS)]


def _task(name: str, scorer: Any, epochs: Any = EPOCHS) -> Task:
    return Task(name=name, dataset=dataset(), solver=generate(), scorer=scorer,
                model=get_model("mockllm/model", custom_outputs=Scripted(), memoize=False),
                config=GenerateConfig(max_tokens=32), epochs=epochs)


@task
def cut_kpass() -> Task:
    from kpass.adapters.inspect_metrics import cons_at, kpass_metrics
    from kpass.adapters.inspect_scorers import kpass_scorer

    metrics = [kpass_metrics("cons@8", "cons@8[cut=vote]", "fin@1"), mean()]
    return _task("cut_kpass", kpass_scorer(match(numeric=True), metrics=metrics),
                 epochs=Epochs(EPOCHS, [cons_at(EPOCHS)]))


@task
def cut_plain() -> Task:
    return _task("cut_plain", match(numeric=True))
