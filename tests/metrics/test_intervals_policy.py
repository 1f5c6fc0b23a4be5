"""The interval policy (metrics/_interval_policy.py): the rule each default picks, its thresholds, the "auto" name."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import warnings

import numpy as np
import pytest

from kpass.metrics import (
    DEFAULT_INTERVAL_METHOD,
    FEW_CLUSTERS,
    INTERVAL_METHODS,
    mean_ci,
    mean_ci_columns,
    paired_difference,
    paired_difference_columns,
)
from kpass.metrics import _interval_policy as policy
from kpass.metrics._interval_policy import (
    PAIRED_RULES,
    SINGLE_RULES,
    THRESHOLDS,
    IntervalThresholds,
    PairedFacts,
    SingleFacts,
    paired_default,
    single_default,
)

# the scale the engine records for each single-model rule (details["scale"])
SCALE_OF_RULE = {"wilson-deff": "score (0/1 values)", "few-cluster-score": "score (few clusters)",
                 "clustered-score": "score (clustered)", "score-toward-end": "score (effective size)",
                 "bootstrap-t-arcsine": "arcsine", "bootstrap-t": "identity"}


def _inputs():
    rng = np.random.default_rng(35)
    for n in (3, 10, 30, 100):
        mid = rng.binomial(16, rng.beta(2, 2, n)) / 16
        top = rng.binomial(8, rng.beta(8, 0.5, n)) / 8
        binary = (rng.random(n) < 0.8).astype(float)
        raw = rng.normal(3.0, 2.0, n)
        for values in (mid, top, binary, raw):
            yield values, None
            yield values, np.arange(n) % 3
            if n >= 30:
                yield values, np.arange(n) % (n // 3)


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def test_auto_is_the_default_and_studentized_its_alias_with_identical_numbers():
    assert DEFAULT_INTERVAL_METHOD == "auto" and "auto" in INTERVAL_METHODS and "studentized" in INTERVAL_METHODS
    for values, clusters in _inputs():
        auto = _quiet(mean_ci, values, clusters=clusters, n_resamples=199, rng=1)
        alias = _quiet(mean_ci, values, clusters=clusters, method="studentized", n_resamples=199, rng=1)
        assert alias == auto and alias.method == "auto"
        other = np.roll(values, 1) * 0.5
        paired_auto = _quiet(paired_difference, values, other, clusters=clusters, method="auto", n_resamples=199, rng=2)
        paired_alias = _quiet(paired_difference, values, other, clusters=clusters, method="studentized",
                              n_resamples=199, rng=2)
        assert repr(paired_alias) == repr(paired_auto) and paired_alias.method == "auto"  # (NaN correlations)


def test_every_single_default_result_names_the_rule_behind_its_scale():
    seen = set()
    for values, clusters in _inputs():
        result = _quiet(mean_ci, values, clusters=clusters, n_resamples=199, rng=1)
        assert result.rule in SINGLE_RULES
        if result.rule == "constant":
            assert result.low == result.high == result.estimate
        else:
            assert result.details["scale"] == SCALE_OF_RULE[result.rule], (result.rule, result.details["scale"])
        seen.add(result.rule)
    assert seen >= set(SCALE_OF_RULE)  # the grid reaches every rule that has a scale


def test_columns_name_their_own_rule():
    values = np.column_stack([np.r_[np.ones(20), np.zeros(10)], np.linspace(0.1, 0.9, 30)])
    results = mean_ci_columns(values, n_resamples=199, rng=0)
    assert [r.rule for r in results] == ["wilson-deff", "score-toward-end"]
    pairs = _quiet(paired_difference_columns, values, values[::-1].copy(), n_resamples=199, rng=0)
    assert [p.rule for p in pairs] == ["matched-pairs", "t-split-score"]


@pytest.mark.parametrize("method", ["t", "bootstrap", "bca"])
def test_a_method_other_than_the_default_is_its_own_rule(method):
    values = np.linspace(0.05, 0.95, 20)
    assert mean_ci(values, method=method, n_resamples=199, rng=0).rule == method
    assert _quiet(paired_difference, values, values[::-1].copy(), method=method, n_resamples=199, rng=0).rule == method
    clusters = np.arange(20) % 10
    assert mean_ci(values, clusters=clusters, method="clustered-t").rule == "clustered-t"


def test_paired_default_rules_of_the_engine_are_paired_rules():
    seen = set()
    for values, clusters in _inputs():
        if set(np.unique(values)) <= {0.0, 1.0}:  # 0/1 values: flip every fourth problem
            other = np.where(np.arange(values.size) % 4 == 0, 1.0 - values, values)
        elif values.min() >= 0 and values.max() <= 1:
            other = np.clip(values - 0.1 * (np.arange(values.size) % 2), 0, 1)
        else:
            other = values[::-1].copy()
        result = _quiet(paired_difference, values, other, clusters=clusters, n_resamples=199, rng=1)
        assert result.rule in PAIRED_RULES
        if result.rule == "matched-pairs":
            assert result.details["paired_bound_methods"] == ("matched-pairs score", "matched-pairs score")
        if result.rule in ("mover", "mover-clustered-score", "mover-score"):
            assert result.details["matched_pairs_interval"] is None
        seen.add(result.rule)
    assert {"matched-pairs", "t-split-score", "mover", "mover-score"} <= seen


def test_two_models_that_agree_everywhere_take_the_no_difference_bound():
    a = np.r_[np.ones(20), np.zeros(10)]
    with pytest.warns(Warning, match="agree on every problem"):
        assert paired_difference(a, a.copy(), rng=0).rule == "no-difference-bound"
    with pytest.warns(Warning):
        assert paired_difference(a, a, rng=0).rule == "constant"  # the same array: a model with itself


def _single(**changes):
    facts = {"n_problems": 30, "n_clusters": None, "known_range": True, "at_range_ends": False, "constant": False}
    return single_default(SingleFacts(**{**facts, **changes}))


def test_single_default_decision_table():
    assert _single() == "score-toward-end"
    assert _single(n_problems=THRESHOLDS.problem_score_min_problems - 1) == "bootstrap-t-arcsine"
    assert _single(at_range_ends=True) == "wilson-deff"
    assert _single(at_range_ends=True, constant=True) == "wilson-deff"  # 30 of 30 solved: Wilson's, not [1, 1]
    assert _single(constant=True) == "constant"
    assert _single(known_range=False) == "bootstrap-t"
    assert _single(known_range=False, n_clusters=3) == "bootstrap-t"
    assert _single(n_clusters=THRESHOLDS.few_clusters - 1) == "few-cluster-score"
    assert _single(n_clusters=THRESHOLDS.few_clusters) == "clustered-score"


def _paired(**changes):
    facts = {"n_problems": 30, "n_clusters": None, "known_range": True, "both_at_range_ends": False,
             "constant_difference": False, "saturated": False, "within_share_of_same_end": False,
             "near_same_end": False, "model_near_end": False}
    return paired_default(PairedFacts(**{**facts, **changes}))


def test_paired_default_decision_table():
    assert _paired() == "t-split-score"
    assert _paired(known_range=False) == "mover"
    assert _paired(n_clusters=THRESHOLDS.few_clusters - 1, both_at_range_ends=True) == "mover-score"
    assert _paired(both_at_range_ends=True) == "matched-pairs"
    assert _paired(both_at_range_ends=True, constant_difference=True) == "t-split-score"
    assert _paired(saturated=True) == "mover"
    assert _paired(saturated=True, within_share_of_same_end=True) == "bootstrap-t-differences"
    assert _paired(saturated=True, within_share_of_same_end=True, n_clusters=40) == "mover"
    assert _paired(n_clusters=THRESHOLDS.paired_t_min_clusters) == "t-split-score"
    assert _paired(n_clusters=THRESHOLDS.paired_t_min_clusters - 1) == "mover"
    assert _paired(n_clusters=20, near_same_end=True) == "t-split-score"
    assert _paired(n_clusters=20, saturated=True, near_same_end=True) == "mover"
    assert _paired(n_clusters=40, saturated=True, model_near_end=True) == "mover-clustered-score"


def test_thresholds_are_one_frozen_record_whose_every_field_cites_its_measurement():
    with pytest.raises(dataclasses.FrozenInstanceError):
        THRESHOLDS.few_clusters = 5  # type: ignore[misc]
    assert FEW_CLUSTERS == THRESHOLDS.few_clusters
    body = ast.parse(inspect.getsource(IntervalThresholds)).body[0]
    assert isinstance(body, ast.ClassDef)
    documented = {}
    for field, after in zip(body.body, body.body[1:]):
        if isinstance(field, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            documented[field.target.id] = after.value.value  # type: ignore[union-attr]
    names = [f.name for f in dataclasses.fields(IntervalThresholds)]
    assert sorted(documented) == sorted(names)
    for name, text in documented.items():
        assert "docs/" in text or "Cameron" in text, name
    assert policy.THRESHOLDS == IntervalThresholds()


def test_no_threshold_is_left_as_a_module_constant_of_the_interval_modules():
    from kpass.metrics import _interval_engine, _interval_warnings, _intervals, _score_intervals, _single_score

    names = {f.name.upper() for f in dataclasses.fields(IntervalThresholds)} - {"FEW_CLUSTERS"}
    for module in (_interval_engine, _interval_warnings, _intervals, _score_intervals, _single_score):
        assert not names & set(vars(module)), module.__name__
