"""The built-in metric families, readers and tokenizers, registered through the same hooks as any plugin.

Every family here only gathers per-problem inputs from a :class:`~kpass.ProblemSet` and calls the
metric core (:mod:`kpass.metrics`); no formula lives in the host.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from kpass import metrics as core

from kpass.data.problems import ProblemSet
from kpass.data.readers import CsvReader, JsonlReader, ParquetReader
from kpass.data.tokenizers import BUILTIN_TOKENIZERS
from kpass.host.hookspecs import hookimpl
from kpass.host.specs import MetricFamily, MetricSpec

__all__ = [
    "ConsAtK", "CoTPassAtK", "FinAtK", "GPassAtK", "MGPassAtK", "PassAtK", "PassHatK",
    "register_answer_extractors", "register_metrics", "register_readers", "register_tokenizers",
]


class PassAtK(MetricFamily):
    """pass@k (Chen et al. 2021): at least one of k samples correct; :func:`kpass.pass_at_k`.

    ``pass@K[extrapolate]`` is the model-based estimate of :func:`kpass.extrapolate_pass_at_k`
    (any K, also beyond the samples drawn), labelled "extrapolated" in every output; a failed
    goodness-of-fit check refuses the estimate, a poor one is said in a note.
    """

    statistics = ("counts",)
    symbol = "pass@"
    flags = ("extrapolate",)
    supports_budget = True
    example = "pass@1,8,64"
    description = ("P(at least one of k samples is correct), unbiased (Chen et al. 2021); "
                   "[extrapolate]: model-based, any k")

    def min_samples(self, spec: MetricSpec) -> int:
        return 1 if spec.params.get("extrapolate") else spec.k

    def compute(self, problems: ProblemSet, spec: MetricSpec) -> NDArray[np.float64]:
        if spec.params.get("extrapolate"):
            fit = core.fit_difficulty(problems.n_samples, problems.n_correct)
            return fit.posterior_pass_at_k(problems.n_samples, problems.n_correct, spec.k)
        return core.pass_at_k(problems.n_samples, problems.n_correct, spec.k)

    def summarize(self, problems: ProblemSet, spec: MetricSpec, *, clusters, options):
        if not spec.params.get("extrapolate"):
            return None
        result = core.extrapolate_pass_at_k(
            problems.n_samples, problems.n_correct, spec.k, clusters=clusters,
            confidence_level=options["confidence_level"], rng=options.get("rng"))
        notes = [result.description]
        if result.n_failed_refits:
            notes.append(f"{result.n_failed_refits} of {result.n_resamples} bootstrap refits did not converge "
                         "and were left out of the interval")
        if result.fit_quality == "failed":
            return None, notes + ["refused: the fitted model does not reproduce the observed pass@k for "
                                  f"k <= {int(result.fit_ks[-1])} (max |z| = {result.max_abs_z:.2f} > 4)"]
        if result.fit_quality == "poor":
            notes.append(f"warning: poor fit (max |z| = {result.max_abs_z:.2f} > 2); treat the number with care")
        interval = core.IntervalResult(
            estimate=result.estimate, low=result.low, high=result.high,
            standard_error=float("nan"), confidence_level=result.confidence_level,
            n_problems=result.n_problems, n_clusters=result.n_clusters, method="extrapolated",
            details={"label": "extrapolated", "population": result.population, "max_abs_z": result.max_abs_z,
                     "fit_quality": result.fit_quality, "zero_mass": result.fit.zero_mass,
                     "n_resamples": result.n_resamples, "seed": result.seed})
        return interval, notes


class PassHatK(MetricFamily):
    """pass^k (Yao et al. 2024): all k samples correct; :func:`kpass.pass_hat_k`."""

    statistics = ("counts",)
    symbol = "pass^"
    supports_budget = True
    example = "pass^4"
    description = "P(all k samples are correct) (tau-bench, Yao et al. 2024)"

    def compute(self, problems: ProblemSet, spec: MetricSpec) -> NDArray[np.float64]:
        return core.pass_hat_k(problems.n_samples, problems.n_correct, spec.k)


class GPassAtK(MetricFamily):
    """G-Pass@k_tau (Liu et al. 2024): at least ceil(tau k) of k correct; :func:`kpass.g_pass_at_k`."""

    statistics = ("counts",)
    symbol = "G-Pass@"
    parameter = "tau"
    supports_budget = True
    example = "g-pass@16_0.5,0.75,1.0"
    description = "P(at least ceil(tau*k) of k samples are correct) (Liu et al. 2024)"

    def compute(self, problems: ProblemSet, spec: MetricSpec) -> NDArray[np.float64]:
        return core.g_pass_at_k(problems.n_samples, problems.n_correct, spec.k, tau=spec.params["tau"])


class MGPassAtK(MetricFamily):
    """mG-Pass@k (Liu et al. 2024): G-Pass averaged over tau in [0.5, 1]; :func:`kpass.mg_pass_at_k`."""

    statistics = ("counts",)
    symbol = "mG-Pass@"
    options = {"variant": ("published", "integral")}
    supports_budget = True
    example = "mg-pass@16"
    description = "mean G-Pass@k_tau over tau in [0.5, 1] (published sum; variant=integral)"

    def compute(self, problems: ProblemSet, spec: MetricSpec) -> NDArray[np.float64]:
        return core.mg_pass_at_k(problems.n_samples, problems.n_correct, spec.k, variant=spec.option("variant"))


class FinAtK(MetricFamily):
    """fin@k: at least one of k samples finished (within the budget); :func:`kpass.fin_at_k`."""

    statistics = ("counts", "finished")
    symbol = "fin@"
    requires = ("finished",)
    supports_budget = True
    example = "fin@1"
    description = "P(at least one of k samples finished), from `finished` or a token budget (B=...)"

    def compute(self, problems: ProblemSet, spec: MetricSpec) -> NDArray[np.float64]:
        return core.fin_at_k(problems.n_samples, problems.n_finished(), spec.k)


class CoTPassAtK(MetricFamily):
    """CoT-Pass@k (Wen et al. 2025): correct answer and verified chain of thought;
    :func:`kpass.count_cot_correct` then :func:`kpass.cot_pass_at_k`."""

    statistics = ("counts", "cot")
    symbol = "CoT-Pass@"
    options = {"rule": ("any", "majority", "all")}
    requires = ("cot_verdicts",)
    example = "cot-pass@8[rule=majority]"
    description = "pass@k counting samples whose answer AND verified chain of thought are correct (Wen et al. 2025)"

    def compute(self, problems: ProblemSet, spec: MetricSpec) -> NDArray[np.float64]:
        d = problems.cot_correct(spec.option("rule"))
        return core.cot_pass_at_k(problems.n_samples, d, spec.k)


class ConsAtK(MetricFamily):
    """cons@k (maj@k): majority vote over k samples, exact over all k-subsets; :func:`kpass.cons_at_k`.

    The gold class is the set of samples judged ``correct`` (the judge decides equivalence, e.g.
    ``"7"`` and ``"7.0"``); samples judged incorrect are grouped by exact ``answer`` string; a null
    answer is "no extractable answer" (abstains by default, ``invalid=vote`` makes it a class).
    The answer of an unfinished generation (``finished`` false: cut at its token limit, whatever
    an extractor found in the cut text) counts as no answer by default (``cut=abstain``; the
    report counts them in a note); ``cut=vote`` lets it vote (``--cut-answers vote``).
    An incorrect sample whose answer string equals a correct sample's answer in the same problem,
    or a correct sample with no answer, is a :class:`~kpass.DataError` naming the line.
    """

    statistics = ("answer_classes",)
    symbol = "cons@"
    aliases = ("maj@",)
    options = {"ties": ("fractional", "strict"), "invalid": ("abstain", "vote"), "cut": ("abstain", "vote")}
    requires = ("answer",)
    example = "cons@16[ties=strict]"
    description = "majority vote of k samples, averaged over all k-subsets (needs `answer`)"

    def compute(self, problems: ProblemSet, spec: MetricSpec) -> NDArray[np.float64]:
        class_counts, n_invalid = problems.answer_classes(cut_answers=spec.option("cut"))
        return core.cons_at_k(class_counts, spec.k, n_invalid=n_invalid, ties=spec.option("ties"),
                              invalid=spec.option("invalid"))

    def notes(self, problems: ProblemSet, spec: MetricSpec) -> list[str]:
        """How many answers of unfinished generations abstained (or voted, ``cut=vote``), and how
        many answers vote although nothing says whether their generation finished (``finished`` null)."""
        cut = int(problems.n_cut_answers().sum())
        unknown = int(problems.n_unknown_finished_answers().sum()) if spec.option("cut") == "abstain" else 0
        total = int(problems.n_samples.sum())
        notes = []
        if cut and spec.option("cut") == "vote":
            notes.append(f"{cut} of {total} answers come from unfinished generations (cut at the token limit) and vote "
                         "(cut=vote)")
        elif cut:
            notes.append(f"{cut} of {total} answers come from unfinished generations (cut at the token limit) and "
                         f"abstain (cons@{spec.k}[cut=vote] or --cut-answers vote lets them vote)")
        if unknown:
            notes.append(f"{unknown} of {total} answers vote although whether their generation finished is unknown "
                         "(finished is null; a cut one would abstain: for lm-eval output, the model's tokenizer, "
                         "--tokenizer, decides it)")
        return notes


_FAMILIES = {
    "pass@k": PassAtK,
    "pass^k": PassHatK,
    "G-Pass@k": GPassAtK,
    "mG-Pass@k": MGPassAtK,
    "cons@k": ConsAtK,
    "CoT-Pass@k": CoTPassAtK,
    "fin@k": FinAtK,
}


@hookimpl
def register_metrics(register):
    for name, family in _FAMILIES.items():
        register(name, family())


@hookimpl
def register_readers(register):
    register("jsonl", JsonlReader())
    register("csv", CsvReader())
    register("parquet", ParquetReader())


@hookimpl
def register_answer_extractors(register):
    from kpass.host import extractors

    extractors.register_answer_extractors(register)


@hookimpl
def register_tokenizers(register):
    """The built-in tokenizers ``hf`` and ``tiktoken`` (:mod:`kpass.data.tokenizers`)."""
    for name, factory in BUILTIN_TOKENIZERS.items():
        register(name, factory)
