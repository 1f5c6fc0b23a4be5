"""``kpass power``: problems needed for an effect, or the detectable effect for a benchmark size.

The inputs come from the flags (variances, samples per problem) or from a pilot sample table
(:func:`kpass.reports.power.power_inputs_from_table`); the formulas are the core's.
"""

from __future__ import annotations

import argparse
from typing import Any

from kpass import metrics as core
from kpass.cli.argtypes import (difference_of_proportions, positive_int, probability, samples_per_problem,
                                variance_of_difference, variance_of_outcome)
from kpass.cli.arguments import add_engine_arguments, add_run_arguments, read_tables
from kpass.cli.deprecated import add_deprecated_alias
from kpass.cli.output import add_output_argument, emit
from kpass.errors import DataError, UsageError
from kpass.notes import Note
from kpass.host import lookups
from kpass.render.formatting import format_power
from kpass.reports.power import power_inputs_from_table

__all__ = ["add_power_arguments", "compute_power", "run_power"]


def add_power_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="PILOT",
                        help="pilot sample files with two models on the same problems (or give the variances)")
    parser.add_argument("--reader", metavar="NAME", help="reader for the pilot files")
    add_run_arguments(parser)
    add_engine_arguments(parser)
    parser.add_argument("--baseline", "-b", metavar="MODEL", help="model B of the pilot (default: the first model)")
    parser.add_argument("--model", metavar="MODEL", help="model A of the pilot (default: the other model)")
    parser.add_argument("--task", metavar="TASK",
                        help="restrict the pilot to one task (default: pool every task, said in a note)")
    parser.add_argument("--between-variance", type=variance_of_difference, metavar="W2",
                        help="between-problem variance of the paired difference of pass@1 (omega^2, in [0, 1])")
    parser.add_argument("--within-variance-a", type=variance_of_outcome, metavar="S2A",
                        help="within-problem variance of one 0/1 outcome, model A (E[p(1-p)], in [0, 0.25])")
    parser.add_argument("--within-variance-b", type=variance_of_outcome, metavar="S2B",
                        help="within-problem variance of one 0/1 outcome, model B (in [0, 0.25])")
    parser.add_argument("--samples-a", type=samples_per_problem, metavar="KA", help="samples per problem, model A (>= 1)")
    parser.add_argument("--samples-b", type=samples_per_problem, metavar="KB", help="samples per problem, model B (>= 1)")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--effect", type=difference_of_proportions, metavar="DELTA",
                        help="effect to detect (difference of pass@1); prints the problems needed")
    target.add_argument("--problems", type=positive_int, metavar="N",
                        help="number of problems; prints the minimum detectable effect")
    parser.add_argument("--confidence", type=probability, default=0.95, metavar="LEVEL",
                        help="confidence level of the two-sided test, 1 - alpha (default: 0.95)")
    add_deprecated_alias(parser, "--alpha", dest="confidence", type=probability, metavar="ALPHA",
                         replacement="--confidence LEVEL (LEVEL = 1 - alpha)", convert=lambda alpha: 1.0 - alpha)
    parser.add_argument("--power", type=probability, default=0.8, help="power (default 0.8)")
    add_output_argument(parser, ("table", "markdown", "csv", "json"), default="table")
    parser.add_argument("--no-progress", action="store_true", help=argparse.SUPPRESS)


def run_power(args: argparse.Namespace) -> int:
    emit(format_power(compute_power(args), args.format), args.output)
    return 0


def compute_power(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``kpass power`` on parsed arguments; returns the rows to print."""
    notes: list[Note] = []
    result: dict[str, Any] = {}
    if args.files:
        table = read_tables(args, lookups.parse_metric_specs("pass@1"), by=("model", "task"))
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
    result.update({"confidence_level": args.confidence, "power": args.power})
    try:
        if args.effect is not None:
            result["effect"] = args.effect
            result["required_problems"] = core.required_problems(
                args.effect, confidence_level=args.confidence, power=args.power, **kwargs)
        else:
            result["n_problems"] = args.problems
            result["minimum_detectable_effect"] = core.minimum_detectable_effect(
                args.problems, confidence_level=args.confidence, power=args.power, **kwargs)
    except ValueError as exc:
        # inputs measured on the pilot are the data's fault (exit 1); inputs typed in, the user's (exit 2)
        measured = bool(args.files) and any(getattr(args, name) is None for name in (
            "between_variance", "within_variance_a", "within_variance_b"))
        if measured:
            raise DataError(f"the pilot gives inputs the power formula cannot use: {exc}",
                            source=table.error_location()["source"]) from exc
        raise UsageError(str(exc)) from exc
    result["notes"] = [note.as_dict() for note in notes]  # JSON records (kpass.Note.as_dict)
    return result
