"""Run every kpass benchmark in one process (``make bench``).

Each ``bench_*.py`` module beside this file defines ``main() -> None`` that times kpass against
the reference implementations side by side, checks that their numbers agree, and prints a table
of ratios and peak memory. Benchmarks are never part of ``make test``.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys


def _load(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    skipped = set()
    while "--skip" in argv:  # ``--skip bench_scale``: make bench runs that one as make bench-scale
        at = argv.index("--skip")
        skipped.add(argv[at + 1])
        del argv[at:at + 2]
    here = pathlib.Path(__file__).resolve().parent
    selected = set(argv)
    for path in sorted(here.glob("bench_*.py")):
        if (selected and path.stem not in selected) or path.stem in skipped:
            continue
        print(f"\n=== {path.stem} ===", flush=True)
        module = _load(path)
        module.main([]) if path.stem == "bench_scale" else module.main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
