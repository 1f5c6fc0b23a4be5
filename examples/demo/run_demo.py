"""``make demo``: a real Inspect eval of two SIMULATED models, then kpass report and kpass compare.

1. ``inspect eval examples/demo/task.py``: the 40 bundled problems (``problems.jsonl``), 16
   epochs, for the simulated ``base`` and ``rl`` models served by Inspect's ``mockllm`` provider
   (see ``simulated_models.py``; no API key, no network), scored by a pattern scorer wrapped in
   kpass's CoT verifier (a simulated judge), with kpass metrics in Inspect's own results.
2. ``kpass report`` on the two logs: every metric with its interval, and a pass@k plot.
3. ``kpass compare``: RL minus base, paired over the same problems, and a comparison plot.
4. ``kpass budget``: fin@1, pass@1 and pass@1 | fin at smaller token budgets, read from the same run
   (the kpass scorer recorded each sample's output tokens and whether it finished).
5. ``kpass decompose``: the pass@1 gain at the run's budget split into finishing, reliability and reach.

Everything is written to ``demo-output/`` (logs, tables, plots); the folder is rebuilt each run.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = ROOT / "demo-output"
BIN = Path(sys.executable).parent

REPORT_METRICS = ["pass@1,4,16", "pass^4", "g-pass@16_0.5,1.0", "mg-pass@16", "cons@16", "fin@1",
                  "cot-pass@1,16[rule=majority]"]
COMPARE_METRICS = ["pass@1,16", "pass^4", "cons@16", "fin@1", "cot-pass@1,16[rule=majority]"]
BASELINE = "mockllm/simulated-base"
RL_MODEL = "mockllm/simulated-rl"
BUDGETS = "512,768,1024"


def _step(title: str) -> None:
    print(f"\n=== {title} ===", flush=True)


def _shown(command: list[str]) -> str:
    """The command as a user would type it (program names, relative paths, one log glob)."""
    parts: list[str] = []
    for part in command:
        if part.startswith(str(BIN)):
            part = Path(part).name
        elif part.startswith(str(ROOT)):
            part = str(Path(part).relative_to(ROOT))
            if part.endswith(".eval"):
                part = str(Path(part).parent / "*.eval")
                if part in parts:
                    continue
        parts.append(f"'{part}'" if "[" in part else part)
    return " ".join(parts)


def _run(command: list[str], **kwargs) -> None:
    print(f"$ {_shown(command)}", flush=True)
    subprocess.run(command, check=True, **kwargs)


def main(argv: list[str] | None = None) -> int:
    # any argument is parsed first: `--help` prints this and deletes nothing
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("``", ""), epilog=(
        "Writes demo-output/ (deleted and rebuilt on every run).")).parse_args(argv)
    started = time.perf_counter()
    if OUT.exists():
        shutil.rmtree(OUT)
    logs = OUT / "logs"
    logs.mkdir(parents=True)
    print("kpass demo: two SIMULATED models (Inspect's mockllm provider; not real LLMs),\n"
          "40 bundled problems x 16 epochs, then kpass report, compare, budget and decompose on the logs.")

    _step("1. inspect eval (real Inspect run; kpass metrics in Inspect's results)")
    _run([str(BIN / "inspect"), "eval", "task.py", "--log-dir", str(logs), "--display", "plain",
          "--log-format", "eval"], cwd=HERE)
    log_files = sorted(str(path) for path in logs.glob("*.eval"))
    if len(log_files) != 2:
        print(f"expected 2 Inspect logs in {logs}, found {len(log_files)}", file=sys.stderr)
        return 1

    _step("2. kpass report (every metric with a 95% interval; the problem is the unit)")
    _run([str(BIN / "kpass"), "report", *log_files, "--metrics", *REPORT_METRICS,
          "--plot", str(OUT / "report.png"), "--no-progress"])
    _run([str(BIN / "kpass"), "report", *log_files, "--metrics", *REPORT_METRICS, "--format", "csv",
          "--output", str(OUT / "report.csv"), "--no-progress"])

    _step("3. kpass compare (rl - base, paired over the same 40 problems)")
    _run([str(BIN / "kpass"), "compare", *log_files, "--baseline", BASELINE, "--metrics", *COMPARE_METRICS,
          "--plot", str(OUT / "compare.png"), "--no-progress"])

    _step("4. kpass budget (the same run read at smaller token budgets)")
    _run([str(BIN / "kpass"), "budget", *log_files, "--budgets", BUDGETS, "--plot", str(OUT / "budget.png")])

    _step("5. kpass decompose (the pass@1 gain at 1024 tokens: finishing + reliability + reach)")
    _run([str(BIN / "kpass"), "decompose", *log_files, "--baseline", BASELINE, "--model", RL_MODEL,
          "--budgets", "1024", "--plot", str(OUT / "decompose.png")])

    print(f"\nWrote {OUT.relative_to(ROOT)}/: logs/ (Inspect logs), report.csv and report.png, compare.png, "
          f"budget.png, decompose.png in {time.perf_counter() - started:.0f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
