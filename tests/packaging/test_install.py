"""Both ``pip install .`` and ``pip install -e .`` give one import namespace, ``kpass``.

``metrics/``, ``plugin/`` and ``adapters/`` are source directories mapped onto ``kpass.metrics``,
``kpass`` and ``kpass.adapters``; no top-level package of those names may be installed.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]

PROBE = """
import importlib.util, json, sys
import kpass, kpass.metrics, kpass.adapters
from importlib.metadata import entry_points
print(json.dumps({
    "kpass": kpass.__file__,
    "metrics": kpass.metrics.__file__,
    "adapters": kpass.adapters.__file__,
    "stray": [name for name in ("metrics", "plugin", "adapters") if importlib.util.find_spec(name)],
    "kpass_entry_points": sorted(ep.name for ep in entry_points(group="kpass")),
    "inspect_entry_points": sorted(ep.value for ep in entry_points(group="inspect_ai")),
}))
"""


def _probe(extra_env: dict[str, str], cwd: pathlib.Path) -> dict:
    completed = subprocess.run(
        [sys.executable, "-s", "-c", PROBE],
        capture_output=True, text=True, cwd=cwd, env={**extra_env, "PATH": "/usr/bin:/bin"},
        check=True,
    )
    return json.loads(completed.stdout)


def test_regular_install_maps_source_directories_into_kpass(tmp_path):
    # Build from a copy: a build writes build/ and *.egg-info next to the sources, and a stale
    # kpass.egg-info in the checkout would shadow the editable install's metadata.
    source = tmp_path / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", ".hypothesis", ".pytest_cache", "demo-output", "logs"))
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(source)],
        check=True, capture_output=True, text=True,
    )
    installed = sorted(p.name for p in target.iterdir() if not p.name.endswith(".dist-info"))
    assert "kpass" in installed
    assert not {"metrics", "plugin", "adapters"} & set(installed), installed
    assert (target / "kpass" / "metrics" / "__init__.py").is_file()
    assert (target / "kpass" / "adapters" / "__init__.py").is_file()

    (dist_info,) = target.glob("kpass-*.dist-info")
    declared = (dist_info / "entry_points.txt").read_text()
    assert "kpass.adapters.inspect_plugin" in declared and "kpass.adapters.lm_eval_plugin" in declared
    assert "kpass = kpass.cli:main" in declared

    found = _probe({"PYTHONPATH": str(target)}, cwd=tmp_path)
    assert found["kpass"].startswith(str(target))
    assert found["metrics"].startswith(str(target / "kpass" / "metrics"))
    assert found["adapters"].startswith(str(target / "kpass" / "adapters"))
    assert found["stray"] == []
    assert {"inspect_ai", "lm_eval"} <= set(found["kpass_entry_points"])
    assert "kpass.adapters.inspect_registry" in found["inspect_entry_points"]


def test_editable_install_points_into_the_checkout(tmp_path):
    # The suite itself runs on the editable install made by `make test`.
    import kpass
    import kpass.adapters
    import kpass.metrics

    assert pathlib.Path(kpass.__file__).resolve() == REPO / "plugin" / "__init__.py"
    assert pathlib.Path(kpass.metrics.__file__).resolve() == REPO / "metrics" / "__init__.py"
    assert pathlib.Path(kpass.adapters.__file__).resolve() == REPO / "adapters" / "__init__.py"
    # Run from outside the checkout so that the working directory cannot shadow anything.
    completed = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    found = json.loads(completed.stdout)
    assert found["stray"] == []
    assert found["kpass"] == str(REPO / "plugin" / "__init__.py")
