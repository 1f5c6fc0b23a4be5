"""Count how often a ``kpass`` command crosses from one kpass module into another.

A crossing is a Python call whose caller and callee live in different ``kpass`` modules (calls
into or out of other packages are not counted). The count measures how much a command goes back
and forth between rooms; a command that flows one way (parse, check, load, compute, render,
emit) crosses few module borders. Imports made by the command itself are traced too (module
bodies are called by importlib, so only the kpass calls they make count); ``kpass`` and
``kpass.cli.main`` are imported before tracing starts.

Usage::

    .venv/bin/python scripts/trace_command.py                 # report EXAMPLE -m pass@1,8 --cluster-by subject
    .venv/bin/python scripts/trace_command.py --top 15 -- report FILE -m pass@1,8 --cluster-by subject
    .venv/bin/python scripts/trace_command.py --imports -- metrics   # also list the kpass.adapters imported

Without a command, a seeded example table with a ``subject`` field (3 models, 40 problems, 8
samples each) is written to a temporary directory and ``kpass report`` is traced on it.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import Any


def write_example(path: str) -> str:
    """A seeded JSONL table: 3 models, 40 problems in 5 subjects, 8 samples each."""
    import numpy as np

    rng = np.random.default_rng(35)
    difficulty = rng.uniform(0.05, 0.95, size=40)
    with open(path, "w", encoding="utf-8") as out:
        for m, model in enumerate(("a", "b", "c")):
            correct = rng.random((40, 8)) < np.clip(difficulty + 0.05 * m, 0, 1)[:, None]
            for problem in range(40):
                for sample in range(8):
                    record = {"model": model, "task": "math", "problem_id": f"q{problem:03d}",
                              "sample_index": sample, "correct": bool(correct[problem, sample]),
                              "subject": f"s{problem % 5}"}
                    out.write(json.dumps(record) + "\n")
    return path


class CrossingCounter:
    """A ``sys.setprofile`` hook counting calls between different ``kpass`` modules."""

    def __init__(self) -> None:
        self.pairs: collections.Counter[tuple[str, str]] = collections.Counter()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_back is None:
            return
        callee = frame.f_globals.get("__name__", "")
        caller = frame.f_back.f_globals.get("__name__", "")
        if callee != caller and _is_kpass(callee) and _is_kpass(caller):
            self.pairs[(caller, callee)] += 1

    @property
    def crossings(self) -> int:
        return sum(self.pairs.values())

    @property
    def modules(self) -> set[str]:
        return {module for pair in self.pairs for module in pair}


def _is_kpass(module: str) -> bool:
    return module == "kpass" or module.startswith("kpass.")


@contextlib.contextmanager
def tracing(counter: CrossingCounter) -> Iterator[None]:
    previous = sys.getprofile()
    sys.setprofile(counter)
    try:
        yield
    finally:
        sys.setprofile(previous)


def trace(command: Sequence[str]) -> tuple[int, CrossingCounter, str]:
    """Run ``kpass COMMAND`` (its output swallowed) under the counter; returns the exit code, the
    counter and what the command wrote to stderr."""
    import kpass  # noqa: F401 - imported before tracing: the package's own start-up is not the command
    from kpass.cli.main import main

    counter = CrossingCounter()
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), tracing(counter):
        code = main([*command, "--no-progress"] if _takes_no_progress(command) else list(command))
    return code, counter, stderr.getvalue()


def _takes_no_progress(command: Sequence[str]) -> bool:
    return bool(command) and command[0] not in ("metrics", "plugins")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=10, help="list the most frequent caller -> callee pairs")
    parser.add_argument("--imports", action="store_true", help="list the kpass.adapters modules imported")
    parser.add_argument("command", nargs="*", help="the kpass command and its arguments (after --)")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        command = options.command or ["report", write_example(os.path.join(directory, "subjects.jsonl")),
                                      "-m", "pass@1,8", "--cluster-by", "subject"]
        code, counter, errors = trace(command)
    print(f"kpass {' '.join(command)}: exit {code}")
    if errors.strip():
        print(f"stderr: {errors.strip()}")
    print(f"{counter.crossings} crossings between {len(counter.modules)} kpass modules "
          f"({len(counter.pairs)} caller -> callee pairs)")
    for (caller, callee), count in counter.pairs.most_common(options.top):
        print(f"{count:7d}  {caller} -> {callee}")
    if options.imports:
        print("kpass.adapters imported:", sorted(m for m in sys.modules if m.startswith("kpass.adapters")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
