"""Regenerate ``two_models.jsonl``: a small, seeded sample table of two simulated models.

Two models ("base" and "tuned") answer the same 48 problems of two tasks (24 each, in 4 subject
clusters) 16 times each, except three problems of "base" that have only 6 samples (to show how a
report lists the problems a metric excludes). Every sample records its extracted answer (so cons@k
can be computed), whether it finished, and its output tokens. Run from the repository root::

    python examples/sample_tables/make_two_models.py
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def main() -> None:
    rng = np.random.default_rng(20250101)
    tasks = {"arith": 24, "logic": 24}
    subjects = ["algebra", "counting", "geometry", "number-theory"]
    difficulty = {task: rng.beta(0.6, 0.5, size=size) for task, size in tasks.items()}
    lines = []
    for model, boost in (("base", 0.0), ("tuned", 0.12)):
        for task, size in tasks.items():
            for j in range(size):
                p = float(np.clip(difficulty[task][j] + boost * (1 - difficulty[task][j]), 0, 1))
                n = 6 if (model == "base" and task == "logic" and j in (3, 11, 19)) else 16
                gold = str(10 + j)
                wrong = [str(100 + j), str(200 + j), str(300 + j)]
                for s in range(n):
                    finished = bool(rng.random() < 0.93)
                    correct = finished and bool(rng.random() < p)
                    if correct:
                        answer = gold
                    elif not finished:
                        answer = None
                    else:
                        answer = wrong[int(rng.choice(3, p=[0.6, 0.3, 0.1]))]
                    tokens = int(rng.integers(300, 4000)) if finished else 4096
                    lines.append(json.dumps({
                        "model": model, "task": task, "problem_id": f"{task}-{j:02d}", "sample_index": s,
                        "correct": correct, "answer": answer, "finished": finished, "output_tokens": tokens,
                        "cluster": subjects[j % 4],
                    }))
    (HERE / "two_models.jsonl").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
