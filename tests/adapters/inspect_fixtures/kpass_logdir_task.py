"""One Inspect task, two mock models, for the log-directory tests (``test_inspect_log_dirs.py``).

``logdir_a`` and ``logdir_b`` are the same task (``Task(name="logdir")``) for ``mockllm/model-a``
and ``mockllm/model-b``: ``N_PROBLEMS`` problems, ``EPOCHS`` epochs. Problem ``p`` at epoch ``e``
(1-based) is answered correctly exactly when :func:`correct` says so; each problem's draws are
handed out in call order, so a run of any subset of the ids (``inspect eval --sample-id``, as a
shard does) answers them as the full run does. Every output sets ``usage=ModelUsage(...)``.
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

N_PROBLEMS = 10
EPOCHS = 3
IDS = [f"q{p:02d}" for p in range(1, N_PROBLEMS + 1)]


def correct(variant: str, problem: int, epoch: int) -> bool:
    """The script: whether ``variant``'s answer to problem ``problem`` (1-based) at ``epoch`` is right."""
    offset = 0 if variant == "a" else 2
    return (problem * 7 + epoch * 3 + offset) % 5 < 2 + (problem % 3 == 0)


class ScriptedModel:
    """custom_outputs callable: the draws of :func:`correct`, per problem in call order."""

    def __init__(self, variant: str) -> None:
        self.variant = variant
        self.calls: Counter[int] = Counter()

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        problem = int(re.search(r"Problem q(\d+)", input[-1].text).group(1))
        self.calls[problem] += 1
        epoch = self.calls[problem]
        answer = problem * 10 + (0 if correct(self.variant, problem, epoch) else epoch)
        output = ModelOutput.from_content(model=f"model-{self.variant}", content=f"ANSWER: {answer}",
                                          stop_reason="stop")
        output.usage = ModelUsage(input_tokens=12, output_tokens=5 + epoch, total_tokens=17 + epoch)
        return output


def _task(variant: str) -> Task:
    dataset = [Sample(id=pid, input=f"Problem {pid}: give the number. End with 'ANSWER: <n>'.",
                      target=str(int(pid[1:]) * 10), metadata={"subject": "even" if int(pid[1:]) % 2 == 0 else "odd"})
               for pid in IDS]
    model = get_model(f"mockllm/model-{variant}", custom_outputs=ScriptedModel(variant), memoize=False)
    return Task(name="logdir", dataset=dataset, solver=generate(), scorer=match(numeric=True), model=model,
                config=GenerateConfig(max_tokens=32), epochs=EPOCHS)


@task
def logdir_a() -> Task:
    return _task("a")


@task
def logdir_b() -> Task:
    return _task("b")
