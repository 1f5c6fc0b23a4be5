"""kpass metrics for lm-eval task YAMLs, with a cluster-bootstrap stderr in lm-eval's table.

Importing this module registers, in lm-eval's registries:

* metrics (each with the aggregation ``kpass`` and ``higher_is_better: true``):

  ============================  ==========================================================
  ``kpass``                     any kpass specs: ``metrics: "pass@1,8 cons@8 g-pass@8_0.5"``
  ``kpass_pass_at_k``           pass@k for ``k: [1, 8]``
  ``kpass_pass_hat_k``          pass^k for ``k``
  ``kpass_cons_at_k``           cons@k (majority vote over all k-subsets) for ``k``
  ``kpass_g_pass_at_k``         G-Pass@k_tau for ``k`` and ``tau: [0.5, 1.0]``
  ``kpass_mg_pass_at_k``        mG-Pass@k for ``k``
  ============================  ==========================================================

* the aggregation ``kpass``, which turns the per-document values into one estimate with
  :func:`kpass.compute_report` (so every formula is kpass's core, never re-implemented here);
* the filter ``kpass_cluster`` (``field: <doc field>``), which keeps all K answers of a document
  and attaches the document's cluster so that the stderr resamples whole clusters;
* a patched ``lm_eval.evaluator_utils.stderr_for_metric``: for the ``kpass`` aggregation it returns
  the bootstrap standard error of :func:`kpass.compute_report` (problems, or whole clusters, resampled
  with their samples; seeded) instead of lm-eval's ``"N/A"``; every other aggregation keeps lm-eval's.

A task YAML uses them like any lm-eval metric. The pipeline that feeds them must keep all K
responses (no ``take_first``); the per-sample verdict is the task's own ``exact_match`` by default
(``score_with:`` names another registered lm-eval metric; further keys such as ``ignore_case`` go
to it)::

    repeats: 8
    filter_list:
      - name: "all"
        filter:
          - function: regex
            regex_pattern: "The answer is (\\-?[0-9]+)"
          - function: kpass_cluster      # optional: cluster-bootstrap by a doc field
            field: topic
    metric_list:
      - metric: kpass                    # by name (needs this module imported, see below)
        metrics: "pass@1,8 cons@8"
      - metric: !function kpass.adapters.lm_eval_metrics.kpass_g_pass_at_k
        k: 8
        tau: [0.5, 1.0]

Names resolve once this module is imported: ``kpass-lm-eval`` imports it; a plain ``lm_eval`` run
imports it through any ``!function kpass.adapters.lm_eval_metrics.<fn>`` in the YAML (lm-eval
imports ``!function`` modules while loading the YAML, before it resolves metric names).

Following lm-eval's convention, a metric that cannot be computed (every problem has fewer than
k samples) aggregates to NaN with a logged warning instead of stopping the run. Documents with
fewer than k answers are never dropped silently: a warning counts and lists them (by their
position in lm-eval's document order), and lm-eval's results get one more metric,
``<metric>_excluded`` (e.g. ``pass@8_excluded``), their number, present only when some document
was left out (its stderr is "N/A").

Framework-side module: it imports lm-eval at module level, because only lm-eval (through a YAML's
``!function``) and ``kpass-lm-eval`` import it; the kpass-side reader imports lm-eval lazily.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

import lm_eval.api.metrics  # noqa: F401  (built-in aggregations must exist before ours)
from lm_eval.api.filter import Filter
from lm_eval.api.registry import (
    aggregation_registry,
    filter_registry,
    get_metric,
    metric_registry,
    register_aggregation,
    register_filter,
    register_metric,
)

from .lm_eval_samples import DEFAULT_FALLBACK, KPASS_VALUE_KEY, binary_verdict, recorded_answer

__all__ = [
    "EXCLUDED_SUFFIX",
    "KPASS_METRIC_NAMES",
    "KSampleAnswers",
    "KpassClusterFilter",
    "install_stderr_patch",
    "kpass",
    "kpass_aggregation",
    "kpass_cons_at_k",
    "kpass_g_pass_at_k",
    "kpass_mg_pass_at_k",
    "kpass_pass_at_k",
    "kpass_pass_hat_k",
    "kpass_scorer_of",
    "kpass_stderr",
]

logger = logging.getLogger(__name__)

#: Seed of the bootstrap behind the stderr, so that lm-eval's table is reproducible.
BOOTSTRAP_SEED = 0
#: Suffix of the metric counting the documents left out of a kpass metric (fewer than k answers).
EXCLUDED_SUFFIX = "_excluded"
#: lm-eval metric holding the share of documents whose K answers are all identical (the seed trap).
IDENTICAL_METRIC = "kpass_identical_samples"
_OWN_KWARGS = frozenset({"metrics", "k", "tau", "score_with", "fallback"})


class KSampleAnswers(list):
    """The K filtered answers of one document, with the document's cluster (``kpass_cluster``)."""

    cluster: str | None = None

    def __init__(self, answers: Sequence[Any], cluster: str | None = None) -> None:
        super().__init__(answers)
        self.cluster = cluster


class KpassClusterFilter(Filter):
    """Filter ``kpass_cluster``: keep all K answers and tag them with ``doc[field]``.

    Put it last in a pipeline feeding kpass metrics; the stderr then resamples whole clusters.
    """

    def __init__(self, field: str | None = None, **kwargs: Any) -> None:
        if not isinstance(field, str) or not field:
            raise ValueError(f"filter kpass_cluster needs `field:` (a document field); got {field!r}.")
        self.field = field
        super().__init__(**kwargs)

    def apply(self, resps, docs):
        out = []
        for answers, doc in zip(resps, docs, strict=True):
            if self.field not in doc:
                raise ValueError(
                    f"filter kpass_cluster: document has no field {self.field!r}; its fields are {sorted(doc)}."
                )
            answers = [answers] if isinstance(answers, str) else list(answers)
            value = doc[self.field]
            out.append(KSampleAnswers(answers, None if value is None else str(value)))
        return out


def _as_list(value: Any, name: str) -> list[Any]:
    if value is None:
        raise ValueError(f"kpass lm-eval metric: `{name}` is required.")
    if isinstance(value, (str, int, float)):
        return [value]
    return list(value)


def _spec_text(family: str, kwargs: Mapping[str, Any]) -> str:
    ks = ",".join(str(int(k)) for k in _as_list(kwargs.get("k"), "k"))
    if family == "G-Pass@":
        taus = ",".join(str(t) for t in _as_list(kwargs.get("tau"), "tau"))
        return f"{family}{ks}_{taus}"
    return f"{family}{ks}"


def _samples_of(references: Sequence[Any], predictions: Sequence[Any], *, score_with: str,
                score_kwargs: Mapping[str, Any], fallbacks: frozenset[str]) -> dict[str, Any]:
    """Per-document sample record: verdicts by ``score_with``, answers (gold class canonical)."""
    if len(predictions) != 1 or len(references) != 1:
        raise ValueError(f"kpass lm-eval metric: expected one document per call; got {len(predictions)}.")
    result = predictions[0]
    gold = references[0]
    cluster = getattr(result, "cluster", None)
    answers = [result] if isinstance(result, str) else list(result)
    scorer = get_metric(score_with)
    if scorer is None:
        raise ValueError(f"kpass lm-eval metric: `score_with` names no registered lm-eval metric: {score_with!r}.")
    golds = list(gold) if isinstance(gold, (list, tuple)) else [gold]
    correct = []
    for index, answer in enumerate(answers):
        verdict = False
        for option in golds:
            reference = str(option) if isinstance(answer, str) else option
            value = scorer(references=[reference], predictions=[answer], **score_kwargs)
            if isinstance(value, Mapping):
                value = value[score_with]
            verdict = binary_verdict(value, metric=score_with, where=f"sample {index} (answer {answer!r})")
            if verdict:
                break
        correct.append(verdict)
    gold_text = str(golds[0]) if golds else None
    recorded = [recorded_answer(answer, verdict, gold_text, fallbacks)
                for answer, verdict in zip(answers, correct, strict=True)]
    return {"correct": correct, "answers": recorded, "gold": gold_text, "cluster": cluster}


def kpass_scorer_of(kwargs: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(score_with, options)``: how a kpass metric with these YAML keys judges one sample."""
    return (kwargs.get("score_with", "exact_match"),
            {key: value for key, value in kwargs.items() if key not in _OWN_KWARGS})


def _k_sample_metric(spec_text: str, references, predictions, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    from kpass import parse_metric_specs

    try:
        specs = parse_metric_specs(spec_text)
        score_with, score_kwargs = kpass_scorer_of(kwargs)
        fallback = kwargs.get("fallback", DEFAULT_FALLBACK)
        fallbacks = frozenset(_as_list(fallback, "fallback"))
        samples = _samples_of(references, predictions, score_with=score_with, score_kwargs=score_kwargs,
                              fallbacks=fallbacks)
    except TypeError as error:  # lm-eval retries a metric that raises TypeError with other arguments
        raise ValueError(f"kpass lm-eval metric {spec_text!r}: {error}") from error
    out: dict[str, Any] = {}
    n_samples = len(samples["correct"])
    if n_samples >= 2:  # the seed trap, in lm-eval's results: share of documents with K identical answers
        out[IDENTICAL_METRIC] = {"metric": IDENTICAL_METRIC, "statistic": "identical", KPASS_VALUE_KEY: samples}
    for spec in specs:
        out[spec.name] = {"metric": spec.name, KPASS_VALUE_KEY: samples}
        if n_samples < spec.min_samples:
            # this document is left out of spec's estimate: say so in lm-eval's results too, as the
            # metric "<name>_excluded" (the number of such documents; present only when > 0)
            out[spec.name + EXCLUDED_SUFFIX] = {"metric": spec.name, "statistic": "excluded",
                                                KPASS_VALUE_KEY: samples}
    return out


def kpass(references=None, predictions=None, **kwargs) -> dict[str, Any]:
    """Any kpass metrics of one document: ``metrics: "pass@1,8 cons@8 g-pass@8_0.5"``.

    Parameters
    ----------
    references : list
        ``[gold]`` (lm-eval passes one document at a time).
    predictions : list
        ``[answers]``: the document's K filtered answers (a list), or one answer (a string).
    metrics : str or list of str
        kpass metric specs (see ``kpass metrics``); ``k: [...]`` alone means pass@k.
    score_with : str, default ``"exact_match"``
        Registered lm-eval metric giving each sample's 0/1 verdict; other keys go to it.
    fallback : str or list of str, default ``"[invalid]"``
        Filtered answers meaning "no extractable answer" (null answers for cons@k).

    Returns
    -------
    dict
        One entry per canonical metric name (``pass@8``...), each a per-document record that the
        ``kpass`` aggregation reduces with :func:`kpass.compute_report`.
    """
    spec_text = kwargs.get("metrics")
    if spec_text is None:
        spec_text = _spec_text("pass@", kwargs)
    elif not isinstance(spec_text, str):
        spec_text = " ".join(str(part) for part in spec_text)
    return _k_sample_metric(spec_text, references, predictions, kwargs)


def kpass_pass_at_k(references=None, predictions=None, **kwargs) -> dict[str, Any]:
    """Unbiased pass@k (Chen et al. 2021) for ``k: [...]``; see :func:`kpass`."""
    return _k_sample_metric(_spec_text("pass@", kwargs), references, predictions, kwargs)


def kpass_pass_hat_k(references=None, predictions=None, **kwargs) -> dict[str, Any]:
    """pass^k (all k of k correct; Yao et al. 2024) for ``k: [...]``; see :func:`kpass`."""
    return _k_sample_metric(_spec_text("pass^", kwargs), references, predictions, kwargs)


def kpass_cons_at_k(references=None, predictions=None, **kwargs) -> dict[str, Any]:
    """cons@k, the majority vote averaged over all k-subsets, for ``k: [...]``; see :func:`kpass`."""
    return _k_sample_metric(_spec_text("cons@", kwargs), references, predictions, kwargs)


def kpass_g_pass_at_k(references=None, predictions=None, **kwargs) -> dict[str, Any]:
    """G-Pass@k_tau (Liu et al. 2024) for ``k: [...]`` and ``tau: [...]``; see :func:`kpass`."""
    return _k_sample_metric(_spec_text("G-Pass@", kwargs), references, predictions, kwargs)


def kpass_mg_pass_at_k(references=None, predictions=None, **kwargs) -> dict[str, Any]:
    """mG-Pass@k (Liu et al. 2024) for ``k: [...]``; see :func:`kpass`."""
    return _k_sample_metric(_spec_text("mG-Pass@", kwargs), references, predictions, kwargs)


_METRIC_FUNCTIONS = {
    "kpass": kpass,
    "kpass_pass_at_k": kpass_pass_at_k,
    "kpass_pass_hat_k": kpass_pass_hat_k,
    "kpass_cons_at_k": kpass_cons_at_k,
    "kpass_g_pass_at_k": kpass_g_pass_at_k,
    "kpass_mg_pass_at_k": kpass_mg_pass_at_k,
}
#: Metric names this module registers (the post-hoc reader skips them when choosing a verdict).
KPASS_METRIC_NAMES = frozenset(_METRIC_FUNCTIONS)


# ------------------------------------------------------------------ aggregation and stderr


class _ReportCache:
    """The last report row computed, so lm-eval's aggregation and stderr calls share one report."""

    items: Any = None
    length: int = -1
    n_resamples: int | None = None
    row: Any = None


_cache = _ReportCache()


def _excluded_count(items: Sequence[Any]) -> int | None:
    """The number of documents when ``items`` are ``<metric>_excluded`` records, else None."""
    if items and all(isinstance(item, Mapping) and item.get("statistic") == "excluded" for item in items):
        return len(items)
    return None


def _report_row(items: Sequence[Mapping[str, Any]], n_resamples: int | None = None):
    """The :func:`kpass.compute_report` row for one metric over lm-eval's per-document values.

    ``n_resamples=None`` accepts a cached row computed with any number of resamples (the estimate
    does not depend on it). Documents with fewer answers than the metric needs are left out of
    the estimate with a logged warning that counts and names them (by their position in lm-eval's
    list of documents, which is the ``doc_id`` unless ``--limit``/``--samples`` chose the
    documents); lm-eval's results also get ``<metric>_excluded``, their number.
    """
    from kpass import SampleTable, compute_report, parse_metric_specs

    if (_cache.items is items and _cache.length == len(items)
            and (n_resamples is None or _cache.n_resamples == n_resamples)):
        return _cache.row
    names = {item.get("metric") if isinstance(item, Mapping) and item.get("statistic") is None else None
             for item in items}
    if len(names) != 1 or None in names:
        raise ValueError(
            "the `kpass` aggregation takes the values of kpass's lm-eval metrics (one metric at a time); "
            f"got metrics {sorted(map(str, names))}."
        )
    (metric,) = names
    name = str(metric)
    (spec,) = parse_metric_specs(name)
    sizes = [len(item[KPASS_VALUE_KEY]["correct"]) for item in items]
    if max(sizes) < spec.min_samples:
        logger.warning("kpass metric %s: no problem has enough samples (%s needs %d per document, the most any of "
                       "the %d documents has is %d); reporting NaN. Set `repeats:` to at least k and keep all "
                       "responses in the filter pipeline (no take_first).",
                       name, name, spec.min_samples, len(items), max(sizes))
        _cache.items, _cache.length, _cache.n_resamples, _cache.row = items, len(items), n_resamples, None
        return None
    columns: dict[str, list[Any]] = {key: [] for key in (
        "model", "task", "problem_id", "sample_index", "correct", "answer", "gold", "cluster")}
    for document, item in enumerate(items):
        samples = item[KPASS_VALUE_KEY]
        n = len(samples["correct"])
        columns["problem_id"].extend([str(document)] * n)
        columns["sample_index"].extend(range(n))
        columns["correct"].extend(samples["correct"])
        columns["answer"].extend(samples["answers"])
        columns["gold"].extend([samples["gold"]] * n)
        columns["cluster"].extend([samples.get("cluster")] * n)
    rows = len(columns["problem_id"])
    columns["model"] = ["lm-eval"] * rows
    columns["task"] = ["lm-eval"] * rows
    clustered = any(cluster is not None for cluster in columns["cluster"])
    if not clustered:
        del columns["cluster"]
    table = SampleTable.from_columns(columns, source=f"lm-eval metric {name}")
    # kpass's default interval, as the CLI and Inspect compute it (one few-cluster rule on every path)
    report = compute_report(table, [spec], cluster_by="cluster" if clustered else None,
                            rng=BOOTSTRAP_SEED, n_resamples=n_resamples)
    row = report.rows[0] if report.rows else None
    _log_few_clusters(name, row)
    excluded = [problem for exclusion in report.exclusions for problem in exclusion.problem_ids]
    if excluded:
        shown = ", ".join(excluded[:20]) + (", ..." if len(excluded) > 20 else "")
        logger.warning("kpass metric %s: %d of %d documents left out of the estimate (%s): documents %s "
                       "(positions in lm-eval's document order); their number is reported as %s%s.",
                       name, len(excluded), len(items), "; ".join(e.reason for e in report.exclusions[:3]),
                       shown, name, EXCLUDED_SUFFIX)
    if row is not None and row.estimate is None:
        row = None
    _cache.items, _cache.length, _cache.n_resamples, _cache.row = items, len(items), n_resamples, row
    return row


def _is_identical_record(items: Sequence[Any]) -> bool:
    return bool(items) and all(isinstance(item, Mapping) and item.get("statistic") == "identical" for item in items)


def _identical_share(items: Sequence[Any]) -> float | None:
    """Share of documents whose K answers are identical, for :data:`IDENTICAL_METRIC` records (else None).

    Identical *answers* (the filtered ones lm-eval hands a metric; the raw generations are not
    among its arguments) are a lower bound of identical generations' warning sign: with K different
    samples, most problems rarely give K equal answers, unless every sample is one and the same.
    """
    if not _is_identical_record(items):
        return None
    same = sum(1 for item in items if len(set(map(str, item[KPASS_VALUE_KEY]["answers"]))) == 1)
    share = same / len(items)
    if share > 0.5:
        logger.warning("kpass: %d of %d documents got K identical answers (temperature 0, or one seed sent with "
                       "every repeat to a server that honours it?): pass@k then equals pass@1. lm-eval's results "
                       "keep the share as %s; run the task through kpass-lm-eval, which varies the seed per "
                       "repeat.", same, len(items), IDENTICAL_METRIC)
    return share


def _log_few_clusters(name: str, row: Any) -> None:
    """Log the note the CLI prints for an interval over fewer than 10 clusters (lm-eval's table has no room)."""
    from kpass.metrics import few_clusters_note

    note = None if row is None else few_clusters_note(row.n_clusters, row.method)
    if note is not None:
        logger.warning("kpass metric %s: %s", name, note)


def kpass_aggregation(items: Sequence[Mapping[str, Any]]) -> float:
    """Aggregation ``kpass``: the benchmark estimate of one kpass metric (NaN when undefined).

    For the ``<metric>_excluded`` records: the number of documents left out of ``<metric>``; for the
    :data:`IDENTICAL_METRIC` records: the share of documents whose K answers are identical.
    """
    share = _identical_share(items)
    if share is not None:
        return share
    count = _excluded_count(items)
    if count is not None:
        return float(count)
    row = _report_row(items)
    return math.nan if row is None else float(row.estimate)


def kpass_stderr(items: Sequence[Mapping[str, Any]], n_resamples: int | None = None) -> float:
    """Standard error of :func:`kpass_aggregation`: that of kpass's default interval (clustered when tagged).

    The same number as ``kpass report``'s SE column; with fewer than 10 clusters that of the
    few-cluster score interval, and the note is logged (:func:`kpass.metrics.few_clusters_note`).

    ``n_resamples``: bootstrap resamples (lm-eval passes its ``bootstrap_iters``); default kpass's.
    NaN when the metric or its interval is undefined (for instance a single cluster), and for a
    count of excluded documents (which lm-eval's table shows as "N/A").
    """
    if _excluded_count(items) is not None or _is_identical_record(items):
        return math.nan
    row = _report_row(items, n_resamples)
    if row is None or row.standard_error is None:
        return math.nan
    return float(row.standard_error)


kpass_aggregation.kpass_stderr = kpass_stderr  # type: ignore[attr-defined]


def install_stderr_patch() -> None:
    """Make ``lm_eval.evaluator_utils.stderr_for_metric`` return :func:`kpass_stderr` for kpass.

    lm-eval recognises aggregations by identity and answers "N/A" for any it does not know; the
    patch delegates every other aggregation to lm-eval's own function. Idempotent.
    """
    import lm_eval.evaluator_utils as evaluator_utils

    current = evaluator_utils.stderr_for_metric
    if getattr(current, "_kpass_patched", False):
        return

    def stderr_for_metric(metric, bootstrap_iters):
        stderr = getattr(metric, "kpass_stderr", None)
        if stderr is not None:
            if not bootstrap_iters or bootstrap_iters <= 0:
                return None
            # a count of excluded documents has no standard error: lm-eval's "N/A"
            return lambda items: ("N/A" if _excluded_count(items) is not None or _is_identical_record(items)
                                  else stderr(items, n_resamples=int(bootstrap_iters)))
        return current(metric=metric, bootstrap_iters=bootstrap_iters)

    stderr_for_metric._kpass_patched = True  # type: ignore[attr-defined]
    stderr_for_metric.__wrapped__ = current  # type: ignore[attr-defined]
    evaluator_utils.stderr_for_metric = stderr_for_metric


def _register() -> None:
    if "kpass" not in aggregation_registry:
        register_aggregation("kpass")(kpass_aggregation)
    for name, function in _METRIC_FUNCTIONS.items():
        if name not in metric_registry:
            register_metric(metric=name, higher_is_better=True, aggregation="kpass")(function)
    if "kpass_cluster" not in filter_registry:
        register_filter("kpass_cluster")(KpassClusterFilter)
    install_stderr_patch()


_register()
