"""What the end-to-end Inspect tests of fixture tasks share: one real ``inspect eval`` of several tasks of a
fixture module, and the estimates ``kpass report`` prints for a log.

Imported from the tests' folder on ``sys.path`` (tests/ is not a package); not a test module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log

from kpass.cli import main

FIXTURES = Path(__file__).resolve().parent / "inspect_fixtures"
BIN = Path(sys.executable).parent


def _texts(notes):
    """Notes (``kpass.Note`` or their JSON records) as ``rows: text`` lines, to search in."""
    from kpass.notes import as_note

    return [str(as_note(note)) for note in notes]



def run_fixture_tasks(log_dir: Path, module: str, tasks: list[str]) -> dict[str, Path]:
    """``inspect eval module@task ...`` into ``log_dir`` (from the fixtures' folder, without the caller's
    INSPECT_/KPASS_ settings); the log of each task by name, every one of them written."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INSPECT_", "KPASS_"))}
    completed = subprocess.run([str(BIN / "inspect"), "eval", *(f"{module}@{name}" for name in tasks),
                                "--log-dir", str(log_dir), "--display", "plain", "--max-tasks", str(len(tasks))],
                               cwd=FIXTURES, env=env, capture_output=True, text=True, timeout=600)
    found = {read_eval_log(str(path), header_only=True).eval.task: path for path in sorted(log_dir.glob("*.eval"))}
    assert set(found) == set(tasks), completed.stdout[-4000:] + completed.stderr[-4000:]
    return found


def report_estimates(capsys: Any, *argv: str) -> tuple[dict[str, float], list[str]]:
    """``kpass report ARGV --format json``: each row's estimate by metric, and the notes."""
    code = main(["report", *argv, "--format", "json", "--n-resamples", "200", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(captured.out)
    return {row["metric"]: row["estimate"] for row in data["rows"]}, _texts(data["notes"])
