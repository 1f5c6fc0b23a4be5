"""``kpass power``: problems needed for an effect, or the detectable effect for a benchmark size.

The formulas are the core's (:func:`kpass.required_problems`, :func:`kpass.minimum_detectable_effect`,
Miller 2024); this module only gathers their inputs, either from explicit variances or from a
pilot sample table with two models on the same problems (:func:`power_inputs_from_table`, which
calls :func:`kpass.power_inputs_from_pilot` on per-problem counts of pass@1).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import warnings
from typing import Any

import numpy as np

from kpass import metrics as core

from kpass.errors import DataError
from kpass.render.escape import csv_row, markdown_text, terminal_text
from kpass.data.table import SampleTable

__all__ = ["compute_power", "format_power", "power_inputs_from_table"]


def power_inputs_from_table(table: SampleTable, *, model: str, baseline: str, task: str | None = None):
    """Pilot inputs of the power formula for ``model`` (A) against ``baseline`` (B).

    Problems are matched by ``(task, problem_id)``; problems present for one model only are
    left out and counted in the returned notes. Without ``task``, the problems of every task are
    pooled into one pilot; when there are several tasks a note says so (their variances may
    differ: give ``task`` to plan for one).

    Returns
    -------
    tuple of (PowerInputs, list of str)
        The core's :class:`~kpass.PowerInputs` and notes on what was left out.

    Raises
    ------
    DataError
        A model or task not in the table, no common problems, or a problem with fewer than two
        samples (the within-problem variance needs two).
    """
    models = table.categories("model")
    for name in (model, baseline):
        if name not in models:
            raise DataError(f"model {name!r} is not in the pilot; models: {', '.join(models)}",
                            **table.error_location(), field="model")
    index = table.problem_index
    keep = np.ones(index.n_problems, dtype=bool)
    if task is not None:
        tasks = table.categories("task")
        if task not in tasks:
            raise DataError(f"task {task!r} is not in the pilot; tasks: {', '.join(tasks)}",
                            **table.error_location(), field="task")
        keep &= index.task_codes == tasks.index(task)
    notes = []
    pilot_models = np.isin(index.model_codes, [models.index(model), models.index(baseline)])
    pooled = table.category_values("task")[np.unique(index.task_codes[keep & pilot_models])]
    if task is None and pooled.size > 1:
        notes.append(f"the pilot pools the problems of {pooled.size} tasks ({', '.join(pooled.tolist())}) as one "
                     "benchmark; their variances may differ, so to plan a benchmark of one task give --task "
                     "(Python: task=...)")
    n_ids = max(len(table.categories("problem_id")), 1)
    key = index.task_codes * n_ids + index.problem_codes
    a = np.flatnonzero(keep & (index.model_codes == models.index(model)))
    b = np.flatnonzero(keep & (index.model_codes == models.index(baseline)))
    common, at_a, at_b = np.intersect1d(key[a], key[b], return_indices=True)
    if len(a) - len(common) or len(b) - len(common):
        notes.append(f"left out: {len(a) - len(common)} problems only under {model!r}, "
                     f"{len(b) - len(common)} only under {baseline!r}")
    if common.size < 2:
        raise DataError(f"the pilot needs at least 2 problems shared by {model!r} and {baseline!r}; found "
                        f"{common.size}", **table.error_location(), field="problem_id")
    a, b = a[at_a], b[at_b]
    for name, problems in ((model, a), (baseline, b)):
        few = index.n_samples[problems] < 2
        if few.any():
            row = int(index.order[index.starts[problems[few][0]]])
            source, line = table.location(row)
            raise DataError(f"a pilot needs at least 2 samples per problem (the within-problem variance); model "
                            f"{name!r} has {int(few.sum())} problem(s) with 1 sample", source=source, line=line,
                            field="sample_index")
    with warnings.catch_warnings(record=True) as caught:  # reported as notes, never lost
        warnings.simplefilter("always")
        try:
            inputs = core.power_inputs_from_pilot(
                n_correct_a=index.n_correct[a], n_samples_a=index.n_samples[a],
                n_correct_b=index.n_correct[b], n_samples_b=index.n_samples[b])
        except ValueError as exc:  # the pilot's counts cannot give the inputs
            raise DataError(f"pilot {model!r} vs {baseline!r}: {exc}", **table.error_location()) from exc
    notes.extend(str(w.message) for w in caught)
    return inputs, [*table.notes, *notes]


def compute_power(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``kpass power`` on parsed arguments; returns the rows to print."""
    from kpass.cli import UsageError

    notes: list[str] = []
    result: dict[str, Any] = {}
    if args.files:
        from kpass.data.readers import read_samples

        table = read_samples(args.files, reader=args.reader)
        models = table.categories("model")
        baseline = args.baseline or models[0]
        others = [m for m in models if m != baseline]
        model = args.model or (others[0] if len(others) == 1 else None)
        if model is None:
            raise UsageError(f"the pilot has models {', '.join(models)}; choose two with --model and --baseline")
        if baseline not in models:
            raise UsageError(f"--baseline {baseline!r} is not in the pilot; models: {', '.join(models)}")
        inputs, notes = power_inputs_from_table(table, model=model, baseline=baseline, task=args.task)
        kwargs = inputs.power_kwargs()
        result.update({"pilot_model": model, "pilot_baseline": baseline, "pilot_problems": inputs.n_problems,
                       "pilot_difference": inputs.mean_difference})
        for name in ("within_variance_a", "within_variance_b"):
            override = getattr(args, name)
            if override is not None:
                kwargs[name] = override
        if args.between_variance is not None:
            kwargs["between_variance"] = args.between_variance
    else:
        if args.between_variance is None:
            raise UsageError("give a pilot file, or --between-variance (and optionally --within-variance-a/-b)")
        kwargs = {
            "between_variance": args.between_variance,
            "within_variance_a": args.within_variance_a or 0.0,
            "within_variance_b": args.within_variance_b or 0.0,
            "samples_per_problem_a": 1.0,
            "samples_per_problem_b": 1.0,
        }
    if args.samples_a is not None:
        kwargs["samples_per_problem_a"] = args.samples_a
    if args.samples_b is not None:
        kwargs["samples_per_problem_b"] = args.samples_b
    result.update(kwargs)
    result.update({"significance_level": args.alpha, "power": args.power})
    try:
        if args.effect is not None:
            result["effect"] = args.effect
            result["required_problems"] = core.required_problems(
                args.effect, significance_level=args.alpha, power=args.power, **kwargs)
        else:
            result["n_problems"] = args.problems
            result["minimum_detectable_effect"] = core.minimum_detectable_effect(
                args.problems, significance_level=args.alpha, power=args.power, **kwargs)
    except ValueError as exc:
        # inputs measured on the pilot are the data's fault (exit 1); inputs typed in, the user's (exit 2)
        measured = bool(args.files) and any(getattr(args, name) is None for name in (
            "between_variance", "within_variance_a", "within_variance_b"))
        if measured:
            raise DataError(f"the pilot gives inputs the power formula cannot use: {exc}",
                            source=table.error_location()["source"]) from exc
        raise UsageError(str(exc)) from exc
    result["notes"] = notes
    return result


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def format_power(result: dict[str, Any], fmt: str = "table") -> str:
    """Render the result of :func:`compute_power`."""
    items = [(k, v) for k, v in result.items() if k != "notes"]
    if fmt == "json":
        return json.dumps(result, indent=2) + "\n"
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(csv_row([k for k, _ in items]))
        writer.writerow(csv_row([v for _, v in items]))
        return buffer.getvalue()
    if fmt == "markdown":
        escape = markdown_text
        lines = ["| quantity | value |", "|:---|---:|"] + [f"| {k} | {escape(_text(v))} |" for k, v in items]
    else:
        escape = terminal_text
        width = max(len(k) for k, _ in items)
        lines = [f"{k:<{width}}  {escape(_text(v))}" for k, v in items]
    lines += [f"note: {escape(note)}" for note in result.get("notes", [])]
    return "\n".join(lines) + "\n"
