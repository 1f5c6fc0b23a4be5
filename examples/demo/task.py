"""The kpass demo task: a real Inspect eval of two SIMULATED models on the bundled problems.

    inspect eval examples/demo/task.py --log-dir demo-output/logs

runs both tasks below (16 epochs each): the same 40 problems, answered by the simulated ``base``
and ``rl`` models of :mod:`simulated_models` (served by Inspect's ``mockllm`` provider; nothing
here calls a real model), scored by a pattern scorer wrapped in kpass's CoT verifier (a simulated
judge checks the reasoning of every correct answer three times), with kpass metrics in Inspect's
own results table. ``make demo`` runs this and then ``kpass report`` / ``kpass compare`` on the logs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.scorer import pattern
from inspect_ai.solver import generate

sys.path.insert(0, str(Path(__file__).resolve().parent))

from simulated_models import SimulatedJudge, SimulatedModel, load_problems, prompt_for

from kpass.adapters.inspect_metrics import kpass_metrics, kpass_preflight
from kpass.adapters.inspect_scorers import cot_verifier

EPOCHS = 16
MAX_TOKENS = 1024
#: kpass metrics shown in Inspect's own results (``make demo`` reports more with ``kpass report``).
METRICS = ("pass@1,16", "cons@16", "fin@1", "cot-pass@16[rule=majority]")


def demo_task(behaviour: str, *, seed: int = 0, max_tokens: int = MAX_TOKENS, verdicts: int = 3) -> Task:
    problems = load_problems()
    dataset = [
        Sample(id=p["id"], input=prompt_for(p), target=p["answer"],
               metadata={"subject": p["subject"], "difficulty": p["difficulty"]})
        for p in problems
    ]
    return Task(
        name="kpass_demo",
        dataset=dataset,
        solver=generate(),
        scorer=cot_verifier(pattern(r"ANSWER:\s*(-?\d+)"), verdicts=verdicts),
        # clustered by subject, with Inspect's clustered standard error and a t interval (C-1 df)
        metrics=[kpass_metrics(*METRICS, cluster="subject", method="clustered-t")],
        model=get_model(f"mockllm/simulated-{behaviour}", custom_outputs=SimulatedModel(behaviour, seed, problems)),
        model_roles={"grader": get_model("mockllm/simulated-judge", custom_outputs=SimulatedJudge(seed))},
        config=GenerateConfig(max_tokens=max_tokens),
        epochs=EPOCHS,
        early_stopping=kpass_preflight(),
        metadata={"simulated": True},
    )


@task
def kpass_demo_base(seed: int = 0) -> Task:
    """SIMULATED base model (mockllm/simulated-base)."""
    return demo_task("base", seed=seed)


@task
def kpass_demo_rl(seed: int = 0) -> Task:
    """SIMULATED outcome-RL model (mockllm/simulated-rl)."""
    return demo_task("rl", seed=seed)
