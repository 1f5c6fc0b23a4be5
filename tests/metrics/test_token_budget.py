"""Token-budget counts (kpass.metrics._token_budget), docs/spec.md section 6."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kpass.metrics import UndefinedBudgetMetricWarning, budget_counts, budget_curve, fin_at_k, pass_at_k


# ------------------------------------------------------------------------------- reference


def _reference_counts(problem, correct, finished, output_tokens, answer_token, budgets):
    """Literal per-sample, per-budget loop of the definition in the module docstring."""
    ids = sorted(set(problem))
    n = {p: 0 for p in ids}
    f = {(p, b): 0 for p in ids for b in range(len(budgets))}
    c = dict(f)
    for i, p in enumerate(problem):
        n[p] += 1
        for j, budget in enumerate(budgets):
            if budget is None:
                done = answer_token[i] is not None or finished[i] is True
            elif answer_token[i] is not None:
                done = answer_token[i] <= budget
            elif finished[i]:
                done = output_tokens[i] <= budget
            else:
                assert output_tokens[i] >= budget  # decidable
                done = False
            f[p, j] += done
            c[p, j] += done and correct[i]
    return (
        [n[p] for p in ids],
        [[f[p, j] for j in range(len(budgets))] for p in ids],
        [[c[p, j] for j in range(len(budgets))] for p in ids],
    )


@st.composite
def _samples(draw):
    n_rows = draw(st.integers(1, 40))
    problem = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=n_rows, max_size=n_rows))
    correct = draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows))
    kind = draw(st.lists(st.sampled_from(["answer", "finished", "unfinished"]), min_size=n_rows, max_size=n_rows))
    horizon = draw(st.integers(1, 60))  # every unfinished sample ran to at least this many tokens
    finished, output_tokens, answer_token = [], [], []
    for k in kind:
        if k == "answer":
            pos = draw(st.integers(0, 100))
            answer_token.append(pos)
            output_tokens.append(pos + draw(st.integers(0, 20)) if draw(st.booleans()) else None)
            finished.append(True if draw(st.booleans()) else None)
        elif k == "finished":
            answer_token.append(None)
            output_tokens.append(draw(st.integers(0, 100)))
            finished.append(True)
        else:
            answer_token.append(None)
            output_tokens.append(horizon + draw(st.integers(0, 50)))
            finished.append(False)
    budgets = draw(st.lists(st.one_of(st.integers(1, horizon), st.none()), min_size=1, max_size=6))
    return problem, correct, finished, output_tokens, answer_token, budgets


def _obj(values):
    return np.array(values, dtype=object)


@given(_samples())
def test_budget_counts_equal_per_sample_loop(data):
    problem, correct, finished, output_tokens, answer_token, budgets = data
    counts = budget_counts(problem, correct, budgets, finished=_obj(finished),
                           output_tokens=_obj(output_tokens), answer_token=_obj(answer_token))
    n, f, c = _reference_counts(problem, correct, finished, output_tokens, answer_token, budgets)
    assert counts.problem_ids == tuple(sorted(set(problem)))
    assert counts.budgets == tuple(budgets)
    assert counts.n_samples.tolist() == n
    assert counts.n_finished.tolist() == f
    assert counts.n_correct.tolist() == c


@given(_samples())
def test_counts_monotone_in_budget_and_bounded(data):
    problem, correct, finished, output_tokens, answer_token, budgets = data
    finite = sorted({b for b in budgets if b is not None})
    if not finite:
        return
    counts = budget_counts(problem, correct, finite, finished=_obj(finished),
                           output_tokens=_obj(output_tokens), answer_token=_obj(answer_token))
    assert (np.diff(counts.n_finished, axis=1) >= 0).all()
    assert (np.diff(counts.n_correct, axis=1) >= 0).all()
    assert (counts.n_correct <= counts.n_finished).all()
    assert (counts.n_finished <= counts.n_samples[:, None]).all()


def test_docstring_example_and_nullable_encodings():
    counts = budget_counts(["p", "p", "q"], [True, True, False], [10, 20],
                           finished=[True, True, False], output_tokens=[8, 15, 30])
    assert counts.n_finished.tolist() == [[1, 2], [0, 0]]
    assert counts.n_correct.tolist() == [[1, 2], [0, 0]]
    # the same answer positions given as answer_token, with NaN / masked / None for unknown
    for encoding in (np.array([8.0, 15.0, np.nan]), np.ma.masked_array([8, 15, 0], mask=[0, 0, 1]),
                     _obj([8, 15, None])):
        again = budget_counts(["p", "p", "q"], [True, True, False], [10, 20],
                              finished=_obj([None, None, False]), output_tokens=_obj([None, None, 30]),
                              answer_token=encoding)
        assert again.n_finished.tolist() == [[1, 2], [0, 0]]


def test_answer_token_is_used_before_output_tokens():
    # a finished sample whose answer was complete at token 40 of 100: finished within 50
    counts = budget_counts([0], [True], [39, 40, 50, 100], finished=[True], output_tokens=[100], answer_token=[40])
    assert counts.n_finished.tolist() == [[0, 1, 1, 1]]
    # without answer_token the whole generation counts (conservative)
    counts = budget_counts([0], [True], [39, 40, 50, 100], finished=[True], output_tokens=[100])
    assert counts.n_finished.tolist() == [[0, 0, 0, 1]]


def test_budget_order_duplicates_and_as_run_column():
    counts = budget_counts([1, 1, 2], [True, False, True], [50, None, 10, 50],
                           finished=[True, False, True], output_tokens=[30, 64, 5])
    assert counts.budgets == (50, None, 10, 50)
    assert counts.problem_ids == (1, 2)
    assert counts.n_finished.tolist() == [[1, 1, 0, 1], [1, 1, 1, 1]]
    assert counts.n_correct.tolist() == [[1, 1, 0, 1], [1, 1, 1, 1]]
    n, f, c = counts.at(10)
    assert (n.tolist(), f.tolist(), c.tolist()) == ([2, 1], [0, 1], [0, 1])
    with pytest.raises(KeyError, match="budget 7 was not counted"):
        counts.at(7)


def test_native_max_tokens_run_is_read_as_is():
    # a run made with max_tokens = 8192: stop reason "length" -> finished False, 8192 tokens
    finished = [True, False, True, False]
    tokens = [1200, 8192, 8000, 8192]
    counts = budget_counts(["a", "a", "b", "b"], [True, True, False, True], [8192, None],
                           finished=finished, output_tokens=tokens)
    # at its own budget the recorded flags are the answer; a truncated "correct" never counts
    assert counts.n_finished.tolist() == [[1, 1], [1, 1]]
    assert counts.n_correct.tolist() == [[1, 1], [0, 0]]
    with pytest.raises(ValueError, match=r"budget 8193 is beyond what was generated .*8192 tokens.*'a', 'b'"):
        budget_counts(["a", "a", "b", "b"], [True, True, False, True], [4096, 8193],
                      finished=finished, output_tokens=tokens)


def test_beyond_generated_names_budgets_and_problems():
    with pytest.raises(ValueError) as info:
        budget_counts(["x", "y", "z"], [False, False, True], [100, 200, 300],
                      finished=[False, False, True], output_tokens=[150, 250, 10])
    message = str(info.value)
    assert "[200, 300]" in message and "150 tokens" in message
    assert "'x'" in message and "'y'" in message and "'z'" not in message
    # a not-finished sample without any token count cannot be placed at any budget
    with pytest.raises(ValueError, match="no budget"):
        budget_counts(["x"], [False], [1], finished=[False])
    # ... but can be read as run
    assert budget_counts(["x"], [False], [None], finished=[False]).n_finished.tolist() == [[0]]


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="`answer_token` is given .* `finished` is false .*'q'"):
        budget_counts(["p", "q"], [True, True], [10], finished=[True, False], answer_token=_obj([None, 3]),
                      output_tokens=[4, 20])
    with pytest.raises(ValueError, match="`answer_token` exceeds `output_tokens`"):
        budget_counts(["p"], [True], [10], answer_token=[9], output_tokens=[8])
    with pytest.raises(ValueError, match="`finished` is unknown and no `answer_token`"):
        budget_counts(["p"], [True], [10], output_tokens=[8])
    with pytest.raises(ValueError, match="neither `answer_token` nor `output_tokens`"):
        budget_counts(["p"], [True], [10], finished=[True])
    with pytest.raises(ValueError, match="budget None .* needs `finished`"):
        budget_counts(["p"], [True], [None])
    with pytest.raises(ValueError, match="`budgets` must be >= 1"):
        budget_counts(["p"], [True], [0], finished=[True], output_tokens=[1])
    with pytest.raises(TypeError, match="`budgets` must hold integers"):
        budget_counts(["p"], [True], ["4k"], finished=[True], output_tokens=[1])
    with pytest.raises(ValueError, match="`budgets` must not be empty"):
        budget_counts(["p"], [True], [], finished=[True], output_tokens=[1])
    with pytest.raises(ValueError, match="`output_tokens` must hold non-negative whole"):
        budget_counts(["p"], [True], [10], finished=[True], output_tokens=[2.5])
    with pytest.raises(ValueError, match="`finished` must hold booleans"):
        budget_counts(["p"], [True], [10], finished=[2], output_tokens=[1])
    with pytest.raises(ValueError, match="`problem` has 2 entries but `correct` has 1"):
        budget_counts(["p", "q"], [True], [10], finished=[True], output_tokens=[1])
    with pytest.raises(ValueError, match="`correct` must be known"):
        budget_counts(["p"], _obj([None]), [10], finished=[True], output_tokens=[1])


def test_large_input_is_vectorized_and_exact():
    rng = np.random.default_rng(0)
    n_rows = 200_000
    problem = rng.integers(0, 5000, n_rows)
    position = rng.integers(1, 20_000, n_rows)
    finished = position < 16_384
    correct = rng.random(n_rows) < 0.5
    budgets = [1024, 2048, 4096, 8192, 16_384]
    counts = budget_counts(problem, correct, budgets, finished=finished,
                           output_tokens=np.where(finished, position, 16_384))
    expected = np.stack([np.bincount(problem, weights=finished & (position <= b), minlength=5000) for b in budgets], 1)
    assert np.array_equal(counts.n_finished, expected)


# ------------------------------------------------------------------------------- the curve


def _curve_inputs(label=None):
    """Arguments of budget_counts for 60 problems x 8 samples (``label(j)``: id of problem j)."""
    rng = np.random.default_rng(1)
    n_problems, n = 60, 8
    problem = np.repeat(np.arange(n_problems), n)
    difficulty = rng.uniform(0.2, 1.0, n_problems)
    position = rng.integers(100, 4000, problem.size)
    finished = position <= 3000
    correct = rng.random(problem.size) < difficulty[problem]
    if label is not None:
        problem = np.array([label(j) for j in problem])
    return (problem, correct, [1000, 2000, 3000]), {"finished": finished, "output_tokens": np.where(finished, position, 3000)}


def _curve_counts():
    args, kwargs = _curve_inputs()
    return budget_counts(*args, **kwargs)


def test_budget_curve_matches_core_estimators():
    counts = _curve_counts()
    curve = budget_curve(counts, k=[1, 4], rng=3, n_resamples=500)
    assert [(p.budget, p.k) for p in curve] == [(b, k) for b in (1000, 2000, 3000) for k in (1, 4)]
    for point in curve:
        n, f, c = counts.at(point.budget)
        fin = fin_at_k(n, f, point.k).mean()
        pas = pass_at_k(n, c, point.k).mean()
        assert point.fin_at_k.estimate == pytest.approx(fin, abs=1e-12)
        assert point.pass_at_k.estimate == pytest.approx(pas, abs=1e-12)
        assert point.pass_given_fin.estimate == pytest.approx(pas / fin, abs=1e-12)
        # pass@k(B) = fin@k(B) * pass@k(B | fin), exactly by definition
        assert point.fin_at_k.estimate * point.pass_given_fin.estimate == pytest.approx(point.pass_at_k.estimate, abs=1e-12)
        for result in (point.fin_at_k, point.pass_at_k, point.pass_given_fin):
            assert result.low <= result.estimate <= result.high
    # reproducible with a seed
    again = budget_curve(counts, k=[1, 4], rng=3, n_resamples=500)
    assert [p.pass_given_fin.low for p in again] == [p.pass_given_fin.low for p in curve]


@pytest.mark.filterwarnings("ignore::kpass.metrics.DegenerateIntervalWarning")
def test_budget_curve_undefined_ratio_warns_not_silent():
    counts = budget_counts(["a", "b"], [False, False], [5, 50], finished=[True, True], output_tokens=[10, 20])
    with pytest.warns(UndefinedBudgetMetricWarning, match="no sample finished within budget 5"):
        curve = budget_curve(counts, rng=0, n_resamples=200)
    assert curve[0].fin_at_k.estimate == 0.0
    assert math.isnan(curve[0].pass_given_fin.estimate)
    assert curve[1].pass_given_fin.estimate == 0.0


def test_budget_curve_equals_mean_ci_of_the_report_with_the_same_seed():
    # review C4b: kpass budget gave pass@1 [0.1959, 0.4738] where kpass report gave [0.1972, 0.4768]
    # on the same data and seed (2,000 resamples, and problems in sorted-id order instead of the
    # report's first-appearance order); now both are mean_ci(values, rng=seed) with 10,000 resamples
    from kpass.metrics import DEFAULT_N_RESAMPLES, mean_ci

    rng = np.random.default_rng(31)
    problem = rng.permutation(np.repeat([f"q{j:02d}" for j in range(40)], 6))  # first appearance != sorted
    finished = rng.random(problem.size) < 0.7
    correct = finished & (rng.random(problem.size) < 0.6)
    counts = budget_counts(problem, correct, [None], finished=finished)
    point = budget_curve(counts, rng=0)[0]
    assert point.pass_at_k.details["n_resamples"] == DEFAULT_N_RESAMPLES
    first_seen = list(dict.fromkeys(problem.tolist()))  # the report's order
    c = np.array([correct[problem == p].sum() for p in first_seen])
    f = np.array([finished[problem == p].sum() for p in first_seen])
    n = np.full(40, 6)
    assert point.pass_at_k == mean_ci(pass_at_k(n, c, 1), rng=0)
    assert point.fin_at_k == mean_ci(fin_at_k(n, f, 1), rng=0)
    clusters = np.arange(40) % 10
    clustered = budget_curve(counts, clusters=clusters, rng=0, n_resamples=500)[0]
    by_id = dict(zip(counts.problem_ids, clusters))
    assert clustered.pass_at_k == mean_ci(pass_at_k(n, c, 1), clusters=[by_id[p] for p in first_seen], rng=0,
                                          n_resamples=500)


def test_budget_curve_ratio_does_not_depend_on_problem_order_and_records_its_seed():
    counts = _curve_counts()
    args, kwargs = _curve_inputs(lambda j: f"z{99 - j:03d}")  # the same problems, ids sorting in another order
    relabelled = budget_counts(*args, **kwargs)
    a = budget_curve(counts, k=[1, 2], rng=5, n_resamples=400, ratio_method="bca")
    b = budget_curve(relabelled, k=[1, 2], rng=5, n_resamples=400, ratio_method="bca")
    assert counts.problem_ids != relabelled.problem_ids
    for x, y in zip(a, b):
        for name in ("fin_at_k", "pass_at_k", "pass_given_fin"):
            assert getattr(x, name) == getattr(y, name), name
    fresh = budget_curve(counts, n_resamples=200)
    seed = fresh[0].pass_given_fin.details["seed"]
    assert isinstance(seed, int) and fresh[0].pass_at_k.details["seed"] == seed
    assert budget_curve(counts, n_resamples=200, rng=seed) == fresh
