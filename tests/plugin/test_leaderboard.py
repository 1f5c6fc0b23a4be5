"""Tests of kpass leaderboards: Holm adjustment, bootstrap rank intervals, the leaderboard built
from a sample table, its Markdown/CSV/JSON outputs, ``--extend`` and the ``kpass leaderboard``
command.

Rank intervals and Holm-adjusted p-values are checked against direct computations written as
literal loops (over resamples, over models, over hypotheses).
"""

from __future__ import annotations

import csv
import io
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kpass.data.leaderboard_tables import extend_table, read_leaderboard_table
from kpass.render.leaderboard_html import render_html
from kpass.render.leaderboard_text import extend_leaderboard, render_csv, render_json, render_markdown
from kpass.metrics import (  # the rank and Holm statistics live in the metric core (issue #16)
    TIE_TOLERANCE,
    bootstrap_weights,
    canonical_problem_keys,
    holm_adjust,
    paired_difference,
    rank_intervals,
)
from kpass.reports.leaderboard import build_leaderboard

# --------------------------------------------------------------------------------------------
# Holm
# --------------------------------------------------------------------------------------------


def holm_by_definition(p_values):
    """Holm (1979) step-down, written out: reject in order while p_(i) <= alpha / (m - i + 1);
    the adjusted p-value of H_(i) is the smallest alpha at which it is rejected."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for position, index in enumerate(order):
        running = max(running, (m - position) * p_values[index])
        adjusted[index] = min(1.0, running)
    return adjusted


def test_holm_textbook_example():
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4*0.005, 3*0.01, max(3*0.01, 2*0.03), max(.., 1*0.04)
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm_adjust([]).shape == (0,)
    assert holm_adjust([0.2]).tolist() == [0.2]
    assert holm_adjust([0.6, 0.7]).tolist() == [1.0, 1.0]


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_holm_equals_definition(p_values):
    adjusted = holm_adjust(p_values)
    assert adjusted.tolist() == pytest.approx(holm_by_definition(p_values), abs=1e-15)
    assert np.all(adjusted >= np.asarray(p_values)) and np.all(adjusted <= 1.0)


def test_holm_equals_definition_with_ties_and_rejections():
    rng = np.random.default_rng(3)
    for size in (2, 5, 17):
        p = np.round(rng.uniform(0, 0.2, size), 3)      # rounding makes ties
        adjusted = holm_adjust(p)
        assert adjusted.tolist() == pytest.approx(holm_by_definition(p.tolist()), abs=1e-15)
        # equal p-values get equal adjusted values
        for i in range(size):
            for j in range(size):
                if p[i] == p[j]:
                    assert adjusted[i] == adjusted[j]


def test_holm_adjust_iv():
    with pytest.raises(ValueError, match="one-dimensional"):
        holm_adjust([[0.1, 0.2]])
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\].*positions \[1\]"):
        holm_adjust([0.1, 1.5])
    with pytest.raises(ValueError, match="must lie in"):
        holm_adjust([math.nan])


# --------------------------------------------------------------------------------------------
# Rank intervals
# --------------------------------------------------------------------------------------------

CHUNK = 4096


def ranks_by_loop(values, *, clusters=None, n_resamples, seed, confidence_level=0.95,
                  higher_is_better=True, chunk=CHUNK):
    """Direct computation: a literal loop over the resamples of bootstrap_weights (the same draws
    the leaderboard uses), over models, and over competitors."""
    values = [list(map(float, row)) for row in values]
    n_models, n_problems = len(values), len(values[0])
    sign = 1.0 if higher_is_better else -1.0
    scale = max(abs(v) for row in values for v in row)
    tolerance = TIE_TOLERANCE * scale
    counts = [[0] * n_models for _ in range(n_models)]
    chunking = {} if chunk is None else {"max_chunk_elements": chunk}
    # the leaderboard draws in the canonical problem order of the values (order_by)
    for matrix in bootstrap_weights(n_problems, clusters=clusters, n_resamples=n_resamples,
                                    rng=seed, order_by=canonical_problem_keys(np.asarray(values, dtype=float)), **chunking):
        for weights in matrix.tolist():
            total = sum(weights)
            means = [sign * sum(w * v for w, v in zip(weights, row)) / total for row in values]
            for m in range(n_models):
                rank = 1 + sum(1 for other in range(n_models) if means[other] - means[m] > tolerance)
                counts[m][rank - 1] += 1
    tail = (1 - Fraction(str(confidence_level))) / 2
    lows, highs = [], []
    for m in range(n_models):
        cumulative = np.cumsum(counts[m])
        lows.append(next(r + 1 for r in range(n_models) if cumulative[r] > tail * n_resamples))
        highs.append(next(r + 1 for r in range(n_models)
                          if cumulative[r] >= (1 - tail) * n_resamples))
    return counts, lows, highs


def small_case(seed, n_models=4, n_problems=12, n_samples=8):
    rng = np.random.default_rng(seed)
    ability = rng.uniform(0.2, 0.8, n_models)
    difficulty = rng.normal(0, 1.0, n_problems)
    p = 1 / (1 + np.exp(-(np.log(ability / (1 - ability))[:, None] - difficulty[None, :])))
    return rng.binomial(n_samples, p) / n_samples


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rank_intervals_equal_literal_loop(seed):
    values = small_case(seed)
    result = rank_intervals(values, n_resamples=300, rng=seed, max_chunk_elements=CHUNK)
    counts, lows, highs = ranks_by_loop(values, n_resamples=300, seed=seed)
    assert result.rank_counts.tolist() == counts
    assert result.low.tolist() == lows and result.high.tolist() == highs
    # the interval holds at least 95% of the resamples of each model
    for m in range(values.shape[0]):
        inside = sum(counts[m][r - 1] for r in range(lows[m], highs[m] + 1))
        assert inside >= 0.95 * 300
    # observed ranks: 1 + number of models with a strictly larger mean
    means = values.mean(axis=1)
    assert result.rank.tolist() == [1 + int(np.sum(means > mean)) for mean in means]


def test_rank_intervals_with_clusters_and_lower_is_better_equal_literal_loop():
    values = small_case(7, n_models=5, n_problems=15)
    clusters = np.repeat(["a", "b", "c", "d", "e"], 3)
    for higher in (True, False):
        result = rank_intervals(values, clusters=clusters, n_resamples=200, rng=11,
                                higher_is_better=higher, confidence_level=0.9,
                                max_chunk_elements=CHUNK)
        counts, lows, highs = ranks_by_loop(values, clusters=clusters, n_resamples=200, seed=11,
                                            higher_is_better=higher, confidence_level=0.9)
        assert result.rank_counts.tolist() == counts
        assert (result.low.tolist(), result.high.tolist()) == (lows, highs)
        assert result.n_clusters == 5


def test_identical_models_share_every_rank():
    values = small_case(5, n_models=4)
    values = np.vstack([values, values[1], values[1]])      # models 4 and 5 copy model 1
    result = rank_intervals(values, n_resamples=500, rng=0)
    for copy in (4, 5):
        assert result.rank_counts[copy].tolist() == result.rank_counts[1].tolist()
        assert result.rank[copy] == result.rank[1]
        assert (result.low[copy], result.high[copy]) == (result.low[1], result.high[1])
    # in every resample the three copies share one rank: each rank they hold is held by all three
    # and the next two ranks are skipped (competition ranking)
    assert result.rank_counts[1].sum() == 500
    # the ranks of all models in one resample sum to at most 1+2+...+M (ties share the best rank)
    assert result.rank.sum() < sum(range(1, values.shape[0] + 1))


def test_identical_models_tie_despite_summation_order():
    # floating-point sums of the same numbers in a different order can differ in the last bit;
    # bitwise identical rows must still tie exactly, whatever BLAS does
    rng = np.random.default_rng(1)
    row = rng.uniform(0, 1, 997) / 3.0
    values = np.vstack([row, row, row[::-1][::-1], rng.uniform(0, 1, 997)])
    result = rank_intervals(values, n_resamples=300, rng=2)
    assert np.array_equal(result.rank_counts[0], result.rank_counts[1])
    assert np.array_equal(result.rank_counts[0], result.rank_counts[2])


def test_model_better_everywhere_ranks_strictly_first():
    values = small_case(9, n_models=4) * 0.5                   # everyone below 0.5
    best = values.max(axis=0) + 0.4                            # better on every problem, wide margin
    values = np.vstack([values, best])
    result = rank_intervals(values, n_resamples=400, rng=4)
    assert result.rank[4] == 1 and result.low[4] == 1 and result.high[4] == 1
    assert result.rank_counts[4, 0] == 400                      # first in every resample
    assert np.all(result.rank_counts[:4, 0] == 0)               # nobody else ever ties for first
    assert np.all(result.low[:4] >= 2)
    assert result.probability_first.tolist() == [0, 0, 0, 0, 1]


def test_rank_intervals_reproducible_and_all_equal_models():
    values = small_case(2)
    first = rank_intervals(values, n_resamples=100, rng=123)
    second = rank_intervals(values, n_resamples=100, rng=123)
    assert np.array_equal(first.rank_counts, second.rank_counts)
    same = rank_intervals(np.zeros((3, 5)), n_resamples=50, rng=0)
    assert same.low.tolist() == [1, 1, 1] and same.high.tolist() == [1, 1, 1]


def test_rank_intervals_iv():
    with pytest.raises(ValueError, match="shape"):
        rank_intervals([1.0, 2.0], rng=0)
    with pytest.raises(ValueError, match="finite.*\\(1, 2\\)"):
        rank_intervals([[0.0, 0.0, 0.0], [0.0, 0.0, math.nan]], rng=0)
    with pytest.raises(ValueError, match="two problems"):
        rank_intervals([[0.0], [1.0]], rng=0)
    with pytest.raises(ValueError, match="`models` has 1 names for 2 rows"):
        rank_intervals([[0.0, 1.0], [1.0, 0.0]], models=["a"], rng=0)
    with pytest.raises(ValueError, match="`clusters` must have shape \\(2,\\)"):
        rank_intervals([[0.0, 1.0]], clusters=["a"], rng=0)
    with pytest.raises(ValueError, match="`n_resamples`"):
        rank_intervals([[0.0, 1.0]], n_resamples=0, rng=0)
    with pytest.raises(ValueError, match="`confidence_level`"):
        rank_intervals([[0.0, 1.0]], confidence_level=1.0, rng=0)


@settings(max_examples=40)
@given(st.integers(1, 5).flatmap(lambda m: st.lists(
    st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=4, max_size=4),
    min_size=m, max_size=m)), st.permutations(range(5)))
def test_rank_intervals_properties(rows, permutation):
    values = np.array(rows)
    result = rank_intervals(values, n_resamples=60, rng=5)
    assert np.all(result.rank_counts.sum(axis=1) == 60)
    assert np.all((1 <= result.low) & (result.low <= result.high) & (result.high <= len(rows)))
    # identical rows share every rank
    for i in range(len(rows)):
        for j in range(len(rows)):
            if rows[i] == rows[j]:
                assert np.array_equal(result.rank_counts[i], result.rank_counts[j])
    # the same resamples with the models listed in another order: the same ranks, permuted
    order = [p for p in permutation if p < len(rows)]
    permuted = rank_intervals(values[order], n_resamples=60, rng=5)
    assert np.array_equal(permuted.rank_counts, result.rank_counts[order])


# --------------------------------------------------------------------------------------------
# Leaderboards built from sample tables
# --------------------------------------------------------------------------------------------


def make_records(abilities, *, n_problems=24, n_samples=8, seed=0, task="math", tokens=False,
                 clusters=4):
    """Simulated samples: model m solves problem j with probability logistic(a_m - d_j)."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.0, 1.2, n_problems)
    records = []
    for model, ability in abilities.items():
        p = 1 / (1 + np.exp(-(ability - difficulty)))
        for j in range(n_problems):
            for s in range(n_samples):
                record = {"model": model, "task": task, "problem_id": f"q{j:03d}", "sample_index": s,
                          "correct": bool(rng.random() < p[j]), "cluster": f"c{j % clusters}"}
                if tokens:
                    finished = bool(rng.random() < 0.9)
                    length = int(rng.integers(100, 2000))
                    record.update(finished=finished, output_tokens=length if finished else 2048,
                                  answer_token=length if finished else None,
                                  correct=record["correct"] and finished)
                records.append(record)
    return records


def copy_model(records, source, name):
    return [dict(r, model=name) for r in records if r["model"] == source]


def sample_table(records):
    from kpass import SampleTable

    return SampleTable.from_records(records, source="test.jsonl")


ABILITIES = {"alpha": 1.0, "beta": 0.4, "gamma": 0.3, "delta": -0.6}


@pytest.fixture(scope="module")
def four_models():
    records = make_records(ABILITIES)
    return sample_table(records)


def test_cells_equal_compute_report(four_models):
    from kpass import compute_report

    board = build_leaderboard(four_models, "pass@1,4", n_resamples=400, curves=False, rng=0)
    report = compute_report(four_models, "pass@1,4", rng=0, n_resamples=400)
    for entry in board.data["models"]:
        for metric in ("pass@1", "pass@4"):
            row = report.row(metric, model=entry["model"])
            cell = entry["metrics"][metric]
            assert (cell["estimate"], cell["low"], cell["high"], cell["standard_error"]) == (
                row.estimate, row.low, row.high, row.standard_error)
            assert cell["n_problems"] == row.n_problems == 24
    # sorted by the first metric, best first
    estimates = [e["metrics"]["pass@1"]["estimate"] for e in board.data["models"]]
    assert estimates == sorted(estimates, reverse=True)


def leaderboard_matrix(board, column, task="math"):
    """Per-problem values of the models of a column, aligned by problem id (direct computation)."""
    result = board.ranks[column]
    rows = []
    for model in result.models:
        ids, values = board.report.per_problem[((("model", model), ("task", task)), column.split("/")[-1])]
        rows.append([v for _, v in sorted(zip(ids, values.tolist()))])
    return np.array(rows)


@pytest.mark.parametrize("cluster_by", [None, "cluster"])
def test_leaderboard_rank_intervals_equal_literal_loop(four_models, cluster_by):
    board = build_leaderboard(four_models, "pass@1", cluster_by=cluster_by, n_resamples=200,
                              rng=3, curves=False)
    result = board.ranks["pass@1"]
    clusters = None if cluster_by is None else [f"c{j % 4}" for j in range(24)]
    counts, lows, highs = ranks_by_loop(leaderboard_matrix(board, "pass@1"), clusters=clusters,
                                        n_resamples=200, seed=3, chunk=None)
    assert result.rank_counts.tolist() == counts
    assert (result.low.tolist(), result.high.tolist()) == (lows, highs)
    # issue #16: the ranks shown are the bootstrap's, widened where a paired interval holds 0
    from kpass.metrics import reconcile_rank_intervals

    shown, _ = reconcile_rank_intervals(result, [(c["model_a"], c["model_b"]) for c in board.data["comparisons"]
                                                 if c["low"] <= 0.0 <= c["high"]])
    for entry in board.data["models"]:
        i = result.models.index(entry["model"])
        assert entry["ranks"]["pass@1"] == {"rank": int(result.rank[i]), "low": int(shown.low[i]),
                                            "high": int(shown.high[i]), "of": 4,
                                            "probability_first": counts[i][0] / 200}
        assert shown.low[i] <= lows[i] and highs[i] <= shown.high[i]


def test_leaderboard_identical_models_share_every_rank():
    records = make_records(ABILITIES, seed=1)
    records += copy_model(records, "beta", "beta-copy")
    board = build_leaderboard(sample_table(records), "pass@1,4", n_resamples=300, curves=False, rng=0)
    for column in ("pass@1", "pass@4"):
        result = board.ranks[column]
        a, b = result.models.index("beta"), result.models.index("beta-copy")
        assert np.array_equal(result.rank_counts[a], result.rank_counts[b])
        ranks = {e["model"]: e["ranks"][column] for e in board.data["models"]}
        assert ranks["beta"] == ranks["beta-copy"]
    pair = next(c for c in board.data["comparisons"]
                if {c["model_a"], c["model_b"]} == {"beta", "beta-copy"})
    assert pair["difference"] == 0.0 and pair["p_value"] == 1.0
    assert "every per-problem difference is identical" in pair["note"]


def test_leaderboard_model_better_everywhere_ranks_strictly_first():
    records = make_records(ABILITIES, seed=2)
    for r in records:                          # every model below 3/8 on every problem ...
        r["correct"] = r["correct"] and r["sample_index"] < 3
    records += [dict(r, model="champion", correct=True)     # ... and one always right
                for r in records if r["model"] == "alpha"]
    board = build_leaderboard(sample_table(records), "pass@1", n_resamples=500, curves=False, rng=0)
    first = board.data["models"][0]
    assert first["model"] == "champion"
    assert first["ranks"]["pass@1"] == {"rank": 1, "low": 1, "high": 1, "of": 5,
                                        "probability_first": 1.0}
    for entry in board.data["models"][1:]:
        assert entry["ranks"]["pass@1"]["low"] >= 2
    champion_pairs = [c for c in board.data["comparisons"] if c["model_a"] == "champion"]
    assert len(champion_pairs) == 4 and all(c["low"] > 0.5 for c in champion_pairs)


@pytest.mark.parametrize("baseline, pairs", [(None, "all"), (None, "adjacent"), ("gamma", "all")])
def test_comparisons_equal_paired_difference_with_holm(four_models, baseline, pairs):
    board = build_leaderboard(four_models, "pass@1", baseline=baseline, pairs=pairs,
                              n_resamples=300, rng=9, curves=False)
    order = [e["model"] for e in board.data["models"]]
    if baseline:
        expected_pairs = [(m, baseline) for m in order if m != baseline]
    elif pairs == "adjacent":
        expected_pairs = list(zip(order[:-1], order[1:]))
    else:
        expected_pairs = [(a, b) for i, a in enumerate(order) for b in order[i + 1:]]
    comparisons = board.data["comparisons"]
    assert [(c["model_a"], c["model_b"]) for c in comparisons] == expected_pairs
    matrix = leaderboard_matrix(board, "pass@1")
    models = board.ranks["pass@1"].models
    raw = []
    for c in comparisons:
        direct = paired_difference(matrix[models.index(c["model_a"])], matrix[models.index(c["model_b"])],
                                   n_resamples=300, rng=9)
        assert (c["difference"], c["low"], c["high"], c["p_value"]) == pytest.approx(
            (direct.estimate, direct.low, direct.high, direct.p_value), abs=1e-12)
        raw.append(direct.p_value)
    assert [c["p_value_holm"] for c in comparisons] == pytest.approx(holm_by_definition(raw), abs=1e-12)
    assert board.data["comparison_family"]["size"] == len(expected_pairs)


def test_problems_missing_for_a_model_are_reported_and_left_out_of_ranks():
    records = make_records(ABILITIES, seed=4)
    records = [r for r in records if not (r["model"] == "delta" and r["problem_id"] in ("q000", "q001"))]
    records = [r for r in records if not (r["model"] == "alpha" and r["problem_id"] == "q005"
                                          and r["sample_index"] >= 2)]  # 2 samples: no pass@4
    board = build_leaderboard(sample_table(records), "pass@1,4", n_resamples=100, curves=False, rng=0)
    data = board.data
    columns = {c["key"]: c for c in data["columns"]}
    assert columns["pass@1"]["rank_problems"] == 22 and columns["pass@1"]["rank_dropped_problems"] == 2
    assert columns["pass@4"]["rank_problems"] == 21 and columns["pass@4"]["rank_dropped_problems"] == 3
    dropped = [note for note in data["notes"] if "q000, q001" in note["text"]]
    assert [(note["kind"], note["rows"], note["doc"]) for note in dropped] == [
        ("ranks", ["pass@1"], "docs/notes.md#ranks"), ("ranks", ["pass@4"], "docs/notes.md#ranks")]
    exclusion, = [e for e in data["exclusions"] if e["column"] == "pass@4"]
    assert exclusion["model"] == "alpha" and exclusion["problem_ids"] == ["q005"]
    markdown = render_markdown(data)
    assert "alpha / pass@4: 1 problem(s) excluded (2 samples, pass@4 needs 4)" in markdown
    assert board.ranks["pass@4"].n_problems == 21


def test_several_tasks_give_one_column_per_task_and_metric():
    records = make_records(ABILITIES, seed=5) + make_records(ABILITIES, seed=6, task="code", n_problems=10)
    board = build_leaderboard(sample_table(records), "pass@1", sort="code/pass@1", n_resamples=100,
                              curves=False, rng=0)
    assert [c["key"] for c in board.data["columns"]] == ["math/pass@1", "code/pass@1"]
    assert board.data["sort"] == "code/pass@1"
    assert board.ranks["code/pass@1"].n_problems == 10
    with pytest.raises(ValueError, match="names several leaderboard column"):
        build_leaderboard(sample_table(records), "pass@1", sort="pass@1", curves=False, rng=0)
    with pytest.raises(ValueError, match="names no leaderboard column.*columns: math/pass@1"):
        build_leaderboard(sample_table(records), "pass@1", sort="pass@8", curves=False, rng=0)


def test_curves_and_budget_curves():
    records = make_records({"alpha": 0.5, "beta": -0.5}, tokens=True, n_problems=12, seed=8)
    board = build_leaderboard(sample_table(records), "pass@1", n_resamples=200, rng=0)
    curves = board.data["curves"]["pass@k"]
    assert [p["k"] for p in curves["alpha"]] == [1, 2, 4, 8]
    from kpass import compute_report

    report = compute_report(sample_table(records), "pass@8", rng=0, n_resamples=200)
    assert curves["beta"][-1]["estimate"] == report.row("pass@8", model="beta").estimate
    budget = board.data["budget_curves"]
    assert set(budget) == {"pass@1", "fin@1"}
    points = budget["pass@1"]["alpha"]
    assert [p["budget"] for p in points][-1] == 2048
    assert all(b < a for a, b in zip([p["budget"] for p in points][1:], [p["budget"] for p in points]))
    # at the largest budget every finished sample counts: pass@1(B) equals pass@1 as run
    assert points[-1]["estimate"] == pytest.approx(
        board.data["models"][[e["model"] for e in board.data["models"]].index("alpha")]
        ["metrics"]["pass@1"]["estimate"])
    estimates = [p["estimate"] for p in points]
    assert estimates == sorted(estimates)       # pass@1(B) cannot fall as the budget grows


def test_outputs_agree(four_models):
    board = build_leaderboard(four_models, "pass@1,4", n_resamples=100, curves=False, rng=0)
    data = json.loads(render_json(board.data))
    assert data == board.as_dict()
    rows = list(csv.DictReader(io.StringIO(render_csv(board.data))))
    assert [r["model"] for r in rows] == [e["model"] for e in data["models"]]
    for row, entry in zip(rows, data["models"]):
        assert float(row["pass@4"]) == entry["metrics"]["pass@4"]["estimate"]
        assert float(row["pass@1 high"]) == entry["metrics"]["pass@1"]["high"]
        assert int(row["pass@1 rank low"]) == entry["ranks"]["pass@1"]["low"]
    markdown = render_markdown(board.data)
    first = data["models"][0]
    cell = first["metrics"]["pass@1"]
    rank = first["ranks"]["pass@1"]
    rank_text = str(rank["low"]) if rank["low"] == rank["high"] else f"{rank['low']}-{rank['high']}"
    assert (f"| {rank_text} | {first['model']} | {cell['estimate']:.3f} [{cell['low']:.3f}, "
            f"{cell['high']:.3f}] |") in markdown
    assert "Holm-adjusted over the 6 comparisons" in markdown


def test_many_comparisons_show_neighbours_in_tables_and_all_in_json():
    abilities = {f"m{i:02d}": 1.5 - 0.2 * i for i in range(17)}
    board = build_leaderboard(sample_table(make_records(abilities, n_problems=10, n_samples=4)),
                              "pass@1", n_resamples=50, curves=False, rng=0)
    data = board.data
    assert len(data["comparisons"]) == data["comparison_family"]["size"] == 136
    markdown = render_markdown(board.data)
    assert "the 16 between neighbours shown, all 136 in the JSON output" in markdown
    order = [e["model"] for e in data["models"]]
    for a, b in zip(order[:-1], order[1:]):
        assert f"| {a} | {b} |" in markdown
    assert f"| {order[0]} | {order[2]} |" not in markdown
    assert render_html(board.data).count("data-model-a=") == 16


def test_build_leaderboard_iv(four_models):
    with pytest.raises(TypeError, match="SampleTable"):
        build_leaderboard([], "pass@1", rng=0)
    with pytest.raises(ValueError, match="`pairs`"):
        build_leaderboard(four_models, "pass@1", pairs="some", rng=0)
    with pytest.raises(ValueError, match="baseline model 'omega' is not in the table"):
        build_leaderboard(four_models, "pass@1", baseline="omega", rng=0)


# --------------------------------------------------------------------------------------------
# --extend
# --------------------------------------------------------------------------------------------

EXISTING_CSV = (
    'rank,model,org,MMLU,"notes, free text",link\r\n'
    '1,alpha,Org A,81.2,"said ""best""",https://example.org/a\r\n'
    '2,"beta",Org B,79.0,"multi\r\nline note",https://example.org/b\r\n'
    '3,unknown-model,Org C,70.1,,https://example.org/c\r\n'
    '\r\n'
    '4,GAMMA,Org D,68.0,plain\r\n'                       # short row: one cell missing
)

EXISTING_MARKDOWN = """# My leaderboard

Intro text | with a pipe that is not a table.

| # | Model | Org | MMLU | Notes |
|---|:------|-----|-----:|-------|
| 1 | [alpha](https://example.org/a) | Org A | 81.2 | best \\| fastest |
| 2 | **beta** | Org B | 79.0 |  |
| 3 | unknown-model | Org C | 70.1 | n/a |
4 | `gamma` | Org D | 68.0 | no outer pipes

Footer text, kept as it is.
"""


def physical_lines(text):
    import re

    return re.findall(r"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$", text)


def assert_lines_kept(original, extended, table_lines):
    """Every line outside the table is unchanged; every table line starts with its original text
    and keeps its line ending."""
    before, after = physical_lines(original), physical_lines(extended)
    assert len(before) == len(after)
    for number, (old, new) in enumerate(zip(before, after)):
        old_body, new_body = old.rstrip("\r\n"), new.rstrip("\r\n")
        assert old[len(old_body):] == new[len(new_body):]            # line ending kept
        if number in table_lines:
            assert new_body.startswith(old_body.rstrip()) and len(new_body) > len(old_body)
        else:
            assert new == old


@pytest.fixture(scope="module")
def small_board(four_models):
    return build_leaderboard(four_models, "pass@1,4", n_resamples=100, curves=False, rng=0)


def test_extend_csv_keeps_rows_and_columns(tmp_path, small_board):
    path = tmp_path / "board.csv"
    path.write_bytes(EXISTING_CSV.encode())
    existing = read_leaderboard_table(path, key="model")
    result = extend_leaderboard(small_board.data, existing, "model")
    original_rows = list(csv.reader(io.StringIO(EXISTING_CSV, newline="")))
    extended_rows = list(csv.reader(io.StringIO(result.text, newline="")))
    from kpass.render.leaderboard_text import csv_columns

    new_header, new_cells = csv_columns(small_board.data)
    assert len(extended_rows) == len(original_rows)
    assert extended_rows[0] == original_rows[0] + new_header
    by_model = {"alpha": "alpha", "beta": "beta", "GAMMA": "gamma"}
    for old, new in zip(original_rows[1:], extended_rows[1:]):
        if not old:
            assert new == []                                     # blank line untouched
            continue
        assert new[:len(old)] == old                              # existing cells unchanged
        padded = old + [""] * (6 - len(old))
        expected = new_cells[by_model[old[1]]] if old[1] in by_model else [""] * len(new_header)
        assert new == padded + expected
    # multi-line record: the new cells go after its last physical line
    assert_lines_kept(EXISTING_CSV, result.text, table_lines={0, 1, 3, 4, 6})
    assert result.unmatched_rows == ((5, "unknown-model"),)      # physical line 5 (after a 2-line record)
    assert result.unmatched_models == ("delta",)
    assert "1 row(s) match no model: 'unknown-model' (line 5)" in result.report()
    assert "1 model(s) match no row: 'delta'" in result.report()


def test_extend_markdown_keeps_rows_columns_and_text(tmp_path, small_board):
    path = tmp_path / "README.md"
    path.write_text(EXISTING_MARKDOWN)
    existing = read_leaderboard_table(path, key="model")       # matches the column "Model"
    assert existing.header == ("#", "Model", "Org", "MMLU", "Notes")
    result = extend_leaderboard(small_board.data, existing, "model")
    from kpass.data.leaderboard_tables import _split_markdown_row
    from kpass.render.leaderboard_text import markdown_columns

    new_header, new_cells = markdown_columns(small_board.data)
    lines = EXISTING_MARKDOWN.splitlines()
    table_lines = set(range(4, 10))
    assert_lines_kept(EXISTING_MARKDOWN, result.text, table_lines)
    new_lines = result.text.splitlines()
    assert _split_markdown_row(new_lines[4]) == ["#", "Model", "Org", "MMLU", "Notes", *new_header]
    assert _split_markdown_row(new_lines[5])[5:] == ["---"] * len(new_header)
    for number, model in ((6, "alpha"), (7, "beta"), (9, "gamma")):
        cells = _split_markdown_row(new_lines[number])
        assert cells[:5] == _split_markdown_row(lines[number])
        assert cells[5:] == new_cells[model]
    assert _split_markdown_row(new_lines[8])[5:] == [""] * len(new_header)
    assert result.unmatched_rows == ((9, "unknown-model"),)
    assert result.unmatched_models == ("delta",)
    assert set(result.matched.values()) == {"alpha", "beta", "gamma"}


def test_extend_new_column_names_do_not_clash(tmp_path, small_board):
    path = tmp_path / "board.csv"
    path.write_text("model,pass@1\nalpha,0.5\n")
    result = extend_leaderboard(small_board.data, read_leaderboard_table(path), "model")
    header = next(csv.reader(io.StringIO(result.text)))
    assert header[:3] == ["model", "pass@1", "pass@1 (kpass)"]
    assert header.count("pass@1") == 1


def test_extend_table_duplicates_pipes_and_bom(tmp_path):
    markdown = tmp_path / "board.md"
    markdown.write_text("| model | score |\n|---|---|\n| a\\|b | 1 |\n| c | 2 |\n| c | 3 |\n")
    result = extend_table(read_leaderboard_table(markdown, key="model"), "model", ["note"],
                          {"a|b": ["x|y"], "c": ["z"]})
    assert result.text.splitlines()[2] == "| a\\|b | 1 | x\\|y |"
    assert result.duplicate_keys == ("c",) and "keys on more than one row: 'c'" in result.report()
    assert result.text.splitlines()[3:] == ["| c | 2 | z |", "| c | 3 | z |"]
    bom = tmp_path / "bom.csv"
    bom.write_bytes("\ufeffmodel;score\na;1\n".encode())
    result = extend_table(read_leaderboard_table(bom), "model", ["note"], {"a": ["p;q"]})
    assert result.text == '\ufeffmodel;score;note\na;1;"p;q"\n'       # delimiter and BOM kept
    with pytest.raises(ValueError, match="model 'a' has 2 values for 1 columns"):
        extend_table(read_leaderboard_table(bom), "model", ["note"], {"a": ["1", "2"]})


def test_read_leaderboard_table_errors(tmp_path):
    from kpass import DataError

    bad = tmp_path / "bad.csv"
    bad.write_text("model,score\nalpha,1,extra\n")
    with pytest.raises(DataError, match=r"bad.csv, line 2: the row has 3 cells but the header has 2"):
        read_leaderboard_table(bad)
    empty = tmp_path / "empty.md"
    empty.write_text("no table here\n")
    with pytest.raises(DataError, match="empty.md: no Markdown pipe table found"):
        read_leaderboard_table(empty)
    other = tmp_path / "other.md"
    other.write_text("| a | b |\n|---|---|\n| 1 | 2 |\n")
    with pytest.raises(ValueError, match="no Markdown table has a column named 'model'"):
        read_leaderboard_table(other, key="model")
    good = tmp_path / "good.csv"
    good.write_text("name,score\nalpha,1\n")
    with pytest.raises(ValueError, match=r"no column named 'model'.*\['name', 'score'\]"):
        read_leaderboard_table(good).column("model")
    with pytest.raises(ValueError, match="cannot tell the table format"):
        read_leaderboard_table(tmp_path / "board.xlsx")


# --------------------------------------------------------------------------------------------
# The `kpass leaderboard` command
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def samples_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("samples") / "samples.jsonl"
    with open(path, "w") as handle:
        for record in make_records(ABILITIES, tokens=True, n_problems=16):
            handle.write(json.dumps(record) + "\n")
    return path


def run_cli(*args):
    from kpass.cli import main

    return main(["leaderboard", *map(str, args)])


def test_cli_writes_every_format(tmp_path, samples_file, capsys):
    outputs = [tmp_path / f"board.{suffix}" for suffix in ("md", "csv", "json", "html")]
    code = run_cli(samples_file, "-m", "pass@1,4", "--n-resamples", "200", "--cluster-by", "cluster",
                   *[x for path in outputs for x in ("-o", path)])
    assert code == 0
    data = json.loads(outputs[2].read_text())
    assert data["cluster_by"] == "cluster" and data["n_resamples"] == 200
    assert outputs[0].read_text() == render_markdown(data)
    assert outputs[1].read_text() == render_csv(data)
    page = outputs[3].read_text()
    assert page.startswith("<!DOCTYPE html>") and 'id="kpass-data"' in page
    for external in ("http://", "https://", "src=", "<link", "@import", "url("):
        assert external not in page
    assert capsys.readouterr().out == ""


def test_cli_extend_reports_unmatched(tmp_path, samples_file, capsys):
    existing = tmp_path / "board.csv"
    existing.write_bytes(EXISTING_CSV.encode())
    output = tmp_path / "extended.csv"
    code = run_cli(samples_file, "--n-resamples", "100", "--no-curves", "--extend", existing,
                   "--key", "model", "-o", output)
    assert code == 0
    err = capsys.readouterr().err
    assert "'unknown-model' (line 5)" in err and "model(s) match no row: 'delta'" in err
    text = output.read_bytes().decode()
    assert_lines_kept(EXISTING_CSV, text, table_lines={0, 1, 3, 4, 6})
    # without --output the extended table goes to stdout
    assert run_cli(samples_file, "--n-resamples", "100", "--no-curves", "--extend", existing) == 0
    assert capsys.readouterr().out == text


@pytest.mark.parametrize("args, code, message", [
    (["--sort", "pass@8"], 2, "--sort 'pass@8' names no leaderboard column"),
    (["--baseline", "omega"], 2, "baseline model 'omega' is not in the table"),
    (["--extend", "missing.csv"], 2, "--extend missing.csv: no such file"),
    (["-o", "board.xlsx"], 2, "cannot tell the format from the suffix .xlsx"),
    (["-m", "pass@"], 2, ""),
])
def test_cli_usage_errors(tmp_path, samples_file, capsys, monkeypatch, args, code, message):
    monkeypatch.chdir(tmp_path)
    assert run_cli(samples_file, "--no-curves", "--n-resamples", "50", *args) == code
    assert message in capsys.readouterr().err


def test_cli_extend_errors(tmp_path, samples_file, capsys):
    table = tmp_path / "board.csv"
    table.write_text("name,score\nalpha,1\n")
    assert run_cli(samples_file, "--no-curves", "--extend", table) == 2
    assert "no column named 'model'" in capsys.readouterr().err
    table.write_text("model,score\nalpha,1,2\n")
    assert run_cli(samples_file, "--no-curves", "--extend", table) == 1
    assert "board.csv, line 2: the row has 3 cells" in capsys.readouterr().err


def test_several_tasks_curves_and_page():
    import re

    records = (make_records({"alpha": 0.5, "beta": -0.5}, tokens=True, n_problems=8, n_samples=4)
               + make_records({"alpha": 0.5, "beta": -0.5}, tokens=True, n_problems=6, n_samples=2,
                              task="code", seed=3))
    board = build_leaderboard(sample_table(records), "pass@1", n_resamples=100, rng=0)
    data = board.data
    assert set(data["curves"]) == {"math: pass@k", "code: pass@k"}
    assert [p["k"] for p in data["curves"]["code: pass@k"]["beta"]] == [1, 2]
    assert set(data["budget_curves"]) == {"math: pass@1", "math: fin@1", "code: pass@1", "code: fin@1"}
    page = render_html(board.data)
    ids = re.findall(r'\bid="([^"]*)"', page)
    assert "kp-curve-code:-pass@k" in ids and "kp-budget-math:-fin@1" in ids
    assert all(not re.search(r"\s", i) for i in ids) and len(ids) == len(set(ids))


def test_rank_intervals_do_not_depend_on_problem_order():
    """At a fixed seed, permuting the problems leaves every rank count unchanged."""
    generator = np.random.default_rng(11)
    values = generator.random((4, 30)).round(2)
    order = generator.permutation(30)
    first = rank_intervals(values, n_resamples=500, rng=3)
    permuted = rank_intervals(values[:, order], n_resamples=500, rng=3)
    np.testing.assert_array_equal(first.rank_counts, permuted.rank_counts)
    np.testing.assert_array_equal(first.low, permuted.low)
    np.testing.assert_array_equal(first.high, permuted.high)


# ---------------------------------------------------------------------------------------------
# ranks agree with the paired comparisons shown (issue #16)
# ---------------------------------------------------------------------------------------------


def _disjoint(a, b):
    return a["high"] < b["low"] or b["high"] < a["low"]


@pytest.mark.parametrize("pairs", ["adjacent", "all"])
def test_models_a_paired_interval_cannot_tell_apart_never_get_disjoint_ranks(four_models, pairs):
    # the case: 4 clusters, where the cluster bootstrap of ranks orders alpha first alone
    # (ranks [1, 1] and [2, 3]) next to a paired comparison of alpha and its neighbour holding 0
    board = build_leaderboard(four_models, "pass@1", cluster_by="cluster", pairs=pairs, n_resamples=400,
                              rng=0, curves=False)
    raw = board.ranks["pass@1"]
    ranks = {e["model"]: e["ranks"]["pass@1"] for e in board.data["models"]}
    held = [c for c in board.data["comparisons"] if c["low"] <= 0.0 <= c["high"]]

    def raw_of(model):
        i = raw.models.index(model)
        return {"low": int(raw.low[i]), "high": int(raw.high[i])}

    # the rank bootstrap alone contradicts a comparison shown: the fix is exercised
    assert any(_disjoint(raw_of(c["model_a"]), raw_of(c["model_b"])) for c in held)
    for c in held:
        assert not _disjoint(ranks[c["model_a"]], ranks[c["model_b"]]), c
    for model in raw.models:   # widening only
        assert ranks[model]["low"] <= raw_of(model)["low"] and raw_of(model)["high"] <= ranks[model]["high"]
    (widened,) = [note for note in board.data["notes"] if "rank intervals widened" in note["text"]]
    assert widened["kind"] == "ranks" and widened["rows"] == ["pass@1"]


def test_reconcile_rank_intervals_chains_and_leaves_separated_pairs_alone():
    from kpass.metrics import RankIntervals, reconcile_rank_intervals

    ranks = RankIntervals(("a", "b", "c", "d"), np.array([1, 2, 3, 4]), np.array([1, 2, 3, 4]),
                          np.array([1, 2, 3, 4]), np.eye(4, dtype=np.int64), 0.95, 1, 10, None, True)
    fixed, widened = reconcile_rank_intervals(ranks, [("a", "b"), ("b", "c")])
    assert widened == [("a", "b"), ("b", "c")]
    assert fixed.low.tolist() == [1, 1, 2, 4] and fixed.high.tolist() == [2, 3, 3, 4]
    assert fixed.rank.tolist() == [1, 2, 3, 4]     # observed ranks unchanged
    untouched, none = reconcile_rank_intervals(ranks, [])
    assert none == [] and untouched.low.tolist() == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="'z'"):
        reconcile_rank_intervals(ranks, [("a", "z")])


def test_leaderboard_notes_a_pair_resting_on_tiny_differences_on_that_pair():
    # pass@1 from 64 samples; "beta-near" differs from "beta" by one sample on 10 problems (1/64 each):
    # the paired default's tiny-difference warning is the pair's note, not a block-level note naming
    # columns of paired_difference's 2-D call (#16, point 6)
    records = make_records(ABILITIES, n_samples=64, seed=3)
    near = copy_model(records, "beta", "beta-near")
    for r in near:
        if r["sample_index"] == 0 and int(r["problem_id"][1:]) < 10:
            r["correct"] = not r["correct"]
    board = build_leaderboard(sample_table(records + near), "pass@1", n_resamples=300, curves=False, rng=0)
    pair = next(c for c in board.data["comparisons"] if {c["model_a"], c["model_b"]} == {"beta", "beta-near"})
    assert "100.0% of the difference comes from per-problem differences below 0.05" in pair["note"]
    others = [c for c in board.data["comparisons"] if "beta-near" not in (c["model_a"], c["model_b"])]
    assert all("per-problem differences below" not in c["note"] for c in others)
    assert not any("tiny_difference_share" in note["text"] or "columns [" in note["text"] for note in board.data["notes"])


def test_leaderboard_notes_a_pair_that_differs_on_one_problem_on_that_pair():
    # pass@1 from one sample; "beta-one" differs from "beta" on a single problem: the paired default's
    # few-differences warning is that pair's note, not a block-level note naming 2-D columns (#16, point 6)
    records = make_records(ABILITIES, n_samples=1, seed=3)
    one = copy_model(records, "beta", "beta-one")
    flipped = next(r for r in one if r["problem_id"] == "q000")
    flipped["correct"] = not flipped["correct"]
    board = build_leaderboard(sample_table(records + one), "pass@1", n_resamples=300, curves=False, rng=0)
    pair = next(c for c in board.data["comparisons"] if {c["model_a"], c["model_b"]} == {"beta", "beta-one"})
    assert f"the interval rests on the one problem of {pair['n_problems']} where the two models differ" in pair["note"]
    others = [c for c in board.data["comparisons"] if "beta-one" not in (c["model_a"], c["model_b"])]
    assert all("where the two models differ" not in c["note"] for c in others)
    assert not any("where the two models differ" in note["text"] for note in board.data["notes"])
