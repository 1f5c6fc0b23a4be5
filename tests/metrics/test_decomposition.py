"""delta pass@1 = F + P + reach (kpass.metrics._decomposition), docs/spec.md section 6."""

from __future__ import annotations

import importlib.util
import math
import pathlib
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kpass.metrics import (
    ATTRIBUTIONS,
    DegenerateIntervalWarning,
    UndefinedDecompositionWarning,
    budget_counts,
    decompose_budget_counts,
    decompose_pass_change,
)
from kpass.metrics._decomposition import _S, _per_problem_matrix, _statistic

pytestmark = pytest.mark.filterwarnings(
    "ignore::kpass.metrics.DegenerateIntervalWarning",
    "ignore::kpass.metrics.UndefinedDecompositionWarning",
    "ignore::kpass.metrics._warnings.IntervalMethodWarning",  # the linear terms on tiny generated data
)


# ------------------------------------------------------------------------------- reference


def _reference(nb, fb, cb, nm, fm, cm, matched=Fraction(7, 8), robust=Fraction(1, 2)):
    """docs/spec.md section 6 written literally, in exact rational arithmetic."""
    N = len(nb)
    pb = [Fraction(c, n) for c, n in zip(cb, nb)]
    pm = [Fraction(c, n) for c, n in zip(cm, nm)]
    finb = [Fraction(f, n) for f, n in zip(fb, nb)]
    finm = [Fraction(f, n) for f, n in zip(fm, nm)]
    R = [j for j in range(N) if fb[j] == nb[j] and cb[j] == 0]
    M = [j for j in range(N) if fm[j] == nm[j] and cm[j] == 0]
    S = [j for j in range(N) if j not in R and j not in M]
    out = {
        "base_pass": sum(pb) / N, "model_pass": sum(pm) / N, "delta": (sum(pm) - sum(pb)) / N,
        "base_fin": sum(finb) / N, "model_fin": sum(finm) / N,
        "reach": (sum(pm[j] for j in R) - sum(pb[j] for j in M)) / N,
    }
    if S:
        fin_b = sum(finb[j] for j in S) / len(S)
        fin_m = sum(finm[j] for j in S) / len(S)
        pass_b = sum(pb[j] for j in S) / len(S)
        pass_m = sum(pm[j] for j in S) / len(S)
        q_b = pass_b / fin_b if fin_b else None
        q_m = pass_m / fin_m if fin_m else None
        # kpass's convention for 0/0: borrow the other model's q (0 when both are 0/0)
        q_b, q_m = (q_b if q_b is not None else (q_m if q_m is not None else 0),
                    q_m if q_m is not None else (q_b if q_b is not None else 0))
        w = Fraction(len(S), N)
        out["finishing_base"] = w * (fin_m - fin_b) * q_m
        out["reliability_base"] = w * fin_b * (q_m - q_b)
        out["finishing_reverse"] = w * (fin_m - fin_b) * q_b
        out["reliability_reverse"] = w * fin_m * (q_m - q_b)
        out["interaction"] = w * (fin_m - fin_b) * (q_m - q_b)
    else:
        for key in ("finishing_base", "reliability_base", "finishing_reverse", "reliability_reverse", "interaction"):
            out[key] = Fraction(0)
    out["finishing_shapley"] = (out["finishing_base"] + out["finishing_reverse"]) / 2
    out["reliability_shapley"] = (out["reliability_base"] + out["reliability_reverse"]) / 2
    out["attribution_spread"] = abs(out["interaction"])
    out["robust_reach"] = Fraction(sum(1 for j in R if cm[j] >= robust * nm[j]), N)
    out["robust_reach_mirror"] = Fraction(sum(1 for j in M if cb[j] >= robust * nb[j]), N)
    out["lone_wins_model"] = Fraction(sum(1 for j in range(N) if cm[j] >= 1 and cb[j] == 0), N)
    out["lone_wins_base"] = Fraction(sum(1 for j in range(N) if cb[j] >= 1 and cm[j] == 0), N)
    T = [j for j in range(N) if fb[j] >= matched * nb[j] and fm[j] >= matched * nm[j]]
    if T:
        qb = sum(pb[j] for j in T) / sum(finb[j] for j in T)
        qm = sum(pm[j] for j in T) / sum(finm[j] for j in T)
        out.update(matched_reliability_base=qb, matched_reliability_model=qm, matched_reliability_delta=qm - qb)
    else:
        out.update(matched_reliability_base=None, matched_reliability_model=None, matched_reliability_delta=None)
    out["sets"] = (len(R), len(M), len(S), len(T))
    return out


_MODES = ("any", "all-finished", "none-finished", "all-correct", "none-correct")


@st.composite
def _model_counts(draw, n_problems, mode):
    n, f, c = [], [], []
    for _ in range(n_problems):
        nj = draw(st.integers(1, 9))  # ragged n
        problem_mode = mode if mode != "any" else draw(st.sampled_from(_MODES))
        if problem_mode == "all-finished":
            fj = nj
            cj = draw(st.integers(0, fj))
        elif problem_mode == "none-finished":
            fj = cj = 0
        elif problem_mode == "all-correct":
            fj = cj = nj
        elif problem_mode == "none-correct":
            fj = draw(st.integers(0, nj))
            cj = 0
        else:
            fj = draw(st.integers(0, nj))
            cj = draw(st.integers(0, fj))
        n.append(nj)
        f.append(fj)
        c.append(cj)
    return n, f, c


@st.composite
def _pairs(draw):
    n_problems = draw(st.integers(2, 12))
    base_mode = draw(st.sampled_from(_MODES))
    model_mode = draw(st.sampled_from(_MODES))
    return draw(_model_counts(n_problems, base_mode)), draw(_model_counts(n_problems, model_mode))


_FIELDS = {name: name for name in ("base_pass", "model_pass", "delta", "base_fin", "model_fin", "reach", "interaction",
                                   "attribution_spread", "robust_reach", "robust_reach_mirror", "lone_wins_model",
                                   "lone_wins_base", "matched_reliability_base", "matched_reliability_model",
                                   "matched_reliability_delta")}


@pytest.mark.slow
@given(_pairs())
def test_identity_and_exact_reference_on_generated_pairs(pair):
    (nb, fb, cb), (nm, fm, cm) = pair
    result = decompose_pass_change(nb, fb, cb, nm, fm, cm, rng=0, n_resamples=40)
    ref = _reference(nb, fb, cb, nm, fm, cm)
    # F + P + reach == delta pass@1 for every attribution, to 1e-12
    for attribution in ATTRIBUTIONS:
        finishing, reliability = result.attributions[attribution]
        assert finishing.estimate + reliability.estimate + result.reach.estimate == pytest.approx(
            result.delta.estimate, abs=1e-12)
        assert finishing.estimate == pytest.approx(float(ref[f"finishing_{attribution}"]), abs=1e-12)
        assert reliability.estimate == pytest.approx(float(ref[f"reliability_{attribution}"]), abs=1e-12)
    assert abs(result.residual) <= 1e-12
    for field in _FIELDS:
        expected = ref[field]
        actual = getattr(result, field).estimate
        if expected is None:
            assert math.isnan(actual)
        else:
            assert actual == pytest.approx(float(expected), abs=1e-12), field
    assert (result.n_reached, result.n_mirror, result.n_rest, result.n_matched) == ref["sets"]
    for attribution in ATTRIBUTIONS:
        f, p = result.attributions[attribution]
        assert f.low <= f.high and p.low <= p.high


@given(_pairs(), st.integers(0, 2**32 - 1))
def test_identity_holds_in_every_bootstrap_replicate(pair, seed):
    (nb, fb, cb), (nm, fm, cm) = pair
    x = _per_problem_matrix(np.array(nb), np.array(fb)[:, None], np.array(cb)[:, None], np.array(nm),
                            np.array(fm)[:, None], np.array(cm)[:, None], Fraction(7, 8), Fraction(1, 2))
    weights = np.random.default_rng(seed).multinomial(len(nb), np.full(len(nb), 1 / len(nb)), size=64).astype(float)
    stats = _statistic(weights @ x, weights.sum(axis=1), 1)[:, 0, :]
    for attribution in ATTRIBUTIONS:
        total = stats[:, _S[f"finishing_{attribution}"]] + stats[:, _S[f"reliability_{attribution}"]] + stats[:, _S["reach"]]
        np.testing.assert_allclose(total, stats[:, _S["delta"]], rtol=0, atol=1e-12)


@pytest.mark.slow
@given(_pairs())
def test_swapping_the_models_negates_and_mirrors(pair):
    (nb, fb, cb), (nm, fm, cm) = pair
    forward = decompose_pass_change(nb, fb, cb, nm, fm, cm, rng=0, n_resamples=20)
    backward = decompose_pass_change(nm, fm, cm, nb, fb, cb, rng=0, n_resamples=20)
    assert backward.delta.estimate == pytest.approx(-forward.delta.estimate, abs=1e-12)
    assert backward.reach.estimate == pytest.approx(-forward.reach.estimate, abs=1e-12)
    # the base attribution of the swapped pair is the negated reverse attribution
    f_swap, p_swap = backward.attributions["base"]
    f_rev, p_rev = forward.attributions["reverse"]
    assert f_swap.estimate == pytest.approx(-f_rev.estimate, abs=1e-12)
    assert p_swap.estimate == pytest.approx(-p_rev.estimate, abs=1e-12)
    assert backward.robust_reach.estimate == pytest.approx(forward.robust_reach_mirror.estimate, abs=1e-12)
    assert backward.lone_wins_model.estimate == pytest.approx(forward.lone_wins_base.estimate, abs=1e-12)


@pytest.mark.slow
@given(_pairs(), st.randoms(use_true_random=False))
def test_permuting_problems_changes_no_estimate(pair, random):
    (nb, fb, cb), (nm, fm, cm) = pair
    order = list(range(len(nb)))
    random.shuffle(order)
    a = decompose_pass_change(nb, fb, cb, nm, fm, cm, rng=0, n_resamples=20)
    b = decompose_pass_change(*([v[i] for i in order] for v in (nb, fb, cb, nm, fm, cm)), rng=0, n_resamples=20)
    for field in ("delta", "finishing", "reliability", "reach", "interaction", "lone_wins_model"):
        assert getattr(b, field).estimate == pytest.approx(getattr(a, field).estimate, abs=1e-12)


# ------------------------------------------------------------------------------- conventions


def test_base_never_finishes_on_S_borrows_q_and_gives_no_reliability_change():
    # base finishes nothing anywhere; model finishes and is right on some problems
    nb = [4, 4, 4]
    fb = cb = [0, 0, 0]
    nm, fm, cm = [4, 4, 4], [4, 2, 0], [2, 1, 0]
    d = decompose_pass_change(nb, fb, cb, nm, fm, cm, rng=0, n_resamples=50)
    assert d.pooled["q_base_borrowed"] and not d.pooled["q_model_borrowed"]
    assert d.pooled["q_base"] == d.pooled["q_model"] == pytest.approx(0.5)
    for attribution in ATTRIBUTIONS:
        f, p = d.attributions[attribution]
        assert p.estimate == 0.0
        assert f.estimate == pytest.approx(d.delta.estimate)
    assert d.delta.estimate == pytest.approx(0.25)


def test_neither_finishes_on_S_gives_zero_terms():
    d = decompose_pass_change([3, 3], [0, 0], [0, 0], [2, 2], [0, 0], [0, 0], rng=0, n_resamples=20)
    assert d.pooled["q_base"] == d.pooled["q_model"] == 0.0
    assert (d.finishing.estimate, d.reliability.estimate, d.reach.estimate, d.delta.estimate) == (0, 0, 0, 0)


def test_empty_S_puts_everything_in_reach():
    # every problem in R (base finished all, none right) or M
    nb, fb, cb = [4, 4, 4], [4, 4, 4], [0, 0, 0]
    nm, fm, cm = [4, 4, 4], [4, 3, 4], [3, 1, 0]
    d = decompose_pass_change(nb, fb, cb, nm, fm, cm, rng=0, n_resamples=20)
    assert d.n_rest == 0 and d.n_reached == 3 and d.n_mirror == 1
    assert math.isnan(d.pooled["fin_base"]) and math.isnan(d.pooled["q_model"])
    assert d.finishing.estimate == d.reliability.estimate == 0.0
    assert d.reach.estimate == pytest.approx(d.delta.estimate) == pytest.approx((0.75 + 0.25) / 3)
    # robust reach: 3/4 >= 1/2 on the first problem only
    assert d.n_robust_reach == 1 and d.robust_reach.estimate == pytest.approx(1 / 3)


def test_matched_reliability_uses_exact_seven_eighths():
    # 7 of 8 finished qualifies, 6 of 8 does not; n = 7: 7*7 = 49 >= 7*... needs f >= 49/8 -> 7
    d = decompose_pass_change([8, 8, 7], [7, 6, 7], [3, 3, 1], [8, 8, 7], [8, 8, 6], [4, 4, 2],
                              rng=0, n_resamples=20)
    assert d.n_matched == 1
    assert d.matched_reliability_base.estimate == pytest.approx((3 / 8) / (7 / 8))
    assert d.matched_reliability_model.estimate == pytest.approx(0.5)
    with pytest.warns(UndefinedDecompositionWarning, match="matched reliability is undefined"):
        d = decompose_pass_change([8, 8], [1, 1], [0, 0], [8, 8], [8, 8], [1, 1], rng=0, n_resamples=20)
    assert math.isnan(d.matched_reliability_delta.estimate)


# ------------------------------------------------------------------------------- the published figures


def _prorl_like_counts():
    """fin@1 0.45 -> 0.99 at an 8k cap, F = +0.203, P = -0.026, total +0.178 (Yang 2026, ProRL v2)."""
    N = 1000
    fb, cb, fm, cm = (np.zeros(N, dtype=int) for _ in range(4))
    fb[:2], fm[:2], cm[:2] = 10, 10, 5      # 2 base-unreached problems the model solves half the time
    S = np.arange(2, N)
    fb[S], fb[S[:488]] = 4, 5
    cb[S], cb[S[:946]] = 1, 2
    fm[S], fm[S[-100:]] = 10, 9
    cm[S], cm[S[:720]] = 3, 4
    n = np.full(N, 10)
    return n, fb, cb, n, fm, cm


def test_published_prorl_figures_are_reproduced():
    d = decompose_pass_change(*_prorl_like_counts(), rng=0, n_resamples=500)
    assert round(d.base_fin.estimate, 2) == 0.45 and round(d.model_fin.estimate, 2) == 0.99
    assert round(d.finishing.estimate, 3) == 0.203
    assert round(d.reliability.estimate, 3) == -0.026
    assert round(d.delta.estimate, 3) == 0.178
    assert d.finishing.low < d.finishing.estimate < d.finishing.high
    assert d.reliability.high < 0  # the reliability loss is resolved by the interval


# ------------------------------------------------------------------------------- intervals, budgets, errors


def test_budget_columns_and_clusters():
    rng = np.random.default_rng(5)
    n_problems, n = 40, 6
    problem = np.repeat([f"q{j}" for j in range(n_problems)], n)
    tokens_b = rng.integers(100, 3000, problem.size)
    tokens_m = rng.integers(100, 2000, problem.size)
    correct_b = rng.random(problem.size) < 0.4
    correct_m = rng.random(problem.size) < 0.5
    budgets = [500, 1000, 2000]
    base = budget_counts(problem, correct_b, budgets, finished=tokens_b < 2500,
                         output_tokens=np.where(tokens_b < 2500, tokens_b, 2500))
    model = budget_counts(problem, correct_m, budgets, finished=np.ones(problem.size, bool), output_tokens=tokens_m)
    clusters = {f"q{j}": f"c{j % 8}" for j in range(n_problems)}
    results = decompose_budget_counts(base, model, clusters=clusters, rng=1, n_resamples=300)
    assert [r.budget for r in results] == budgets
    for r, budget in zip(results, budgets):
        n_b, f_b, c_b = base.at(budget)
        n_m, f_m, c_m = model.at(budget)
        single = decompose_pass_change(n_b, f_b, c_b, n_m, f_m, c_m, rng=1, n_resamples=300,
                                       clusters=[clusters[p] for p in base.problem_ids])
        assert r.finishing.estimate == pytest.approx(single.finishing.estimate, abs=1e-12)
        assert r.n_clusters == 8
        assert r.delta.details["resampling"] == "clusters"
    # BCa from the same resamples
    bca = decompose_budget_counts(base, model, rng=1, n_resamples=300, method="bca")
    assert bca[0].method == "bca" and "acceleration" in bca[0].finishing.details


def test_linear_terms_equal_mean_ci_and_paired_difference_with_the_same_seed():
    # C4a: kpass decompose's linear terms are what kpass report / kpass compare give on the same data
    # and seed: the same defaults (method, 10_000 resamples) and the caller's seed, not a stream
    # re-derived as [seed, 1] (this test replaces one that asserted that re-derived stream)
    from kpass.metrics import (DEFAULT_INTERVAL_METHOD, DEFAULT_N_RESAMPLES, DEFAULT_PAIRED_METHOD, fin_at_k, mean_ci,
                               paired_difference, pass_at_k)

    nb, fb, cb, nm, fm, cm = _prorl_like_counts()
    nb, fb, cb, nm, fm, cm = (v[:300] for v in (nb, fb, cb, nm, fm, cm))
    d = decompose_pass_change(nb, fb, cb, nm, fm, cm, rng=4)
    assert d.n_resamples == DEFAULT_N_RESAMPLES == 10_000
    # the per-problem values in another order: the intervals do not depend on it (C4c)
    order = np.random.default_rng(0).permutation(nb.size)
    assert d.base_pass == mean_ci(pass_at_k(nb, cb, 1)[order], rng=4)
    assert d.model_pass == mean_ci(pass_at_k(nm, cm, 1), rng=4)
    assert d.base_fin == mean_ci(fin_at_k(nb, fb, 1), rng=4)
    assert d.model_fin == mean_ci(fin_at_k(nm, fm, 1)[order], rng=4)
    assert d.base_pass.method == DEFAULT_INTERVAL_METHOD
    delta = paired_difference(pass_at_k(nm, cm, 1), pass_at_k(nb, cb, 1), rng=4)
    assert d.delta == delta and d.delta.method == DEFAULT_PAIRED_METHOD and d.delta.p_value == delta.p_value
    # a named method is passed to both; "decomposition" gives them the decomposition's own bootstrap
    t = decompose_pass_change(nb, fb, cb, nm, fm, cm, rng=4, n_resamples=300, linear_method="t")
    assert t.base_pass == mean_ci(pass_at_k(nb, cb, 1), method="t")
    assert t.delta == paired_difference(pass_at_k(nm, cm, 1), pass_at_k(nb, cb, 1), method="t")
    own = decompose_pass_change(nb, fb, cb, nm, fm, cm, rng=4, n_resamples=300, linear_method="decomposition")
    assert own.delta.method == "bootstrap" and own.delta.estimate == pytest.approx(d.delta.estimate, abs=1e-12)


def test_linear_terms_with_clusters_and_a_generator_pass_the_callers_rng_on():
    from kpass.metrics import mean_ci, paired_difference, pass_at_k

    nb, fb, cb, nm, fm, cm = (v[:120] for v in _prorl_like_counts())
    clusters = np.arange(120) % 12
    d = decompose_pass_change(nb, fb, cb, nm, fm, cm, clusters=clusters, rng=2, n_resamples=400)
    assert d.base_pass == mean_ci(pass_at_k(nb, cb, 1), clusters=clusters, rng=2, n_resamples=400)
    assert d.delta == paired_difference(pass_at_k(nm, cm, 1), pass_at_k(nb, cb, 1), clusters=clusters, rng=2,
                                        n_resamples=400)
    # a Generator is consumed in turn (the decomposition's own bootstrap first), never re-seeded
    generator = np.random.default_rng(9)
    g = decompose_pass_change(nb, fb, cb, nm, fm, cm, rng=generator, n_resamples=200, linear_method="bootstrap")
    assert g.finishing.details["seed"] == "generator" and g.base_pass.details["seed"] == "generator"
    replay = np.random.default_rng(9)
    own = decompose_pass_change(nb, fb, cb, nm, fm, cm, rng=replay, n_resamples=200, linear_method="decomposition")
    assert own.finishing.interval == g.finishing.interval
    assert g.base_pass == mean_ci(pass_at_k(nb, cb, 1), method="bootstrap", n_resamples=200, rng=replay)


def test_fresh_entropy_is_recorded_and_reproduces_the_result():
    # C11: rng=None records the seed it drew (as mean_ci does), in every term
    nb, fb, cb, nm, fm, cm = (v[:60] for v in _prorl_like_counts())
    d = decompose_pass_change(nb, fb, cb, nm, fm, cm, n_resamples=200)
    seed = d.finishing.details["seed"]
    assert isinstance(seed, int) and d.base_pass.details["seed"] == seed == d.delta.details["seed"]
    again = decompose_pass_change(nb, fb, cb, nm, fm, cm, n_resamples=200, rng=seed)
    assert again == d


@pytest.mark.slow
@given(_pairs(), st.randoms(use_true_random=False), st.sampled_from(["bootstrap", "bca"]), st.booleans())
def test_permuting_problems_and_clusters_changes_no_interval(pair, random, method, clustered):
    # C4c: at a fixed seed, every interval (own bootstrap, score, linear terms) is the same for the
    # problems in any order
    (nb, fb, cb), (nm, fm, cm) = pair
    n_problems = len(nb)
    clusters = [j % 3 for j in range(n_problems)] if clustered and n_problems >= 4 else None
    order = list(range(n_problems))
    random.shuffle(order)
    a = decompose_pass_change(nb, fb, cb, nm, fm, cm, clusters=clusters, method=method, rng=5, n_resamples=60)
    b = decompose_pass_change(*([v[i] for i in order] for v in (nb, fb, cb, nm, fm, cm)), method=method, rng=5,
                              n_resamples=60, clusters=None if clusters is None else [clusters[i] for i in order])
    for field in _FIELDS:
        x, y = getattr(a, field), getattr(b, field)
        np.testing.assert_array_equal([x.estimate, x.low, x.high, x.standard_error],
                                      [y.estimate, y.low, y.high, y.standard_error], err_msg=field)


def test_unmatched_problems_are_an_error_unless_intersect():
    base = budget_counts(["a", "b", "c"], [True, False, True], [10], finished=[True] * 3, output_tokens=[5, 5, 5])
    model = budget_counts(["a", "b", "d"], [True, True, True], [10], finished=[True] * 3, output_tokens=[5, 5, 5])
    with pytest.raises(ValueError, match=r"1 only in base \(first: \['c'\]\), 1 only in model \(first: \['d'\]\)"):
        decompose_budget_counts(base, model, rng=0, n_resamples=20)
    results = decompose_budget_counts(base, model, intersect=True, rng=0, n_resamples=20)
    assert results[0].n_problems == 2
    assert results[0].delta.details["unmatched_ids_base"] == ("c",)


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="`base_n_correct` exceeds `base_n_finished`"):
        decompose_pass_change([4, 4], [1, 1], [2, 0], [4, 4], [4, 4], [1, 1])
    with pytest.raises(ValueError, match="`base_n_finished` exceeds `n_samples`"):
        decompose_pass_change([4, 4], [5, 1], [0, 0], [4, 4], [4, 4], [1, 1])
    with pytest.raises(ValueError, match="same problems"):
        decompose_pass_change([4, 4], [1, 1], [0, 0], [4, 4, 4], [4, 4, 4], [1, 1, 1])
    with pytest.raises(ValueError, match="at least 2 problems"):
        decompose_pass_change([4], [1], [0], [4], [4], [1])
    with pytest.raises(ValueError, match="`attribution` must be one of"):
        decompose_pass_change([4, 4], [1, 1], [0, 0], [4, 4], [4, 4], [1, 1], attribution="owen")
    with pytest.raises(ValueError, match="`method` must be one of"):
        decompose_pass_change([4, 4], [1, 1], [0, 0], [4, 4], [4, 4], [1, 1], method="t")
    with pytest.raises(ValueError, match="`model_n_samples` must be >= 1"):
        decompose_pass_change([4, 4], [1, 1], [0, 0], [4, 0], [4, 0], [1, 0])
    with pytest.raises(ValueError, match="`matched_fraction` must be in"):
        decompose_pass_change([4, 4], [1, 1], [0, 0], [4, 4], [4, 4], [1, 1], matched_fraction=1.5)


def test_zero_width_intervals_warn_and_score_intervals_do_not_collapse():
    args = ([4, 4, 4], [2, 1, 3], [1, 0, 1], [4, 4, 4], [4, 3, 4], [2, 1, 1])
    with pytest.warns(DegenerateIntervalWarning, match="reach"):
        boot = decompose_pass_change(*args, rng=0, n_resamples=50, reach_interval="bootstrap")
    assert boot.reach.interval == (0.0, 0.0)
    # no problem in R or M: the score interval still says how large reach could be
    score = decompose_pass_change(*args, rng=0, n_resamples=50)
    assert score.reach.method == "score" and score.reach.low < 0 < score.reach.high


def test_score_interval_of_a_fraction_is_wilsons():
    from kpass.metrics import wilson_interval
    from scipy import stats

    # lone wins of the model on 3 of 40 problems: Wilson's interval with the t quantile (39 df)
    n_problems = 40
    nb = nm = [4] * n_problems
    fb = [4] * n_problems
    cb = [0] * 3 + [1] * (n_problems - 3)
    fm = [4] * n_problems
    cm = [2] * n_problems
    d = decompose_pass_change(nb, fb, cb, nm, fm, cm, rng=0, n_resamples=50)
    assert d.n_lone_wins_model == 3 and d.lone_wins_model.estimate == pytest.approx(3 / 40)
    level = 2 * stats.norm.cdf(stats.t.ppf(0.975, n_problems - 1)) - 1
    low, high = wilson_interval(n_samples=n_problems, n_correct=3, confidence_level=level)
    assert d.lone_wins_model.interval == pytest.approx((float(low), float(high)), abs=1e-12)


# ------------------------------------------------------------------------------- coverage


def _coverage_module():
    path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "budget_coverage.py"
    spec = importlib.util.spec_from_file_location("budget_coverage", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_seeded_coverage_of_f_p_and_reach_at_100_problems():
    """Reduced run of scripts/budget_coverage.py (full: ``python scripts/budget_coverage.py --full``)."""
    study = _coverage_module()
    table = study.coverage_study(n_problems=(100,), n_simulations=400, n_resamples=999,
                                 methods=("bootstrap",), reach_intervals=("score",), seed=20260101)
    for row in table:
        # 400 simulations: the binomial standard error of a 95% coverage is about 1.1 points
        assert 0.915 <= row["coverage"] <= 0.985, row
