"""Warnings kpass's Inspect metrics give in the run: the seed trap (K identical epochs), few clusters.

Intervals over fewer than 10 clusters get one short line per metric (:func:`warn_few_clusters`: the
first clause of the note the CLI prints and where its full text is), logged once per process at
warning level, which Inspect shows on the console; the log keeps the notes in full, as records, in
the metrics' ``kpass`` params. Both log under ``kpass.adapters.inspect_metrics``: the metrics speak.

The seed trap
-------------

``inspect eval --seed 42`` sends one seed with every epoch; a provider that honours seeds (vLLM, the
OpenAI-compatible servers that do) then returns K copies of one generation per sample, and pass@k =
pass@1 = cons@k without any error. The rule is the one ``kpass report`` applies afterwards,
:func:`kpass.reports.sample_checks.identical_sample_groups` (more than half of the problems with two or more epochs have
all-identical generations), on what the metrics can see of the generations:

* ``Score.metadata["kpass"]["output_digest"]`` (:func:`kpass.adapters.inspect_scorers.output_digest`),
  written by :func:`~kpass.adapters.inspect_scorers.kpass_scorer` and ``cot_verifier``, also under
  ``inspect score``;
* else, during ``inspect eval``, the same digest of every sample's output, taken by kpass's task hook
  when the sample ends (:func:`sample_ended`), for scores of any scorer; used when exactly one running
  task holds the sample ids and each problem has as many digests as scored epochs.

When the rule fires, the first kpass metric of a scorer adds :data:`IDENTICAL_EPOCHS_KEY` (the share
of problems whose epochs are one generation) to Inspect's results, every kpass metric adds a
``"seed_trap"`` entry to its ``kpass`` params in the log (next to the notes, which carry ``kpass
report``'s note), and one short warning line goes to the console once per task
(:func:`seed_trap_line`; the full warning is the ``seed_trap`` entry's ``"warning"``).
Inspect calls metrics with an empty list at start-up and with partial scores while samples run: those
calls stay quiet; the check speaks once every sample-epoch of the task has ended (or, outside a run,
at once).

Framework-side module, imported by :mod:`kpass.adapters.inspect_metrics` only.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import OrderedDict, defaultdict
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

__all__ = ["IDENTICAL_EPOCHS_KEY", "LOGGED_NOTES", "attach_output_digests", "check", "matching_runs", "sample_ended",
           "task_ended", "task_started", "warn_few_clusters"]

#: Key of the seed-trap warning in Inspect's results: share of problems whose epochs are one generation.
IDENTICAL_EPOCHS_KEY = "warning/identical_epochs"

logger = logging.getLogger("kpass.adapters.inspect_metrics")


@dataclasses.dataclass
class _Progress:
    """A running task: sample-epochs it runs (None: unknown), those ended, and their output digests."""

    expected: int | None
    ended: int = 0
    digests: dict[str, list[str | None]] = dataclasses.field(default_factory=lambda: defaultdict(list))


#: Few-cluster notes already logged in this process (Inspect calls metrics again while samples run).
LOGGED_NOTES: set[str] = set()


#: Where the console's short line sends the reader for the full text.
FULL_TEXT = "full note in the log's kpass params"


def short_line(subject: str, text: str, kind: str) -> str:
    """One console line for a note: its first clause (before ``": "``), where its full text is and
    its doc section, e.g. ``pass@8: only 3 clusters (full note in the log's kpass params;
    docs/notes.md#few-clusters)``."""
    head = text.split(": ", 1)[0].rstrip(".")
    return f"{subject}: {head} ({FULL_TEXT}; docs/notes.md#{kind})"


def note_record(note: Any) -> dict[str, Any]:
    """A note of a metric's one-group report (model and task ``inspect``) as the record the log
    keeps, its rows without the group (``inspect / inspect / pass@8`` is ``pass@8``)."""
    record = note.as_dict()
    rows = [row.replace("inspect / inspect / ", "").replace("inspect / inspect", "").strip() for row in record["rows"]]
    return {**record, "rows": [row for row in rows if row]}


def seed_trap_line(trap: Any) -> str:
    """The console's short line for the seed trap (the full warning is the log's ``seed_trap`` entry)."""
    return (f"{trap.n_identical} of {trap.n_problems} problems got {trap.k} identical epochs: pass@k = pass@1; "
            f"drop --seed or sample with temperature > 0 ({FULL_TEXT}, seed_trap; docs/notes.md#seed-trap)")


def warn_few_clusters(report: Any) -> None:
    """One short console line per kpass metric whose interval rests on fewer than 10 clusters
    (the note the CLI prints, :func:`kpass.metrics.few_clusters_note`, is in the log's ``kpass``
    params in full), once per process."""
    from kpass.metrics import few_clusters_note

    lines: dict[str, None] = {}
    for row in report.rows:
        note = few_clusters_note(row.n_clusters, row.method)
        if note is not None:
            lines.setdefault(short_line(row.metric, note, "few-clusters"), None)
    for line in lines:
        if line not in LOGGED_NOTES:
            LOGGED_NOTES.add(line)
            logger.warning("kpass metrics: %s", line)


#: eval_id -> progress of the tasks running in this process (kept by kpass's task hook).
_PROGRESS: dict[str, _Progress] = {}
#: The task whose run this is: set by the task-start hook, which Inspect awaits in the task's own
#: coroutine, so its metric calls (live and final) see it, also with tasks of one dataset side by side.
_CURRENT_EVAL: ContextVar[str | None] = ContextVar("kpass_current_eval", default=None)
#: Console warnings already given (task and text), so each is given once.
_WARNED: set[tuple[tuple[str, ...], str]] = set()
#: id(scores) -> (scores, the metric that reports IDENTICAL_EPOCHS_KEY for them); a few recent lists.
_OWNERS: OrderedDict[int, tuple[list[Any], int]] = OrderedDict()
_OWNERS_MAX = 16


def task_started(eval_id: str, expected: int | None) -> None:
    """Record a task that starts (``expected``: its samples times its epochs)."""
    _PROGRESS[eval_id] = _Progress(expected)
    _CURRENT_EVAL.set(eval_id)


def sample_ended(eval_id: str, sample: Any) -> None:
    """Record the output digest of one sample-epoch that ended (with or without an error)."""
    from .inspect_scorers import output_digest

    progress = _PROGRESS.get(eval_id)
    if progress is not None:
        progress.ended += 1
        progress.digests[str(sample.id)].append(output_digest(getattr(sample, "output", None)))


def task_ended(eval_id: str) -> None:
    _PROGRESS.pop(eval_id, None)


def matching_runs(running: Mapping[str, tuple[int, frozenset[str]]], sample_ids: set[str]) -> list[str]:
    """The running task of this run; else (the hook's context not seen) those whose dataset holds these
    sample ids (unknown ids match any)."""
    current = _CURRENT_EVAL.get()
    if current is not None and current in running:
        return [current]
    return [eval_id for eval_id, (_, ids) in list(running.items()) if not ids or sample_ids <= ids]


def attach_output_digests(records: list[dict[str, Any]], runs: list[str]) -> None:
    """Give records without a scorer's digest the digests the task hook took, in place (see module)."""
    if len(runs) != 1 or runs[0] not in _PROGRESS or any("output_digest" in r["metadata"] for r in records):
        return
    taken = _PROGRESS[runs[0]].digests
    by_problem: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_problem[record["problem_id"]].append(record)
    for problem, problem_records in by_problem.items():
        digests = taken.get(problem, [])
        if len(digests) == len(problem_records) and all(digests):
            for record, digest in zip(problem_records, digests):
                record["metadata"]["output_digest"] = digest


def _complete(n_scores: int, runs: list[str]) -> bool:
    """True outside a run, or once every sample-epoch of the running task has a score or has ended."""
    if not runs:
        return True
    progress = [_PROGRESS.get(eval_id) for eval_id in runs]
    expected = [p.expected for p in progress if p is not None and p.expected is not None]
    if len(expected) != len(runs):
        return True  # a task whose samples are unknown: its scores are all there is to go by
    if n_scores >= max(expected):
        return True
    return len(runs) == 1 and progress[0] is not None and progress[0].ended >= expected[0]


def _owns_key(scores: list[Any], metric_id: int) -> bool:
    entry = _OWNERS.get(id(scores))
    if entry is None or entry[0] is not scores:
        _OWNERS[id(scores)] = entry = (scores, metric_id)
        while len(_OWNERS) > _OWNERS_MAX:
            _OWNERS.popitem(last=False)
    return entry[1] == metric_id


def check(table: Any, scores: list[Any], runs: list[str],
          metric_id: int) -> tuple[dict[str, float], dict[str, Any] | None]:
    """The seed-trap check of one metric call: (entries for the metric's value, entry for its params).

    Both are empty/None while scores are partial or when most problems' epochs differ.
    """
    from kpass.reports.sample_checks import identical_sample_groups

    if not _complete(len(scores), runs):  # the cheap test first: the live display calls with partial scores
        return {}, None
    found = identical_sample_groups(table)
    if not found:
        return {}, None
    trap = found[0]  # the metric's table is one (model, task)
    message = (f"{trap.n_identical} of {trap.n_problems} problems got {trap.k} identical epochs (one --seed sent with "
               "every epoch to a provider that honours it, or temperature 0?): their k-sample metrics say no more "
               "than one epoch (pass@k = pass@1, cons@k is that one answer). Drop --seed, or sample with "
               "temperature > 0")
    warned = (tuple(runs), message)
    if warned not in _WARNED:
        _WARNED.add(warned)
        logger.warning("kpass metrics: %s", seed_trap_line(trap))
    share = trap.n_identical / trap.n_problems
    detail = {"problems_identical": trap.n_identical, "problems": trap.n_problems, "epochs": trap.k,
              "warning": message}
    return ({IDENTICAL_EPOCHS_KEY: share} if _owns_key(scores, metric_id) else {}), detail
