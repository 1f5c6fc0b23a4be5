r"""kpass metrics and epoch reducers for Inspect AI.

Metrics (``@metric(scores="unreduced")``: they receive every epoch's score, whatever the
task's epoch reducer) turn kpass specs into Inspect metric values, estimate and interval::

    Task(..., epochs=16, scorer=kpass_scorer(match()),
         metrics=[kpass_metrics("pass@1,8,16", "g-pass@16_0.5,1.0", "cons@16", "fin@1",
                                cluster="subject")])

reports, for every metric, four keys: ``pass@8`` (the estimate: the mean over problems of the
per-problem estimator, computed by :func:`kpass.compute_report` with the metric core),
``pass@8_lower`` and ``pass@8_upper`` (the interval, ``confidence_level`` 0.95 by default, with
kpass's default interval method unless ``method=`` says otherwise) and ``pass@8_stderr``. When some
problems have fewer scored epochs than a metric needs (errored or unscored epochs), those problems
are left out of that metric, as Inspect's ``pass_at_{k}`` reducer leaves them out, and a fifth key
``pass@8_excluded`` counts them. A value kpass cannot compute is left out of the result, never
reported as NaN.

Problem = Inspect sample id; sample = epoch; correct = ``value_to_float(value) >= 1.0`` (see
:mod:`kpass.adapters.inspect_records`); answers, stop reasons, output tokens and CoT verdicts come
from the kpass scorers' ``Score.metadata["kpass"]`` (answers fall back to ``Score.answer``).

Inspect calls metrics with an empty list at start-up and with partial results while samples run;
both are quiet (a metric no problem can support yet is simply not reported). When most problems got
K identical epochs (``--seed`` sent with every epoch to a provider that honours it, temperature 0),
the results get ``warning/identical_epochs`` and the console one line, once every epoch has run
(:mod:`kpass.adapters.inspect_warnings`: ``kpass report``'s rule, :func:`kpass.reports.sample_checks.identical_sample_groups`).

k larger than the epochs
------------------------
A metric that needs more samples per problem than the eval runs epochs is an error naming the
metric and the epochs, raised as early as Inspect lets a metric speak:

1. Malformed specs raise when the metric is created, i.e. when the task is built.
2. When a task starts, a kpass Inspect hook (``kpass/kpass_epochs``, registered when the first
   kpass metric is created) checks every kpass metric of the task against the epochs and logs the error
   before any model call; Inspect does not let hooks stop a task, so the run continues to
   step 3. Pass ``early_stopping=kpass_preflight()`` to the ``Task`` to stop it right there,
   before any model call (the preflight also checks that every sample has the cluster key).
3. The metric raises ``ValueError`` the first time it is called with scores (at the first live
   metrics update after a sample finished, at the latest when the task ends); the task ends
   with status ``"error"`` and that message.

Outside a running task (``inspect score``, ``recompute_metrics``), the metric raises when no
problem has enough scored epochs for it.

Registry names (entry point ``inspect_ai``)
-------------------------------------------
Metrics: ``kpass/kpass_metrics`` (any specs; with no specs, pass@k and pass^k for k = 1, 2, 4, ...
up to the epochs), and, for ``inspect score LOG --metric kpass/<name>`` where no arguments can be
given, ``kpass/pass_at_k``, ``kpass/pass_hat_k``, ``kpass/g_pass_at_k``, ``kpass/mg_pass_at_k``,
``kpass/cons_at_k``, ``kpass/cot_pass_at_k`` and ``kpass/fin_at_k`` (k = 1, 2, 4, ... up to the
epochs by default). Reducers, for ``--epochs-reducer kpass/<name>_<k>``: ``kpass/pass_at``,
``kpass/pass_hat``, ``kpass/g_pass_at`` (tau 0.5 by default), ``kpass/mg_pass_at``,
``kpass/cons_at``, ``kpass/cot_pass_at`` and ``kpass/fin_at``; reducers follow Inspect's
convention and return NaN (Inspect's "unscored") for a sample with fewer than k scored epochs.

Framework-side module: it imports Inspect at module level, because only Inspect (through the
``inspect_ai`` entry point, :mod:`kpass.adapters.inspect_registry`) and task files import it. The
kpass-side modules (:mod:`kpass.adapters.inspect_plugin`, the reader) import Inspect lazily.
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import warnings

from inspect_ai.hooks import Hooks, SampleEnd, TaskEnd, TaskStart, hooks
from inspect_ai.scorer import Metric, SampleScore, Score, ScoreReducer, Value, metric, score_reducer

from . import inspect_warnings
from .inspect_records import (
    answer_of,
    assign_sample_indices,
    check_required_columns,
    correct_from_value,
    kpass_data,
    kpass_metric_definitions,
    sample_record,
)

__all__ = [
    "cons_at",
    "cons_at_k_metric",
    "cot_pass_at",
    "cot_pass_at_k_metric",
    "fin_at",
    "fin_at_k_metric",
    "g_pass_at",
    "g_pass_at_k_metric",
    "kpass_metrics",
    "kpass_preflight",
    "mg_pass_at",
    "mg_pass_at_k_metric",
    "pass_at",
    "pass_at_k_metric",
    "pass_hat",
    "pass_hat_k_metric",
]

_SOURCE = "Inspect scores"


def _core() -> Any:
    """kpass's metric core (:mod:`kpass.metrics`), imported when a kpass metric or reducer is made.

    Inspect imports this module (through ``kpass.adapters.inspect_registry``) on every run, to
    know the ``kpass/...`` names; numpy, scipy and the core load only when kpass is used.
    """
    from kpass import metrics

    return metrics


_KEYS = ("lower", "upper", "stderr")

# --------------------------------------------------------------------------------------------
# epochs of the running tasks (recorded by the task-start hook)

#: eval_id -> (epochs, sample ids as str) of the tasks running in this process.
_RUNNING_TASKS: dict[str, tuple[int, frozenset[str]]] = {}


def _running_epochs(sample_ids: set[str]) -> int | None:
    """Epochs of the running task whose dataset holds these sample ids, or None when no running
    task does (the metric is then used outside a run, e.g. by ``inspect score``).

    Tasks whose sample ids are unknown match any ids; when several running tasks match with
    different epochs, the largest is used, so that a valid run is never stopped by mistake.
    """
    candidates = [epochs for epochs, ids in list(_RUNNING_TASKS.values()) if not ids or sample_ids <= ids]
    return max(candidates) if candidates else None


# --------------------------------------------------------------------------------------------
# spec helpers


def _parse(spec_texts: Sequence[str]) -> list[Any]:
    from kpass import parse_metric_specs

    return list(parse_metric_specs(list(spec_texts)))


def _ks_up_to(n: int) -> list[int]:
    ks, k = [], 1
    while k <= n:
        ks.append(k)
        k *= 2
    if ks and ks[-1] != n:
        ks.append(n)
    return ks


def _largest_power_of_two(n: int) -> int:
    return 1 << (max(n, 1).bit_length() - 1)


def _k_list(k: int | Sequence[int] | None, name: str) -> list[int] | None:
    if k is None:
        return None
    values = [k] if isinstance(k, int) else list(k)  # a bool is an int here, refused below
    for value in values:
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            raise ValueError(f"`k` of {name} must be a positive integer or a list of them; got {k!r}.")
    return values


def _join(values: Sequence[Any]) -> str:
    return ",".join(str(v) for v in values)


def _options(**options: str | None) -> str:
    given = [f"{key}={value}" for key, value in options.items() if value is not None]
    return f"[{','.join(given)}]" if given else ""


def _k_error(specs: Sequence[Any], epochs: int) -> str:
    names = ", ".join(f"'{spec.name}' (needs {spec.min_samples})" for spec in specs)
    most = max(spec.min_samples for spec in specs)
    return (
        f"kpass metric {names} needs more samples per problem than this eval runs epochs "
        f"({epochs}); run with --epochs {most} or more, or lower k."
    )


# --------------------------------------------------------------------------------------------
# the metric


def _records(scores: list[SampleScore], cluster: str | None) -> tuple[list[dict[str, Any]], list[int | None]]:
    records: list[dict[str, Any]] = []
    epochs: list[int | None] = []
    for score in scores:
        data = kpass_data(score.score)
        epoch = data.get("epoch") if data is not None else None
        record = sample_record(
            sample_id=score.sample_id, epoch=epoch, score=score.score,
            sample_metadata=score.sample_metadata, cluster=cluster,
            where=f"sample {score.sample_id!r}",
        )
        if record is None:
            continue
        record["model"] = "inspect"
        record["task"] = "inspect"
        if data is not None and data.get("output_digest"):  # kpass scorers: for the seed-trap check
            record["metadata"]["output_digest"] = data["output_digest"]
        records.append(record)
        epochs.append(epoch)
    return records, epochs


def _finite(value: Any) -> bool:
    return value is not None and math.isfinite(float(value))


def _flatten(report: Any, specs: Sequence[Any], prefix: str) -> dict[str, float]:
    """Report rows -> Inspect metric dict (estimate, lower, upper, stderr, excluded)."""
    rows = {row.metric: row for row in report.rows}
    out: dict[str, float] = {}
    for spec in specs:
        row = rows.get(spec.name)
        if row is None or not _finite(row.estimate):
            continue
        key = f"{prefix}{spec.name}"
        out[key] = float(row.estimate)
        for suffix, value in zip(_KEYS, (row.low, row.high, row.standard_error)):
            if _finite(value):
                out[f"{key}_{suffix}"] = float(value)
        if row.n_excluded:
            out[f"{key}_excluded"] = float(row.n_excluded)
    return out


def _details(report: Any, specs: Sequence[Any], prefix: str, cluster: str | None,
             confidence_level: float) -> dict[str, Any]:
    """What each interval rests on, for the log (see :func:`_annotate`)."""
    rows = {row.metric: row for row in report.rows}
    intervals = {}
    for spec in specs:
        row = rows.get(spec.name)
        if row is None:
            continue
        intervals[f"{prefix}{spec.name}"] = {
            "method": row.method, "n_problems": int(row.n_problems), "n_samples": int(row.n_samples),
            "n_clusters": None if row.n_clusters is None else int(row.n_clusters),
            "n_excluded": int(row.n_excluded), **({"note": row.note} if row.note else {}),
        }
    return {"cluster": cluster, "confidence_level": confidence_level, "intervals": intervals,
            "notes": [inspect_warnings.note_record(note) for note in report.notes]}


#: Keys already reported for one list of scores, by metric: Inspect hands the same list object
#: to every metric of a scorer (``scorer_for_metrics``), so a kpass metric can see that another
#: kpass metric of the same scorer reported a key and avoid Inspect's de-duplication suffix
#: (``pass@1`` twice would become ``pass@12``). A few recent lists are kept (bounded).
_REPORTED: "OrderedDict[int, tuple[list[SampleScore], dict[int, set[str]]]]" = OrderedDict()
_REPORTED_MAX = 16


def _claim_keys(scores: list[SampleScore], metric_id: int, keys: set[str]) -> set[str]:
    """Record ``keys`` as reported by metric ``metric_id`` for ``scores``; return the keys other
    kpass metrics already reported for the same list."""
    entry = _REPORTED.get(id(scores))
    if entry is None or entry[0] is not scores:
        entry = (scores, {})
        _REPORTED[id(scores)] = entry
        while len(_REPORTED) > _REPORTED_MAX:
            _REPORTED.popitem(last=False)
    taken = set().union(*(other for owner, other in entry[1].items() if owner != metric_id)) if entry[1] else set()
    entry[1][metric_id] = set(keys)
    return taken & keys


def _metric_function(
    fixed_specs: list[Any] | None,
    adaptive: Callable[[int], list[str]] | None,
    *,
    cluster: str | None,
    method: str | None,
    confidence_level: float,
    rng: int | None,
    prefix: str | None,
    family: str,
) -> Metric:
    """The Inspect metric closure shared by every kpass metric factory."""

    def metric_fn(scores: list[SampleScore]) -> Value:
        if not scores:
            return {}
        records, epochs = _records(scores, cluster)
        if not records:
            return {}
        counts = Counter(record["problem_id"] for record in records)
        running = _running_epochs(set(counts))
        most = max(counts.values())
        if fixed_specs is not None:
            specs = fixed_specs
        else:
            assert adaptive is not None
            specs = _parse(adaptive(running if running is not None else min(counts.values())))
        if running is not None:
            too_many = [spec for spec in specs if spec.min_samples > running]
            if too_many:
                raise ValueError(_k_error(too_many, running))
        else:
            too_many = [spec for spec in specs if spec.min_samples > most]
            if too_many:
                raise ValueError(
                    _k_error(too_many, most).replace("than this eval runs epochs", "than any problem has scored epochs")
                )
        usable = [spec for spec in specs if spec.min_samples <= most]
        if not usable:
            return {}
        check_required_columns(usable, records)
        from kpass import SampleTable, compute_report

        runs = inspect_warnings.matching_runs(_RUNNING_TASKS, set(counts))
        inspect_warnings.attach_output_digests(records, runs)
        assign_sample_indices(records, epochs)
        table = SampleTable.from_records(records, source=_SOURCE)
        report = compute_report(
            table, usable, by=("model", "task"), cluster_by="cluster" if cluster else None,
            method=method, confidence_level=confidence_level, rng=rng,
        )
        key_prefix = f"{prefix}/" if prefix else ""
        value = _flatten(report, usable, key_prefix)
        clash = _claim_keys(scores, id(metric_fn), set(value))
        if clash and not prefix:
            # another kpass metric of this scorer reported these keys: prefix ours with our
            # registry name rather than let Inspect append a digit (pass@1 -> pass@12)
            key_prefix = f"{family}/"
            value = _flatten(report, usable, key_prefix)
            clash = _claim_keys(scores, id(metric_fn), set(value))
        if clash:
            shown = ", ".join(sorted(clash)[:4])
            raise ValueError(f"two kpass metrics of one scorer report {shown}; give them different "
                             "prefix= options (kpass_metrics(..., prefix='strict') reports 'strict/pass@1').")
        trap_value, trap_detail = inspect_warnings.check(table, scores, runs, id(metric_fn))
        inspect_warnings.warn_few_clusters(report)
        details = _details(report, usable, key_prefix, cluster, confidence_level)
        _annotate(metric_fn, {**details, **({"seed_trap": trap_detail} if trap_detail else {})})
        return {**value, **trap_value}

    metric_fn.kpass_fixed_specs = fixed_specs  # type: ignore[attr-defined]
    metric_fn.kpass_adaptive = adaptive  # type: ignore[attr-defined]
    return metric_fn


def _annotate(metric_fn: Metric, details: dict[str, Any]) -> None:
    """Put what the intervals rest on into the log, next to the values.

    Inspect's metric values are numbers only, and ``EvalMetric.metadata`` cannot be set by a
    metric; each ``EvalMetric`` does carry the metric's ``params`` (``registry_params``, read
    when Inspect builds the result, after the metric ran). kpass adds one entry to them,
    ``"kpass"``: interval method, problems, samples, clusters and notes per key. It shows in
    ``inspect view`` (the metric's params) and in the log's ``results.scores[].metrics[].params``.
    """
    from .inspect_compat import metric_params

    params = metric_params(metric_fn)
    if params is not None:
        params["kpass"] = details


def _check_common(cluster: str | None, method: str | None, confidence_level: float, rng: int | None) -> None:
    if cluster is not None and not (isinstance(cluster, str) and cluster):
        raise TypeError(f"`cluster` must be a sample-metadata key (a non-empty string) or None; got {cluster!r}.")
    if not (isinstance(confidence_level, (int, float)) and 0 < confidence_level < 1):
        raise ValueError(f"`confidence_level` must be in (0, 1); got {confidence_level!r}.")
    if rng is not None and not (isinstance(rng, int) and not isinstance(rng, bool)):
        raise TypeError(f"`rng` must be an int seed or None (Inspect records a metric's options in the log, "
                        f"so a Generator cannot be given); got {rng!r}.")
    if method is not None:
        methods = tuple(_core().INTERVAL_METHODS)
        if method not in methods:
            raise ValueError(f"`method` must be one of {', '.join(methods)}; got {method!r}.")
        if method == "clustered-t" and cluster is None:
            raise ValueError("`method` 'clustered-t' needs `cluster` (a sample-metadata key).")
        if method == "t" and cluster is not None:
            raise ValueError("`method` 't' ignores `cluster`; use 'clustered-t' (Inspect's clustered "
                             "standard error) or drop `cluster`.")


def _check_prefix(prefix: str | None) -> None:
    if prefix is not None and not (isinstance(prefix, str) and prefix.strip() and "/" not in prefix):
        raise ValueError(f"`prefix` must be a non-empty string without '/' (such as 'strict'); got {prefix!r}.")


def _make(spec_texts: Sequence[str] | None, adaptive: Callable[[int], list[str]] | None, *,
          cluster: str | None, method: str | None, confidence_level: float, rng: int | None,
          prefix: str | None = None, family: str = "kpass_metrics") -> Metric:
    _check_common(cluster, method, confidence_level, rng)
    _check_prefix(prefix)
    _ensure_epochs_hook()
    fixed = _parse(spec_texts) if spec_texts else None
    if fixed is None and adaptive is not None:
        _parse(adaptive(16))  # validate the options now, at task construction
    return _metric_function(fixed, adaptive, cluster=cluster, method=method,
                            confidence_level=confidence_level, rng=rng, prefix=prefix, family=family)


def _default_family(n: int) -> list[str]:
    ks = _join(_ks_up_to(n))
    return [f"pass@{ks}", f"pass^{ks}"]


@metric(name="kpass_metrics", scores="unreduced")
def _kpass_metrics(
    specs: str | list[str] | None = None,
    cluster: str | None = None,
    method: str | None = None,
    confidence_level: float = 0.95,
    rng: int | None = 0,
    prefix: str | None = None,
    kpass: Any = None,
) -> Metric:
    # `kpass` is the interval description kpass adds to the params in the log (_annotate);
    # accepted and ignored so that a metric re-created from those params still builds
    texts = [specs] if isinstance(specs, str) else list(specs or [])
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"kpass metric specs must be strings such as 'pass@1,8'; got {text!r}.")
    return _make(texts or None, None if texts else _default_family, cluster=cluster, method=method,
                 confidence_level=confidence_level, rng=rng, prefix=prefix)


def kpass_metrics(
    *specs: str,
    cluster: str | None = None,
    method: str | None = None,
    confidence_level: float = 0.95,
    rng: int | None = 0,
    prefix: str | None = None,
) -> Metric:
    r"""Inspect metric reporting kpass metrics with intervals, from every epoch of every sample.

    Parameters
    ----------
    *specs : str
        kpass metric specs, e.g. ``"pass@1,8,16"``, ``"pass^4"``, ``"g-pass@16_0.5,1.0"``,
        ``"mg-pass@16"``, ``"cons@16"``, ``"cot-pass@16[rule=majority]"``, ``"fin@1"`` (see
        :func:`kpass.parse_metric_specs`). None: pass@k and pass^k for k = 1, 2, 4, ... up to the
        epochs.
    cluster : str, optional
        Sample-metadata key holding each problem's cluster (subject, passage, template): the
        interval then resamples or pools whole clusters, and the standard error is Inspect's
        clustered one (``stderr(cluster=...)``) on the per-problem values.
    method : str, optional
        Interval method of :func:`kpass.mean_ci` (default: kpass's default for the data).
    confidence_level : float, default: 0.95
    rng : int or None, default: 0
        Seed of the bootstrap intervals (reproducible by default), the ``rng`` of
        :func:`kpass.compute_report`. An int or None only: Inspect records a metric's options in
        the log and re-creates the metric from them, so a Generator cannot be given.
    prefix : str, optional
        Prefix of every key: ``prefix="strict"`` reports ``strict/pass@1``, ``strict/pass@1_lower``...
        (``prefix``, not ``name``: Inspect re-creates a metric with ``registry_create(type, name,
        **options)``, so an option called ``name`` could never be re-created.)
        Give one to each of two kpass metrics of one scorer that report the same metric (e.g. two
        clusterings); without it the second is prefixed with its registry name
        (``kpass_metrics/pass@1``) rather than Inspect's de-duplication suffix (``pass@12``).

    Returns
    -------
    Metric
        Registered as ``kpass/kpass_metrics`` (``scores="unreduced"``); its value is a dict with
        keys ``<metric>``, ``<metric>_lower``, ``<metric>_upper``, ``<metric>_stderr`` (and
        ``<metric>_excluded`` when problems had too few epochs).

    Raises
    ------
    kpass.MetricSpecError
        A malformed spec (at once, when the task is built).
    ValueError
        When a metric needs more samples per problem than the eval runs epochs (see the module
        docstring for when).
    """
    return _kpass_metrics(list(specs) or None, cluster=cluster, method=method,
                          confidence_level=confidence_level, rng=rng, prefix=prefix)


def _family_factory(prefix: str, default_ks: Callable[[int], list[int]], *,
                    k: int | Sequence[int] | None, suffix: str = "", options: str = "",
                    cluster, method, confidence_level, rng, name: str) -> Metric:
    ks = _k_list(k, name)
    if ks is not None:
        return _make([f"{prefix}{_join(ks)}{suffix}{options}"], None, cluster=cluster, method=method,
                     confidence_level=confidence_level, rng=rng, family=name)
    return _make(None, lambda n: [f"{prefix}{_join(default_ks(n))}{suffix}{options}"], cluster=cluster,
                 method=method, confidence_level=confidence_level, rng=rng, family=name)


@metric(name="pass_at_k", scores="unreduced")
def pass_at_k_metric(k: int | list[int] | None = None, cluster: str | None = None, method: str | None = None,
              confidence_level: float = 0.95, rng: int | None = 0, kpass: Any = None) -> Metric:
    """pass@k (Chen et al. 2021) with interval; ``k`` default: 1, 2, 4, ... up to the epochs."""
    return _family_factory("pass@", _ks_up_to, k=k, cluster=cluster, method=method,
                           confidence_level=confidence_level, rng=rng, name="pass_at_k")


@metric(name="pass_hat_k", scores="unreduced")
def pass_hat_k_metric(k: int | list[int] | None = None, cluster: str | None = None, method: str | None = None,
               confidence_level: float = 0.95, rng: int | None = 0, kpass: Any = None) -> Metric:
    """pass^k (Yao et al. 2024) with interval; ``k`` default: 1, 2, 4, ... up to the epochs."""
    return _family_factory("pass^", _ks_up_to, k=k, cluster=cluster, method=method,
                           confidence_level=confidence_level, rng=rng, name="pass_hat_k")


@metric(name="g_pass_at_k", scores="unreduced")
def g_pass_at_k_metric(k: int | list[int] | None = None, tau: float | list[float] | str = "0.5,0.75,1.0",
                cluster: str | None = None, method: str | None = None,
                confidence_level: float = 0.95, rng: int | None = 0, kpass: Any = None) -> Metric:
    """G-Pass@k_tau (Liu et al. 2024); ``k`` default: the largest power of two up to the epochs."""
    taus = tau if isinstance(tau, str) else _join([tau] if isinstance(tau, (int, float)) else tau)
    return _family_factory("g-pass@", lambda n: [_largest_power_of_two(n)], k=k, suffix=f"_{taus}",
                           cluster=cluster, method=method, confidence_level=confidence_level, rng=rng,
                           name="g_pass_at_k")


@metric(name="mg_pass_at_k", scores="unreduced")
def mg_pass_at_k_metric(k: int | list[int] | None = None, variant: str | None = None, cluster: str | None = None,
                 method: str | None = None, confidence_level: float = 0.95, rng: int | None = 0, kpass: Any = None) -> Metric:
    """mG-Pass@k (Liu et al. 2024); ``k`` default: the largest power of two up to the epochs."""
    return _family_factory("mg-pass@", lambda n: [_largest_power_of_two(n)], k=k,
                           options=_options(variant=variant), cluster=cluster, method=method,
                           confidence_level=confidence_level, rng=rng, name="mg_pass_at_k")


@metric(name="cons_at_k", scores="unreduced")
def cons_at_k_metric(k: int | list[int] | None = None, ties: str | None = None, invalid: str | None = None,
              cluster: str | None = None, method: str | None = None, confidence_level: float = 0.95,
              rng: int | None = 0, kpass: Any = None, cut: str | None = None) -> Metric:
    """cons@k (majority vote over all k-subsets, from the extracted answers); ``k`` default: 1, 2,
    4, ... up to the epochs. Answers of unfinished epochs abstain (``cut="vote"``: they vote)."""
    return _family_factory("cons@", _ks_up_to, k=k, options=_options(ties=ties, invalid=invalid, cut=cut),
                           cluster=cluster, method=method, confidence_level=confidence_level, rng=rng,
                           name="cons_at_k")


@metric(name="cot_pass_at_k", scores="unreduced")
def cot_pass_at_k_metric(k: int | list[int] | None = None, rule: str | None = None, cluster: str | None = None,
                  method: str | None = None, confidence_level: float = 0.95, rng: int | None = 0, kpass: Any = None) -> Metric:
    """CoT-Pass@k (Wen et al. 2025) from :func:`cot_verifier` verdicts; ``rule`` any/majority/all."""
    return _family_factory("cot-pass@", _ks_up_to, k=k, options=_options(rule=rule), cluster=cluster,
                           method=method, confidence_level=confidence_level, rng=rng, name="cot_pass_at_k")


@metric(name="fin_at_k", scores="unreduced")
def fin_at_k_metric(k: int | list[int] | None = 1, cluster: str | None = None, method: str | None = None,
             confidence_level: float = 0.95, rng: int | None = 0, kpass: Any = None) -> Metric:
    """fin@k: at least one of k samples finished (from :func:`kpass_scorer`'s stop reasons)."""
    return _family_factory("fin@", _ks_up_to, k=k, cluster=cluster, method=method,
                           confidence_level=confidence_level, rng=rng, name="fin_at_k")


def _check_registered_names() -> None:
    """Warn when Inspect did not register kpass's metrics as ``kpass/<name>``.

    Inspect prefixes the package name to the metrics, scorers and hooks of an installed package
    (``kpass/pass_at_k``). It does not recognise kpass as one when a stale ``kpass.egg-info`` or
    ``build/`` in the working directory hides the installed distribution's metadata; the names are
    then bare (``pass_at_k``) and ``--metric kpass/...`` cannot find them. kpass's own build leaves
    no such directory (``make clean`` removes old ones).
    """
    from inspect_ai.util import registry_info

    name = registry_info(_kpass_metrics).name
    if name != "kpass/kpass_metrics":
        warnings.warn(
            f"Inspect registered kpass's metrics without the 'kpass/' prefix (e.g. {name!r}), so names such "
            "as kpass/pass_at_k will not resolve: Inspect does not see kpass as an installed package. Is a "
            "stale kpass.egg-info (or build/) directory in the working directory? Remove it, or reinstall "
            "kpass (pip install kpass, or pip install -e . from a clean checkout).",
            stacklevel=2)


_check_registered_names()


# --------------------------------------------------------------------------------------------
# task-start check: hook (always) and early-stopping preflight (opt-in)


def _kpass_metric_specs(spec: Any) -> list[Any]:
    """kpass MetricSpecs of the fixed-spec kpass metrics declared by an Inspect ``EvalSpec``."""
    from inspect_ai.util import registry_create

    found: list[Any] = []
    for definition in kpass_metric_definitions(spec):
        try:
            created = registry_create("metric", definition.name, **(definition.options or {}))
        except Exception:  # noqa: BLE001 - an unknown or odd definition is not ours to judge
            continue
        for item in getattr(created, "kpass_fixed_specs", None) or []:
            if all(item.name != seen.name for seen in found):
                found.append(item)
    return found


def _epochs_problem(spec: Any, epochs: int) -> str | None:
    too_many = [item for item in _kpass_metric_specs(spec) if item.min_samples > epochs]
    return _k_error(too_many, epochs) if too_many else None


class KpassEpochsHook(Hooks):
    """Records each running task's epochs (for the kpass metrics) and reports, before any model
    call, kpass metrics that need more epochs than the task runs."""

    async def on_task_start(self, data: TaskStart) -> None:
        spec = data.spec
        epochs = int(spec.config.epochs or 1)
        ids = frozenset(str(i) for i in (spec.dataset.sample_ids or []))
        _RUNNING_TASKS[data.eval_id] = (epochs, ids)
        inspect_warnings.task_started(data.eval_id, epochs * len(ids) if ids else None)
        problem = _epochs_problem(spec, epochs)
        if problem is not None:
            # Inspect logs and swallows a hook's exceptions ("Exception calling hook"), except
            # LimitExceededError, which it lets through "so that limits can be enforced via
            # hooks": raised here, before any sample is scheduled, it ends the task with status
            # "error" and this message, before any model call.
            from inspect_ai.util import LimitExceededError

            needed = max(item.min_samples for item in _kpass_metric_specs(spec))
            raise LimitExceededError("custom", value=epochs, limit=needed, message=problem)

    async def on_sample_end(self, data: SampleEnd) -> None:
        inspect_warnings.sample_ended(data.eval_id, data.sample)

    async def on_task_end(self, data: TaskEnd) -> None:
        _RUNNING_TASKS.pop(data.eval_id, None)
        inspect_warnings.task_ended(data.eval_id)


_hook_registered = False


def _ensure_epochs_hook() -> None:
    """Register :class:`KpassEpochsHook` with Inspect, once, when the first kpass metric is made.

    Registering lazily keeps kpass out of the way of Inspect runs that use no kpass metric
    (Inspect imports every extension's entry point at start-up and lists their hooks).
    """
    global _hook_registered
    if not _hook_registered:
        hooks(name="kpass_epochs",
              description="kpass: check kpass metrics against the epochs when a task starts")(KpassEpochsHook)
        _hook_registered = True


class KpassPreflight:
    """Inspect ``EarlyStopping`` manager that never stops a sample; it checks the task before any
    model call and raises (ending the task with status "error") when a kpass metric needs more
    epochs than the task runs or a sample lacks the metric's cluster key."""

    async def start_task(self, task: Any, samples: list[Any], epochs: int) -> str:
        problem = _epochs_problem(task, epochs)
        if problem is not None:
            raise ValueError(problem)
        clusters = {created_cluster for created_cluster in _kpass_clusters(task) if created_cluster}
        for key in sorted(clusters):
            missing = [sample.id for sample in samples if (sample.metadata or {}).get(key) is None]
            if missing:
                shown = ", ".join(repr(i) for i in missing[:5]) + (" ..." if len(missing) > 5 else "")
                raise ValueError(
                    f"kpass metrics cluster by the sample-metadata key {key!r}, but {len(missing)} "
                    f"sample(s) have no value for it: {shown}."
                )
        return "kpass_preflight"

    async def schedule_sample(self, id: Any, epoch: int) -> None:
        return None

    async def complete_sample(self, id: Any, epoch: int, scores: Any) -> None:
        return None

    async def complete_task(self) -> dict[str, Any]:
        return {}


def _kpass_clusters(spec: Any) -> list[str]:
    """Cluster keys (``cluster=`` options) of the kpass metrics a task declares."""
    keys = [(definition.options or {}).get("cluster") for definition in kpass_metric_definitions(spec)]
    return [key for key in keys if isinstance(key, str)]


def kpass_preflight() -> KpassPreflight:
    """Check a task's kpass metrics before any model call: ``Task(..., early_stopping=kpass_preflight())``.

    Inspect calls an early-stopping manager with the task's final epochs (after ``--epochs``) and
    samples before it schedules any sample, and an exception there ends the task with status
    ``"error"``. This one never stops a sample early; it raises ``ValueError`` when a kpass metric
    needs more samples per problem than the epochs, or when a sample lacks a kpass metric's
    cluster key.
    """
    return KpassPreflight()


# --------------------------------------------------------------------------------------------
# epoch reducers (one sample's epochs -> one value; Inspect's NaN convention for k > epochs)


def _scored(scores: list[Score]) -> list[tuple[Score, bool]]:
    out = []
    for score in scores:
        correct = correct_from_value(score.value, where="epoch score")
        if correct is not None:
            out.append((score, correct))
    return out


def _reduced(value: float, scores: list[Score], **metadata: Any) -> Score:
    return Score(value=float(value), metadata={"kpass_reducer": metadata} if metadata else None)


def _nan(scores: list[Score]) -> Score:
    return Score(value=float("nan"))


def _check_k(k: Any, name: str) -> int:
    if not (isinstance(k, int) and not isinstance(k, bool) and k >= 1):
        raise ValueError(f"`k` of the kpass/{name} reducer must be an integer >= 1; got {k!r}.")
    return k


def _count_reducer(k: int, name: str, estimator: Callable[[int, int], float],
                   counter: Callable[[list[tuple[Score, bool]]], int]) -> ScoreReducer:
    def reduce(scores: list[Score]) -> Score:
        scored = _scored(scores)
        n = len(scored)
        if n < k:
            return _nan(scores)
        count = counter(scored)
        return _reduced(estimator(n, count), scores, n=n, count=count)

    return reduce


def _n_correct(scored: list[tuple[Score, bool]]) -> int:
    return sum(1 for _, correct in scored if correct)


def _n_finished(scored: list[tuple[Score, bool]]) -> int:
    total = 0
    for score, _ in scored:
        data = kpass_data(score)
        if data is None or data.get("finished") is None:
            raise ValueError(
                "kpass/fin_at needs the `finished` flag that kpass_scorer() or cot_verifier() records "
                "in Score.metadata['kpass']; score the task with one of them."
            )
        total += bool(data["finished"])
    return total


def _reducer_spec(name: str, text: str) -> Any:
    """The kpass MetricSpec a reducer computes, so that its options are checked when the reducer
    is built, with the same rules and messages as every other kpass metric spec."""
    try:
        (spec,) = _parse([text])
    except ValueError as exc:
        raise ValueError(f"kpass/{name} reducer: {exc}") from None
    return spec


@score_reducer(name="kpass/pass_at")
def pass_at(k: int) -> ScoreReducer:
    """pass@k of one sample's epochs (unbiased, Chen et al. 2021); NaN with fewer than k epochs."""
    k = _check_k(k, "pass_at")
    core = _core()
    return _count_reducer(k, "pass_at", lambda n, c: float(core.pass_at_k([n], [c], k)[0]), _n_correct)


@score_reducer(name="kpass/pass_hat")
def pass_hat(k: int) -> ScoreReducer:
    """pass^k of one sample's epochs (Yao et al. 2024); NaN with fewer than k epochs."""
    k = _check_k(k, "pass_hat")
    core = _core()
    return _count_reducer(k, "pass_hat", lambda n, c: float(core.pass_hat_k([n], [c], k)[0]), _n_correct)


@score_reducer(name="kpass/g_pass_at")
def g_pass_at(k: int, tau: float | str = "0.5") -> ScoreReducer:
    """G-Pass@k_tau of one sample's epochs (Liu et al. 2024); NaN with fewer than k epochs."""
    k = _check_k(k, "g_pass_at")
    tau_value = _reducer_spec("g_pass_at", f"g-pass@{k}_{tau}").params["tau"]
    core = _core()
    return _count_reducer(k, "g_pass_at",
                          lambda n, c: float(core.g_pass_at_k([n], [c], k, tau=tau_value)[0]), _n_correct)


@score_reducer(name="kpass/mg_pass_at")
def mg_pass_at(k: int, variant: str = "published") -> ScoreReducer:
    """mG-Pass@k of one sample's epochs (Liu et al. 2024); NaN with fewer than k epochs."""
    k = _check_k(k, "mg_pass_at")
    variant = _reducer_spec("mg_pass_at", f"mg-pass@{k}" + _options(variant=variant)).option("variant")
    core = _core()
    return _count_reducer(k, "mg_pass_at",
                          lambda n, c: float(core.mg_pass_at_k([n], [c], k, variant=variant)[0]), _n_correct)


@score_reducer(name="kpass/fin_at")
def fin_at(k: int) -> ScoreReducer:
    """fin@k of one sample's epochs (needs :func:`kpass_scorer`); NaN with fewer than k epochs."""
    k = _check_k(k, "fin_at")
    core = _core()
    return _count_reducer(k, "fin_at", lambda n, f: float(core.fin_at_k([n], [f], k)[0]), _n_finished)


def _epoch_labels(scored: list[tuple[Score, bool]], positions: Any) -> str:
    labels = []
    for position in list(positions)[:5]:
        data = kpass_data(scored[int(position)][0])
        epoch = data.get("epoch") if data is not None else None
        labels.append(str(epoch) if epoch is not None else f"#{int(position) + 1}")
    return ", ".join(labels) + (", ..." if len(positions) > 5 else "")


@score_reducer(name="kpass/cons_at")
def cons_at(k: int, ties: str = "fractional", invalid: str = "abstain", cut: str = "abstain") -> ScoreReducer:
    """cons@k of one sample's epochs over all k-subsets, from the extracted answers (the gold
    class is the answers judged correct); NaN with fewer than k epochs.

    The epochs become answer classes exactly as in ``kpass report`` and :func:`kpass_metrics`
    (:func:`kpass.metrics.class_counts_from_codes`): a correct epoch without an answer, or a wrong
    epoch whose answer equals a correct epoch's, is a ``ValueError`` naming the epochs. The answer
    of an epoch that did not finish (``finished`` false in its kpass data: cut at its token limit)
    abstains, unless ``cut="vote"``.
    """
    k = _check_k(k, "cons_at")
    spec = _reducer_spec("cons_at", f"cons@{k}" + _options(ties=ties, invalid=invalid, cut=cut))
    ties, invalid, cut = spec.option("ties"), spec.option("invalid"), spec.option("cut")
    core = _core()
    import numpy as np

    def reduce(scores: list[Score]) -> Score:
        scored = _scored(scores)
        n = len(scored)
        if n < k:
            return _nan(scores)
        codes_of: dict[str, int] = {}
        codes = np.fromiter(
            (-1 if answer is None else codes_of.setdefault(answer, len(codes_of))
             for answer in (answer_of(score) for score, _ in scored)), dtype=np.int64, count=n)
        correct = np.fromiter((c for _, c in scored), dtype=bool, count=n)
        abstain = np.fromiter(((kpass_data(score) or {}).get("finished") is False and cut == "abstain"
                               for score, _ in scored), dtype=bool, count=n)
        try:
            class_counts, n_invalid = core.class_counts_from_codes(np.zeros(n, dtype=np.int64), codes, correct, 1,
                                                                   abstain=abstain)
        except core.InconsistentAnswersError as exc:
            raise ValueError(f"kpass/cons_at reducer, epoch(s) {_epoch_labels(scored, exc.samples)}: "
                             f"{exc.reason}") from exc
        value = core.cons_at_k(class_counts, k, n_invalid=n_invalid, ties=ties, invalid=invalid)[0]
        return _reduced(float(value), scores, n=n, count=int(class_counts[0, 0]))

    return reduce


@score_reducer(name="kpass/cot_pass_at")
def cot_pass_at(k: int, rule: str = "any") -> ScoreReducer:
    """CoT-Pass@k of one sample's epochs from :func:`cot_verifier` verdicts (rule any, majority or
    all); NaN with fewer than k epochs."""
    k = _check_k(k, "cot_pass_at")
    rule = _reducer_spec("cot_pass_at", f"cot-pass@{k}" + _options(rule=rule)).option("rule")
    core = _core()
    import numpy as np

    def reduce(scores: list[Score]) -> Score:
        scored = _scored(scores)
        n = len(scored)
        if n < k:
            return _nan(scores)
        verdict_lists = []
        for score, _ in scored:
            data = kpass_data(score)
            if data is None or "cot_verdicts" not in data:
                raise ValueError("kpass/cot_pass_at needs the verdicts that cot_verifier() records; "
                                 "score the task with cot_verifier(...).")
            verdict_lists.append(list(data["cot_verdicts"] or []))
        depth = max(1, max(len(v) for v in verdict_lists))
        verdicts = np.full((1, n, depth), np.nan)
        slots = np.zeros((1, n, depth), dtype=bool)
        for i, values in enumerate(verdict_lists):
            for j, verdict in enumerate(values):
                slots[0, i, j] = True
                verdicts[0, i, j] = np.nan if verdict is None else float(bool(verdict))
        correct = np.asarray([[c for _, c in scored]])
        d = int(core.count_cot_correct(correct, verdicts, rule=rule, mask=slots)[0])
        return _reduced(float(core.cot_pass_at_k([n], [d], k)[0]), scores, n=n, count=d)

    return reduce
