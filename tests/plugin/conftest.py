"""Fixtures for the host tests: a CLI runner isolated from installed entry-point plugins."""

from __future__ import annotations

import json

import pytest

import kpass
from kpass import cli


@pytest.fixture
def run_cli(monkeypatch, capsys):
    """``run_cli(*args) -> (exit_code, stdout, stderr)`` with only the built-in plugins loaded."""
    monkeypatch.setenv("KPASS_LOAD_PLUGINS", "")
    kpass.reset_plugin_manager()

    def run(*args):
        capsys.readouterr()
        code = cli.main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    yield run
    kpass.reset_plugin_manager()


@pytest.fixture
def write_jsonl(tmp_path):
    """``write_jsonl(records, name="samples.jsonl") -> path``; strings are written verbatim."""

    def write(records, name="samples.jsonl"):
        path = tmp_path / name
        lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
        path.write_text("".join(line + "\n" for line in lines))
        return path

    return write


def make_records(model="m", task="t", n_problems=4, n=4, correct=lambda j, s: (j + s) % 2 == 0, **extra):
    return [
        {"model": model, "task": task, "problem_id": f"p{j}", "sample_index": s, "correct": bool(correct(j, s)),
         **{key: (value(j, s) if callable(value) else value) for key, value in extra.items()}}
        for j in range(n_problems) for s in range(n)
    ]
