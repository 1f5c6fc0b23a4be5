"""Arguments shared by the ``kpass`` subcommands, and what every command does with them first:
read the sample files, parse the metric specs (the output paths and formats are checked for every
command by :func:`kpass.cli.output.check_outputs`)."""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Sequence
from typing import Any, overload

from kpass.cli.argtypes import integer, memory_size, number, reasoning_markers
from kpass.cli.output import add_output_argument
from kpass.cli.progress import ProgressBar
from kpass.data.reduction import Needs, ProblemStatistics
from kpass.data.table import SampleTable
from kpass.errors import UsageError
from kpass.host import lookups
from kpass.host.specs import MetricSpec
from kpass.metrics import DEFAULT_INTERVAL_METHOD, DEFAULT_PAIRED_METHOD, INTERVAL_METHODS, PAIRED_INTERVAL_METHODS
from kpass.render.formatting import FORMATS
from kpass.reports.options import DEFAULT_N_RESAMPLES, DEFAULT_SEED, interval_options

__all__ = [
    "add_bootstrap_arguments", "add_engine_arguments", "add_input_arguments", "add_intersect_argument", "add_metric_arguments",
    "add_output_arguments", "add_run_arguments", "add_selected_argument", "add_tokenizer_arguments", "tokenizer_of", "check_interval_arguments", "input_labels",
    "label_pair", "metric_specs", "read_tables", "use_recorded_cluster",
]


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """``FILE...``, ``--reader``, ``--answer-extractor``, ``--include-path`` and the engine options."""
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="sample files (JSONL, CSV, Parquet, or a plugin's format), globs (runs/*.jsonl) or "
                             "directories (hive-partitioned datasets)")
    parser.add_argument("--reader", metavar="NAME", help="read every file with this reader (see `kpass plugins`)")
    parser.add_argument("--answer-extractor", metavar="SPEC",
                        help="re-extract every sample's answer (what cons@k votes over) from its generation text: "
                             "a registered extractor (boxed, lm_eval_aime, lm_eval_math, lm_eval_minerva_math, "
                             "lm_eval_gsm8k, ...) or regex:PATTERN")
    parser.add_argument("--include-path", action="append", metavar="DIR",
                        help="directory of local lm-eval task YAMLs, to score their logs with the tasks' own "
                             "process_results (repeatable)")
    add_run_arguments(parser)
    add_tokenizer_arguments(parser)
    add_engine_arguments(parser)


def add_tokenizer_arguments(parser: argparse.ArgumentParser) -> None:
    """``--tokenizer SPEC`` (the model's own) and ``--approximate-tokenizer SPEC`` (declared
    approximate): they count lm-eval generations against ``max_gen_toks`` to decide which finished
    (fin@k), and ``kpass budget`` finds answer positions with them."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--tokenizer", metavar="SPEC",
                       help="the model's tokenizer: hf:PATH/tokenizer.json, tiktoken:cl100k_base, or a plugin's "
                            "NAME:ARG; counts lm-eval generations against max_gen_toks (fin@k needs it: lm-eval logs "
                            "no finish reason) and finds answer positions in the output text (kpass budget)")
    group.add_argument("--approximate-tokenizer", metavar="SPEC",
                       help="as --tokenizer, with a tokenizer that is not the model's own: the counts are "
                            "approximate, and a note says so")
    parser.add_argument("--reasoning-markers", type=reasoning_markers, metavar="OPEN,CLOSE",
                        help="markers of a reasoning block (default <think>,</think>; none: not looked for): an "
                             "lm-eval or Inspect generation that ends inside an unclosed block is unfinished")


def tokenizer_of(args: argparse.Namespace) -> tuple[object | None, bool]:
    """``(tokenizer, approximate)`` of ``--tokenizer`` / ``--approximate-tokenizer`` (built once).

    Raises
    ------
    UsageError
        A spec the registry cannot build (unknown name, file or encoding not installed locally).
    """
    cached = getattr(args, "_tokenizer_built", None)
    if cached is not None:
        return cached
    approximate = getattr(args, "approximate_tokenizer", None)
    spec = getattr(args, "tokenizer", None) or approximate
    tokenizer = None
    if spec:
        try:
            tokenizer = lookups.get_tokenizer(spec)
        except (ValueError, TypeError, ImportError) as exc:
            raise UsageError(str(exc)) from exc
    built = (tokenizer, bool(approximate) and tokenizer is not None)
    args._tokenizer_built = built
    return built


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """``--label NAME=PATH`` (repeatable) and ``--judge METRIC``: every command that reads inputs."""
    parser.add_argument("--label", action="append", type=label_pair, default=[], metavar="NAME=PATH",
                        help="name the run of input PATH (a FILE as given: a file, directory or glob): its models "
                             "are shown as '<model> [NAME]' and its rows get run=NAME, so that reruns of one model "
                             "are reported side by side and paired by compare (repeatable)")
    parser.add_argument("--judge", metavar="METRIC",
                        help="lm-eval output: the task metric that judges every sample (e.g. exact_match, "
                             "math_verify; default: the one the kpass-lm-eval run recorded, else the task's first "
                             "binary metric)")


def label_pair(text: str) -> tuple[str, str]:
    """``NAME=PATH`` of ``--label`` as ``(name, path)``; the name is everything before the first ``=``
    (a path may hold ``=``, as hive partitions do)."""
    name, separator, path = text.partition("=")
    if not separator or not name.strip() or not path:
        raise argparse.ArgumentTypeError(f"{text!r}: give NAME=PATH, e.g. --label hot=runs/t07 (PATH one of the inputs)")
    return name.strip(), path


def input_labels(args: argparse.Namespace, files: Sequence[str]) -> dict[str, str]:
    """``--label`` as ``{path as given in files: name}`` for the inputs among ``files``.

    Raises
    ------
    UsageError
        A PATH that is not one of the command's inputs, or one input given two names.
    """
    given = {os.path.normpath(path): path for path in args.files}
    labels: dict[str, str] = {}
    for name, path in getattr(args, "label", None) or ():
        if os.path.normpath(path) not in given:
            raise UsageError(f"--label {name}={path}: {path} is not one of the inputs ({', '.join(args.files)})")
        path = given[os.path.normpath(path)]
        if labels.get(path, name) != name:
            raise UsageError(f"--label: input {path} is given two names, {labels[path]!r} and {name!r}")
        labels[path] = name
    return {path: name for path, name in labels.items() if path in files}


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """``--engine``, ``--memory-limit`` and ``--temp-dir`` (every command that reads samples)."""
    from kpass.data.engines import ENGINES

    parser.add_argument("--engine", choices=ENGINES, default=None,
                        help="what reduces the samples to per-problem statistics: duckdb (default for JSONL, CSV "
                             "and Parquet: streaming, out of core), spark (Apache Spark, needs pyspark and Java 17) "
                             "or numpy (in memory; also what plugin formats and sample-level metrics use)")
    parser.add_argument("--memory-limit", type=memory_size, metavar="SIZE",
                        help="DuckDB memory limit, e.g. 4GB (default: $KPASS_MEMORY_LIMIT or 2GB); past it DuckDB "
                             "spills to --temp-dir")
    parser.add_argument("--temp-dir", metavar="DIR", help="where DuckDB spills and local Spark writes its per-problem "
                                                          "table (default: the system temporary directory)")
    parser.add_argument("--regex-budget", metavar="SECONDS", type=_regex_budget,
                        help="total time the regular expressions from files and options (lm-eval filters, "
                             "--answer-extractor regex:, --answer-pattern) may take in this run (default: "
                             "$KPASS_REGEX_BUDGET or 60)")
    parser.add_argument("--max-member-size", metavar="SIZE", type=_byte_size,
                        help="largest member of an Inspect .eval log to read, decompressed, e.g. 4GiB (default: "
                             "$KPASS_MAX_MEMBER_SIZE or 1GiB)")


def _regex_budget(text: str) -> float:
    from kpass.data.patterns import parse_regex_budget

    try:
        return parse_regex_budget(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--regex-budget: ")) from None


def _byte_size(text: str) -> int:
    from kpass.data.validation import parse_byte_size

    try:
        return parse_byte_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_metric_arguments(parser: argparse.ArgumentParser, default: str = "pass@1", paired: bool = False) -> None:
    """``--metrics``, ``--cluster-by`` and the interval options (``--method``, ``--confidence``,
    ``--seed``, ``--n-resamples``)."""
    methods, default_method = ((PAIRED_INTERVAL_METHODS, DEFAULT_PAIRED_METHOD) if paired
                               else (INTERVAL_METHODS, DEFAULT_INTERVAL_METHOD))
    parser.add_argument("--metrics", "-m", nargs="+", action="extend", metavar="SPEC",
                        help=f"metric specs, e.g. pass@1,8,64 pass^4 cons@16 g-pass@16_0.5 (default: {default}); "
                             "see `kpass metrics`")
    parser.add_argument("--cluster-by", metavar="FIELD", help="cluster field of each problem (e.g. cluster, subject)")
    parser.add_argument("--cut-answers", choices=("abstain", "vote"), default=None,
                        help="cons@k: the answer of an unfinished generation (cut at its token limit) abstains "
                             "(default; the report counts them) or votes (same as cons@k[cut=vote])")
    parser.add_argument("--method", metavar="M",
                        help=f"interval method ({', '.join(methods)}; default: {default_method})")
    add_bootstrap_arguments(parser)


def add_bootstrap_arguments(parser: argparse.ArgumentParser) -> None:
    """``--confidence``, ``--seed`` (the ``rng`` of the Python API) and ``--n-resamples``, with
    the host's defaults; parsed here, checked by :func:`check_interval_arguments`."""
    parser.add_argument("--confidence", type=number, default=0.95, metavar="LEVEL",
                        help="confidence level (default: 0.95)")
    parser.add_argument("--seed", type=integer, default=DEFAULT_SEED, metavar="S",
                        help=f"bootstrap seed (default: {DEFAULT_SEED}, reproducible)")
    parser.add_argument("--n-resamples", type=integer, default=DEFAULT_N_RESAMPLES, metavar="B",
                        help=f"bootstrap resamples, 2 to 10,000,000 (default: {DEFAULT_N_RESAMPLES})")


def add_output_arguments(parser: argparse.ArgumentParser, plot: bool = True) -> None:
    """``--format``, ``--output``, ``--plot`` and ``--no-progress`` (the format of an ``--output``
    follows its suffix: :func:`kpass.cli.output.check_outputs`)."""
    add_output_argument(parser, FORMATS, default="table")
    if plot:
        parser.add_argument("--plot", metavar="PATH", help="also draw a plot to PATH (.png or .svg; needs matplotlib)")
    parser.add_argument("--no-progress", action="store_true", help="never draw a progress bar")


def add_selected_argument(parser: argparse.ArgumentParser) -> None:
    """``--selected-on-this-set MODEL`` (repeatable), shared by ``report`` and ``leaderboard``."""
    parser.add_argument("--selected-on-this-set", dest="selected_on_this_set", action="append", default=[],
                        metavar="MODEL", help="MODEL was chosen on these problems (e.g. the best checkpoint): "
                                              "show its score with the expected selection bias removed")


def add_intersect_argument(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--intersect`` (also spelt ``--intersection``), shared by ``compare`` and ``decompose``."""
    parser.add_argument("--intersect", "--intersection", dest="intersect", action="store_true", help=help_text)


@overload
def read_tables(args: argparse.Namespace, specs: None = None, *, by: Sequence[str] = (),
                cluster_by: str | None = None, files: Sequence[str] | None = None) -> SampleTable: ...


@overload
def read_tables(args: argparse.Namespace, specs: Sequence[MetricSpec], *, by: Sequence[str] = (),
                cluster_by: str | None = None, files: Sequence[str] | None = None,
                tokens: bool = False) -> SampleTable | ProblemStatistics: ...


@overload
def read_tables(args: argparse.Namespace, specs: None = None, *, needs: Needs) -> SampleTable | ProblemStatistics: ...


def read_tables(args: argparse.Namespace, specs: Sequence[MetricSpec] | None = None, *, by: Sequence[str] = (),
                cluster_by: str | None = None, files: Sequence[str] | None = None,
                tokens: bool = False, needs: Needs | None = None) -> SampleTable | ProblemStatistics:
    """The samples of ``args.files`` for ``specs``, with a progress bar on a terminal: a
    SampleTable (numpy engine) or the engine's per-problem statistics
    (:func:`kpass.host.lookups.load_samples`).

    Without ``specs`` (the command needs the samples themselves) or with a metric family that
    declares no per-problem statistics, the default engine is numpy; ``--engine duckdb`` or
    ``spark`` then is a usage error naming the metric. ``--answer-extractor`` re-extracts every
    answer from its text, so it needs the samples too (numpy engine); an unknown extractor or a bad
    regex is a :class:`~kpass.UsageError` before any file is read. ``tokens`` asks the engine
    for the output-token sums per problem as well (:attr:`Needs.tokens`); ``needs`` (instead of
    ``specs``) names the statistics directly, for ``--engine duckdb`` or ``spark``.
    """
    from kpass.data.sources import JUDGE_COLUMN, EngineOptions
    from kpass.host.lookups import load_samples
    from kpass.host.lookups import apply_answer_extractor, resolve_answer_extractor

    engine = getattr(args, "engine", None)
    extractor = getattr(args, "answer_extractor", None)
    include_path = getattr(args, "include_path", None)
    paths = list(args.files if files is None else files)
    labels = input_labels(args, paths)
    tokenizer, approximate = tokenizer_of(args)
    reader_options = {key: value for key, value in (("include_path", include_path),
                                                     ("judge", getattr(args, "judge", None)),
                                                     ("approximate_tokenizer" if approximate else "tokenizer",
                                                      tokenizer)) if value}
    if getattr(args, "reasoning_markers", None) is not None:  # () is "none": not looked for
        reader_options["reasoning_markers"] = args.reasoning_markers or None
    if getattr(args, "max_member_size", None) is not None:
        reader_options["max_member_size"] = args.max_member_size
    if getattr(args, "regex_budget", None) is not None:
        from kpass.data.patterns import set_regex_budget

        set_regex_budget(args.regex_budget)
    if labels:  # a label renames models: the samples are read in memory
        if engine not in (None, "numpy"):
            raise UsageError(f"--label renames the models of the samples read in memory; use --engine numpy, not {engine}")
        specs = needs = None
        engine = "numpy"
    if extractor is not None:
        resolve_answer_extractor(extractor)
        if engine not in (None, "numpy"):
            raise UsageError(f"--answer-extractor re-reads every sample's text; use --engine numpy, not {engine}")
        specs = needs = None
        engine = "numpy"
    if needs is not None:
        specs = None
    elif specs is not None and engine != "numpy":
        try:
            needs = dataclasses.replace(Needs.for_specs(specs, by=by, cluster_by=cluster_by), tokens=tokens)
        except UsageError:
            if engine is not None:
                raise
    if needs is None and specs is None and engine not in (None, "numpy"):
        raise UsageError(f"kpass {args.command} needs the samples themselves; use --engine numpy")
    bar = ProgressBar("reading", enabled=False if getattr(args, "no_progress", False) else None)
    options = EngineOptions(memory_limit=getattr(args, "memory_limit", None),
                            temp_directory=getattr(args, "temp_dir", None),
                            progress=lambda percent: bar.update(int(percent), 100, label="reducing (%)"))
    try:
        samples = load_samples(paths, needs, engine=engine if needs else "numpy",
                               reader=args.reader, options=options, reader_options=reader_options or None,
                               labels=labels or None,
                               progress=lambda path, done: bar.update(done, label=f"reading {os.path.basename(path)} (lines)"))
    finally:
        bar.close()
    judge = reader_options.get("judge")
    if judge and not (isinstance(samples, SampleTable) and samples.has_column(JUDGE_COLUMN)
                      and judge in samples.categories(JUDGE_COLUMN)):
        raise UsageError(f"--judge {judge}: no input was judged by {judge} (--judge re-judges lm-eval output; a "
                         "sample table keeps the verdicts it holds)")
    if not isinstance(samples, SampleTable):
        if needs is None:  # load_samples' contract: without needs, the samples themselves
            raise TypeError(f"kpass {args.command}: the reader returned {type(samples).__name__}, not the samples")
        return samples
    return samples if extractor is None else apply_answer_extractor(samples, extractor)


def use_recorded_cluster(args: argparse.Namespace, table: SampleTable | ProblemStatistics) -> str | None:
    """``--cluster-by``, or without it the cluster field the data recorded
    (:func:`kpass.host.lookups.recorded_cluster`): the command then clusters by it (its
    ``--cluster-by`` is set) and the table's notes say so."""
    cluster_by, note = lookups.recorded_cluster(table, args.cluster_by)
    if note is not None:
        args.cluster_by = cluster_by
        table.notes = (*table.notes, note)
    return cluster_by


def metric_specs(args: argparse.Namespace, default: str = "pass@1") -> list[MetricSpec]:
    """The specs of ``--metrics`` (``default`` when none is given), with ``--cut-answers`` applied to
    every cons@k spec that does not set ``cut``."""
    texts = args.metrics or [default]
    if getattr(args, "cut_answers", None):
        from kpass.host.manager import metric_registry
        from kpass.host.specs import with_option_default

        texts = with_option_default(texts, "cons@k", "cut", args.cut_answers, metric_registry())
    return lookups.parse_metric_specs(texts)


def check_interval_arguments(args: argparse.Namespace, *, paired: bool = False) -> dict[str, Any]:
    """The interval options of a command's flags (``--method``, ``--confidence``, ``--seed``,
    ``--n-resamples``, ``--cluster-by``), checked before any file is read.

    The check is the Python API's (:func:`kpass.reports.options.interval_options`, the core's
    :func:`kpass.metrics.check_interval_options`): one check and one message per option, which
    ``kpass`` says with the flags (:func:`kpass.reports.options.flag_names`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed flags; a command without ``--method`` (or ``--cluster-by``) takes the default
        method (unclustered).
    paired : bool, default: False
        For :func:`kpass.paired_difference` (``kpass compare``) rather than :func:`kpass.mean_ci`.

    Raises
    ------
    UsageError
        An unknown method, ``clustered-t`` without ``--cluster-by``, ``t`` with it, a confidence
        level outside (0, 1), a negative seed, fewer than 2 or more than 10,000,000 resamples.
    """
    return interval_options(method=getattr(args, "method", None), confidence_level=args.confidence, rng=args.seed,
                            n_resamples=args.n_resamples, paired=paired,
                            clustered=getattr(args, "cluster_by", None) is not None)
