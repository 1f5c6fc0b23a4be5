"""Regenerate ``rl_and_base.jsonl`` and ``checkpoints.jsonl``: seeded tables for the analyses.

``rl_and_base.jsonl``: a base model and an RL-tuned model on the same 80 problems, 32 samples
each, built as Yue et al. (2025) describe RL: problems the base solves become easier (p -> p^0.3),
the hardest ones (base p < 0.08) unsolvable. The tuned model writes twice as many output tokens.
Used by ``kpass crossover``, ``kpass frontier`` and ``pass@K[extrapolate]`` in docs/analyses.md.

``checkpoints.jsonl``: 8 checkpoints of one run, all equally good (the same p per problem), on
100 problems, 4 samples each: the winner's curse of ``--selected-on-this-set``.

Run from the repository root::

    python examples/sample_tables/make_rl_and_base.py
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def _line(model: str, problem: int, sample: int, correct: bool, tokens: int | None, answer: str | None) -> str:
    record = {"model": model, "task": "math", "problem_id": f"q{problem:03d}", "sample_index": sample,
              "correct": correct}
    if answer is not None:
        record["answer"] = answer
    if tokens is not None:
        record["output_tokens"] = tokens
    return json.dumps(record)


def main() -> None:
    rng = np.random.default_rng(18)
    p_base = rng.beta(0.6, 1.5, 80)
    p_rl = np.where(p_base > 0.08, p_base ** 0.3, 0.0)
    lines = []
    for model, p, mean_tokens in (("base", p_base, 900), ("rl", p_rl, 1800)):
        correct = rng.random((80, 32)) < p[:, None]
        tokens = rng.poisson(mean_tokens, (80, 32))
        wrong = rng.integers(0, 3, (80, 32))
        for j in range(80):
            for s in range(32):
                answer = str(j) if correct[j, s] else f"{j}-wrong-{wrong[j, s]}"
                lines.append(_line(model, j, s, bool(correct[j, s]), int(tokens[j, s]), answer))
    (HERE / "rl_and_base.jsonl").write_text("\n".join(lines) + "\n")

    p = rng.beta(1.0, 1.0, 100)
    lines = []
    for checkpoint in range(8):
        correct = rng.random((100, 4)) < p[:, None]
        for j in range(100):
            for s in range(4):
                lines.append(_line(f"step-{(checkpoint + 1) * 500}", j, s, bool(correct[j, s]), None, None))
    (HERE / "checkpoints.jsonl").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
