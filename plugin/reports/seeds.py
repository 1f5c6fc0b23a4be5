"""One seed per call: the host's ``rng=None`` (fresh entropy, SciPy SPEC 7) drawn once for a whole call.

The commands pass their own seed (``--seed``, default 0, :data:`kpass.reports.report.DEFAULT_SEED`),
so what they print does not change from run to run; a Python call without ``rng`` draws its entropy
here once, so every row of one report (every pair, rank and curve of a leaderboard) starts from the
same seed and records it (``details["seed"]``): the call can be repeated with ``rng=`` that seed.
"""

from __future__ import annotations

import secrets

import numpy as np

__all__ = ["seed_for_call"]


def seed_for_call(rng: int | np.random.Generator | None) -> int | np.random.Generator:
    """``rng`` for every bootstrap of one call: ``None`` becomes 128 bits of fresh entropy (what
    ``np.random.SeedSequence()`` draws); an int or a Generator is returned unchanged."""
    return secrets.randbits(128) if rng is None else rng
