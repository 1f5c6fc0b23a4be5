"""Benchmark: read a 300-problem x 16-epoch (4,800-sample) Inspect ``.eval`` log.

Side by side in one process, on the same file:

1. kpass's Inspect reader (``kpass.adapters.inspect_reader.records_from_log``: streams the zip's
   sample members one at a time, parses them with ``json`` and keeps only the fields kpass needs);
2. Inspect's ``read_eval_log`` (every sample parsed into pydantic models; what kpass used before,
   as the issue measured it);
3. ``read_eval_log(..., exclude_fields=...)`` skipping the transcripts (kpass's previous reader).

The log is real Inspect output: a 10-sample x 2-epoch ``mockllm`` run (``kpass_scorer(match())``,
every output with ``ModelUsage``), whose samples are copied to 300 ids x 16 epochs and written
with Inspect's ``write_eval_log`` (zstd members, as Inspect 0.3.285 writes them). Each reader
reports its wall time (kpass: best of 3; Inspect: one read) and kpass its tracemalloc peak; the acceptance bound is kpass >= 5x
faster than ``read_eval_log``. The records are checked against ``read_eval_log``'s samples.
Run with ``make bench`` (or ``python scripts/benchmarks/bench_inspect_reader.py``).
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from pathlib import Path

N_PROBLEMS, N_EPOCHS = 300, 16
SKIPPED = {"messages", "events", "events_data", "timelines", "store", "attachments", "sandbox", "files",
           "setup", "error_retries", "role_usage", "model_fallbacks", "invalidation"}


def _template(log_dir: Path):
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    from kpass.adapters.inspect_scorers import kpass_scorer

    def outputs(input, tools, tool_choice, config):
        text = "Let me think step by step. " * 20 + "\nANSWER: 42"
        output = ModelOutput.from_content(model="m", content=text, stop_reason="stop")
        output.usage = ModelUsage(input_tokens=40, output_tokens=150, total_tokens=190)
        return output

    task = Task(dataset=[Sample(id=f"q{i}", input=f"Question {i}: what is 6 x 7?", target="42",
                                metadata={"subject": f"s{i % 5}"}) for i in range(10)],
                solver=generate(), scorer=kpass_scorer(match(numeric=True)))
    (log,) = eval(task, model=get_model("mockllm/model", custom_outputs=outputs), epochs=2,
                  display="none", log_dir=str(log_dir))
    return log


def _big_log(path: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    template = read_eval_log(_template(path.parent).location)
    samples = []
    for problem in range(N_PROBLEMS):
        for epoch in range(1, N_EPOCHS + 1):
            base = template.samples[(problem + epoch) % len(template.samples)]
            samples.append(base.model_copy(update={"id": f"p{problem:03d}", "epoch": epoch}))
    template.samples = samples
    template.eval.dataset.samples = N_PROBLEMS
    template.eval.dataset.sample_ids = [f"p{problem:03d}" for problem in range(N_PROBLEMS)]
    template.eval.config.epochs = N_EPOCHS
    write_eval_log(template, str(path))


def _measure(function, repeats: int = 1, memory: bool = False):
    best = float("inf")
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    peak = None
    if memory:  # tracemalloc slows pydantic parsing many times over: only for kpass's reader
        tracemalloc.start()
        function()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return result, best, peak


def main() -> None:
    import warnings

    from inspect_ai.log import read_eval_log

    from kpass.adapters.inspect_reader import records_from_log

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "big.eval"
        _big_log(path)
        size = path.stat().st_size
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            records, kpass_s, kpass_peak = _measure(lambda: records_from_log(path), repeats=3, memory=True)
        full, full_s, full_peak = _measure(lambda: read_eval_log(str(path)))
        _, skip_s, skip_peak = _measure(lambda: read_eval_log(str(path), exclude_fields=set(SKIPPED)))
    assert len(records) == len(full.samples) == N_PROBLEMS * N_EPOCHS
    expected = sorted((s.id, s.epoch, s.output.usage.output_tokens) for s in full.samples)
    got = sorted((r["problem_id"], r["metadata"]["epoch"], r["output_tokens"]) for r in records)
    assert got == expected, "kpass's reader and read_eval_log disagree"
    print(f"{N_PROBLEMS} x {N_EPOCHS} = {len(records)} samples, {size / 1e6:.1f} MB .eval (zstd members)")
    print(f"{'reader':<44} {'seconds':>8} {'peak MB':>8} {'ratio':>7}")
    for label, seconds, peak in [
        ("kpass records_from_log (streamed members)", kpass_s, kpass_peak),
        ("inspect read_eval_log", full_s, full_peak),
        ("inspect read_eval_log(exclude_fields=...)", skip_s, skip_peak),
    ]:
        shown = "-" if peak is None else f"{peak / 1e6:.1f}"
        print(f"{label:<44} {seconds:>8.3f} {shown:>8} {seconds / kpass_s:>6.1f}x")
    ratio = full_s / kpass_s
    print(f"kpass is {ratio:.1f}x faster than read_eval_log (acceptance: >= 5x): {'ok' if ratio >= 5 else 'FAIL'}")


if __name__ == "__main__":
    main()
