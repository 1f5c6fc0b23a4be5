"""Inspect tasks for the seed-trap test (tests/adapters/test_seed_trap_e2e.py), run with the real ``inspect eval``.

Arithmetic questions that tests/adapters/fake_openai_server.py answers (a server that honours ``seed``),
asked through Inspect's OpenAI-compatible provider (``openai-api/fake/fake`` with ``FAKE_BASE_URL``), 4 epochs:

* ``seed_kpass``: scored by ``kpass_scorer(match(numeric=True))``, whose scores carry each output's digest;
* ``seed_plain``: scored by Inspect's own ``match(numeric=True)``; kpass's task hook takes the digests.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate

from kpass.adapters.inspect_metrics import kpass_metrics
from kpass.adapters.inspect_scorers import kpass_scorer

EPOCHS = 4
PROBLEMS = [(22, "+", 11), (40, "-", 13), (7, "*", 6), (91, "+", 9), (15, "*", 4), (63, "-", 27), (18, "+", 49),
            (12, "*", 12), (35, "+", 8), (81, "-", 19)]


def _solve(a: int, op: str, b: int) -> int:
    return {"+": a + b, "-": a - b, "*": a * b}[op]


def _dataset() -> list[Sample]:
    return [Sample(id=f"q{i:02d}", input=f"Question: What is {a} {op} {b}?\nAnswer:", target=str(_solve(a, op, b)))
            for i, (a, op, b) in enumerate(PROBLEMS)]


@task
def seed_kpass() -> Task:
    return Task(dataset=_dataset(), solver=generate(), epochs=EPOCHS,
                scorer=kpass_scorer(match(numeric=True), metrics=[kpass_metrics("pass@1,4", "cons@4")]))


@task
def seed_plain() -> Task:
    return Task(dataset=_dataset(), solver=generate(), epochs=EPOCHS, scorer=match(numeric=True),
                metrics=[kpass_metrics("pass@1,4")])
