"""SIMULATED models for the kpass demo. Nothing here is a real language model.

Inspect's ``mockllm`` provider serves two simulated "models" and a simulated CoT judge through its
``custom_outputs`` hook (a callable that receives the prompt and returns a ``ModelOutput``). Every
output says that it is simulated. Behaviour is seeded per problem, so a run is reproducible:

``base``
    per-problem accuracy falls with the problem's difficulty; wrong answers are spread over six
    distractors; responses are long (about 700-1200 tokens), so at the demo's 1024-token budget the
    harder problems are often cut off before the answer; when the answer is right, the reasoning
    is sound only half of the time (lucky guesses and cancelling errors).
``rl``
    the same problems after a simulated outcome-RL run: sharper (accuracy ``p ** 0.45`` where the
    base succeeds at least 12% of the time) but narrower (the hardest problems, where the base
    rarely succeeds, drop to 30% of the base's rate); wrong answers collapse onto one or two
    distractors; responses are shorter (about 450-750 tokens); right answers come with sound
    reasoning 90% of the time.
``judge``
    reads the solution it is asked to check and returns the right verdict 85% of the time, no
    verdict line 5% of the time (an invalid verdict) and the wrong verdict otherwise.

Why a callable rather than a list of outputs: Inspect runs samples and epochs concurrently, so a
list would hand outputs to problems in a scheduling-dependent order. The callable finds the problem
from the prompt and counts that problem's calls; call ``i`` of problem ``j`` always gets the output
drawn from ``Random(f"{seed}:{model}:{j}:{i}")``. Which epoch receives which draw can vary between
runs, but every problem's set of outputs, and hence every kpass number, is the same in every run.
Each output names its draw, so the judge's prompt is unique per draw and its verdicts (seeded by
the prompt and the call number) do not depend on scheduling either. Every output sets
``usage=ModelUsage(...)`` (the simulated token count), so the mock never counts
tokens with a tokenizer.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

from inspect_ai.model import ModelOutput, ModelUsage

HERE = Path(__file__).resolve().parent
PROBLEMS_FILE = HERE / "problems.jsonl"
INSTRUCTION = "Think step by step, then give the final answer on its own line as 'ANSWER: <integer>'."
SIMULATED_BANNER = "[SIMULATED OUTPUT - kpass demo, {model} (not a real language model)]"
BEHAVIOURS = ("base", "rl")


def load_problems(path: Path = PROBLEMS_FILE) -> list[dict[str, Any]]:
    """The bundled problem set: id, subject, question, answer, difficulty (0 easy .. 1 hard)."""
    with path.open() as handle:
        return [json.loads(line) for line in handle if line.strip()]


def prompt_for(problem: dict[str, Any]) -> str:
    return f"{problem['question']}\n{INSTRUCTION}"


def _latent(problem: dict[str, Any], seed: int) -> dict[str, Any]:
    """Per-problem simulated ability of both models (shared latent draw, so they are correlated)."""
    rng = random.Random(f"{seed}:latent:{problem['id']}")
    difficulty = float(problem["difficulty"])
    p_base = min(0.97, max(0.02, 1.05 - 1.1 * difficulty + rng.gauss(0.0, 0.12)))
    p_rl = p_base * 0.3 if p_base < 0.12 else min(0.98, p_base ** 0.45)
    gold = int(problem["answer"])
    offsets = rng.sample([-10, -2, -1, 1, 2, 3, 10, 11, -9, 5], 6)
    distractors = [gold + offset for offset in offsets]
    base_weights = [rng.random() + 0.5 for _ in range(6)]
    rl_weights = [rng.random() ** 3 for _ in range(2)]
    return {
        "difficulty": difficulty,
        "p": {"base": p_base, "rl": p_rl},
        "distractors": {"base": distractors, "rl": distractors[:2]},
        "weights": {"base": base_weights, "rl": rl_weights},
        "length": {"base": (700.0 + 500.0 * difficulty, 0.45), "rl": (450.0 + 300.0 * difficulty, 0.3)},
        "sound": {"base": 0.5, "rl": 0.9},
    }


class SimulatedModel:
    """``custom_outputs`` callable for ``mockllm``: the simulated ``base`` or ``rl`` model."""

    def __init__(self, behaviour: str, seed: int = 0, problems: list[dict[str, Any]] | None = None) -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"`behaviour` must be one of {BEHAVIOURS}; got {behaviour!r}.")
        self.behaviour = behaviour
        self.seed = seed
        self.problems = {prompt_for(p): p for p in (problems or load_problems())}
        self.latent = {p["id"]: _latent(p, seed) for p in self.problems.values()}
        self.calls: Counter[str] = Counter()

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        prompt = input[-1].text
        problem = self.problems.get(prompt)
        if problem is None:
            raise ValueError(f"the simulated {self.behaviour} model only knows the demo problems; got {prompt[:80]!r}")
        index = self.calls[problem["id"]]
        self.calls[problem["id"]] += 1
        return self.output(problem, index, max_tokens=config.max_tokens)

    def output(self, problem: dict[str, Any], index: int, *, max_tokens: int | None) -> ModelOutput:
        kind = self.behaviour
        latent = self.latent[problem["id"]]
        rng = random.Random(f"{self.seed}:{kind}:{problem['id']}:{index}")
        median, sigma = latent["length"][kind]
        length = max(40, int(round(median * math.exp(rng.gauss(0.0, sigma)))))
        correct = rng.random() < latent["p"][kind]
        answer = int(problem["answer"]) if correct else rng.choices(latent["distractors"][kind],
                                                                     weights=latent["weights"][kind])[0]
        sound = correct and rng.random() < latent["sound"][kind]
        lines = [
            SIMULATED_BANNER.format(model=f"model '{kind}', draw {index}"),
            f"Step 1: restate the problem: {problem['question']}",
            "Step 2: (simulated intermediate work)",
        ]
        truncated = max_tokens is not None and length > max_tokens
        if truncated:
            lines.append("Step 3: (simulated work continues past the token limit ...")
            tokens, stop_reason = int(max_tokens), "max_tokens"
        else:
            check = "sound" if (sound or not correct) else "FLAWED (a simulated step is wrong)"
            lines += [f"Reasoning check: {check}", f"ANSWER: {answer}"]
            tokens, stop_reason = length, "stop"
        output = ModelOutput.from_content(model=f"simulated-{kind}", content="\n".join(lines), stop_reason=stop_reason)
        output.usage = ModelUsage(input_tokens=40, output_tokens=tokens, total_tokens=40 + tokens)
        return output


class SimulatedJudge:
    """``custom_outputs`` callable for ``mockllm``: a noisy simulated CoT judge."""

    def __init__(self, seed: int = 0, accuracy: float = 0.85, invalid: float = 0.05) -> None:
        self.seed = seed
        self.accuracy = accuracy
        self.invalid = invalid
        self.calls: Counter[str] = Counter()

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        prompt = input[-1].text
        index = self.calls[prompt]
        self.calls[prompt] += 1
        rng = random.Random(f"{self.seed}:judge:{prompt}:{index}")
        flawed = "Reasoning check: FLAWED" in prompt
        draw = rng.random()
        lines = [SIMULATED_BANNER.format(model="judge")]
        if draw < self.invalid:
            lines.append("(simulated judge forgot the verdict line)")
        else:
            right = draw < self.invalid + self.accuracy * (1 - self.invalid)
            says_correct = (not flawed) if right else flawed
            lines.append("VERDICT: CORRECT" if says_correct else "VERDICT: INCORRECT")
        output = ModelOutput.from_content(model="simulated-judge", content="\n".join(lines))
        output.usage = ModelUsage(input_tokens=200, output_tokens=12, total_tokens=212)
        return output
