"""What the end-to-end lm-eval tests share: the fake server module, console scripts, a finished run.

Loaded by file path (the test directories are not packages): :func:`load_by_path`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent


def load_by_path(name: str, path: Path) -> ModuleType:
    """Import the module at ``path`` as ``name`` (once per process)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def load_fake_server() -> ModuleType:
    """tests/adapters/fake_openai_server.py as a module."""
    return load_by_path("kpass_tests_fake_openai_server", HERE / "fake_openai_server.py")


def console_script(name: str) -> str:
    """The console script ``name`` installed next to this Python (``lm_eval``, ``kpass-lm-eval``, ``kpass``)."""
    path = Path(sys.executable).parent / name
    assert path.exists(), f"console script {name} is not installed next to {sys.executable}"
    return str(path)


@dataclass
class Run:
    """A finished ``lm_eval``/``kpass-lm-eval`` run with ``--output_path output`` and model ``fake``."""

    returncode: int
    stdout: str
    stderr: str
    output: Path
    requests: list = field(default_factory=list)

    @property
    def model_dir(self) -> Path:
        return self.output / "fake"

    def results(self) -> dict:
        (path,) = self.model_dir.glob("results_*.json")
        return json.loads(path.read_text())

    def samples(self, task: str) -> list[dict]:
        (path,) = self.model_dir.glob(f"samples_{task}_*.jsonl")
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
