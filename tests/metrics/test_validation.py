"""Input validation of the core estimators: one ``pytest.raises(match=...)`` per message.

Also runs the doctests of the core modules (the examples in the docstrings).
"""

from __future__ import annotations

import doctest
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from kpass.metrics import (
    biased_plugin_pass_at_k,
    cot_pass_at_k,
    fin_at_k,
    g_pass_at_k,
    mg_pass_at_k,
    pass_at_k,
    pass_hat_k,
)
from kpass.metrics import _budget, _cot, _passk, _samples, _validation
from kpass.metrics._validation import (
    as_count_array,
    check_counts,
    check_k,
    check_option,
    check_tau,
    describe_offenders,
    exact_threshold,
)

COUNT_FUNCTIONS = [pass_at_k, pass_hat_k, cot_pass_at_k, fin_at_k, mg_pass_at_k]


@pytest.mark.parametrize("module", [_passk, _cot, _budget, _samples, _validation])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


# ---------------------------------------------------------------- counts
def test_as_count_array_messages():
    with pytest.raises(TypeError, match=r"`n_samples` must be an array of integer counts; got the string 'abc'"):
        as_count_array("abc", "n_samples")
    with pytest.raises(TypeError, match=r"`n_samples` must be a rectangular array of integer counts"):
        as_count_array([[1, 2], [3]], "n_samples")
    with pytest.raises(ValueError, match=r"`n_samples` must be 0-D or 1-D; got an array of shape \(1, 1\)"):
        as_count_array([[1]], "n_samples")
    with pytest.raises(TypeError, match=r"`n_correct` must hold integer counts, not booleans .*counts_from_matrix"):
        as_count_array(np.array([True, False]), "n_correct")
    with pytest.raises(TypeError, match=r"`n_samples` must be an array of integer counts; got dtype complex128"):
        as_count_array([1 + 2j], "n_samples")
    with pytest.raises(TypeError, match=r"`n_samples` must be an array of integer counts; got dtype object"):
        as_count_array([Decimal(1)], "n_samples")
    with pytest.raises(ValueError, match=r"`n_samples` must be finite integer counts; NaN or infinity at 1 problem; first: \[1\] \(n_samples=nan\)"):
        as_count_array([3.0, np.nan], "n_samples")
    with pytest.raises(ValueError, match=r"`n_samples` must hold whole numbers; non-integer values at 1 problem; first: \[1\] \(n_samples=2.5\)"):
        as_count_array([3.0, 2.5], "n_samples")
    with pytest.raises(ValueError, match=r"`n_samples` holds floats beyond 2\*\*53"):
        as_count_array([2.0**60], "n_samples")
    with pytest.raises(ValueError, match=r"`n_correct` must be non-negative; negative values at 2 problems; first: \[0\] \(n_correct=-1\), \[2\] \(n_correct=-3\)"):
        as_count_array([-1, 2, -3], "n_correct")
    with pytest.raises(ValueError, match=r"`n_samples` holds integers too large for int64"):
        as_count_array(np.array([2**64 - 1], dtype=np.uint64), "n_samples")
    with pytest.raises(ValueError, match=r"`n_samples` holds integers too large for int64"):
        as_count_array([2**70], "n_samples")


def test_as_count_array_accepts():
    np.testing.assert_array_equal(as_count_array([3.0, 2.0], "n"), [3, 2])  # whole floats are fine
    assert as_count_array(np.array([3, 2], dtype=np.uint8), "n").dtype == np.int64
    assert as_count_array([], "n").shape == (0,)
    assert as_count_array(5, "n").shape == ()
    assert as_count_array(np.zeros((2, 3)), "n", ndim=2).shape == (2, 3)


def test_check_counts_messages():
    with pytest.raises(ValueError, match=r"`n_samples` and `n_correct` must have the same length \(one entry per problem\); got 2 and 3"):
        check_counts([1, 2], [0, 0, 0])
    with pytest.raises(ValueError, match=r"`n_correct` exceeds `n_samples` for 1 problem; first: \[1\] \(n_correct=4, n_samples=3\)"):
        check_counts([5, 3], [1, 4])
    with pytest.raises(ValueError, match=r"`n_cot_correct` exceeds `n_samples`"):
        check_counts([5, 3], [1, 4], correct_name="n_cot_correct")


def test_offenders_are_listed_at_most_five():
    n = np.arange(20)
    message = describe_offenders(n < 12, n, value_name="n_samples")
    assert message.startswith("12 problems; first: [0] (n_samples=0), [1] (n_samples=1)")
    assert message.count("[") == 5 and message.endswith(", ...")
    assert describe_offenders(np.array([False, True])) == "1 problem; first: [1]"
    assert describe_offenders(np.array([[False, True]])) == "1 entry; first: [0, 1]"


def test_check_k_messages():
    n = np.array([3, 10, 2, 1, 1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"`k` = 5 exceeds `n_samples` \(k > n is undefined for an unbiased estimator\) for 7 problems; first: \[0\] \(n_samples=3\), \[2\] \(n_samples=2\), \[3\] \(n_samples=1\), \[4\] \(n_samples=1\), \[5\] \(n_samples=1\), \.\.\."):
        check_k(5, n)
    with pytest.raises(ValueError, match=r"`k` = 4 exceeds `n_samples`"):
        check_k([1, 4], np.array([3]))  # the largest k of a sequence is checked
    with pytest.raises(TypeError, match=r"`k` must be an integer >= 1 or a 1-D sequence of them; got the boolean True"):
        check_k(True)
    with pytest.raises(TypeError, match=r"`k` must be an integer >= 1 or a 1-D sequence of them; got the string '5'"):
        check_k("5")
    with pytest.raises(ValueError, match=r"`k` must be an integer or a 1-D sequence; got an array of shape \(1, 2\)"):
        check_k([[1, 2]])
    with pytest.raises(ValueError, match=r"`k` must not be an empty sequence"):
        check_k([])
    with pytest.raises(TypeError, match=r"`k` must hold integers, not booleans"):
        check_k(np.array([True, False]))
    with pytest.raises(TypeError, match=r"`k` must be an integer >= 1 or a 1-D sequence of them; got \[Decimal"):
        check_k([Decimal(2)])
    with pytest.raises(TypeError, match=r"`k` must be an integer >= 1 or a 1-D sequence of them; got \[\(1\+1j\)\] \(dtype complex128\)"):
        check_k([1 + 1j])
    with pytest.raises(TypeError, match=r"`k` must be an integer >= 1 or a 1-D sequence of them; got \[\[1\], 2\]"):
        check_k([[1], 2])
    with pytest.raises(ValueError, match=r"`k` must be a whole number >= 1; got 2.5"):
        check_k(2.5)
    with pytest.raises(ValueError, match=r"`k` must be >= 1; got 0"):
        check_k(0)


def test_check_k_accepts():
    assert check_k(3) == (np.array([3]), True)
    values, is_scalar = check_k([1, 2.0, np.int32(4)])
    assert values.tolist() == [1, 2, 4] and not is_scalar
    assert check_k(np.int64(5), np.array([5, 6]))[0].tolist() == [5]


def test_check_tau_messages():
    with pytest.raises(ValueError, match=r"`tau` must be in \[0, 1\]; got 1.5"):
        check_tau(1.5)
    with pytest.raises(ValueError, match=r"`tau` must be in \[0, 1\]; got -0.1"):
        check_tau([0.5, -0.1])
    with pytest.raises(ValueError, match=r"`tau` must be a finite number in \[0, 1\]; got nan"):
        check_tau(float("nan"))
    with pytest.raises(ValueError, match=r"`tau` must be a finite number in \[0, 1\]; got 'half'"):
        check_tau("half")
    with pytest.raises(ValueError, match=r"`tau` must be a finite number in \[0, 1\]; got Decimal\('NaN'\)"):
        check_tau(Decimal("NaN"))
    with pytest.raises(TypeError, match=r"`tau` must be a number in \[0, 1\]; got the boolean True"):
        check_tau(True)
    with pytest.raises(TypeError, match=r"`tau` must be a number in \[0, 1\]; got the bytes b'0.5'"):
        check_tau(b"0.5")
    with pytest.raises(TypeError, match=r"`tau` must be a float, str, Fraction or Decimal in \[0, 1\].*complex"):
        check_tau(0.5 + 0j)
    with pytest.raises(TypeError, match=r"`tau` must be a number in \[0, 1\] or a 1-D sequence of them; got None"):
        check_tau(None)
    with pytest.raises(ValueError, match=r"`tau` must not be an empty sequence"):
        check_tau([])
    with pytest.raises(ValueError, match=r"`tau` must be a number or a 1-D sequence; got an array of shape \(1, 1\)"):
        check_tau(np.array([[0.5]]))
    with pytest.raises(ValueError, match=r"`tau` must be a number or a 1-D sequence; got the nested"):
        check_tau([[0.5]])


def test_check_tau_is_exact():
    taus, is_scalar = check_tau(0.28)
    assert taus == [Fraction(7, 25)] and is_scalar  # not Fraction(0.28) = 0.28000000000000002665...
    spellings = ["0.28", "7/25", Fraction(7, 25), Decimal("0.28"), np.float64(0.28), np.float32(0.28)]
    assert check_tau(spellings) == ([Fraction(7, 25)] * len(spellings), False)
    assert check_tau(np.array([0, 1])) == ([Fraction(0), Fraction(1)], False)
    assert check_tau(np.array(0.5)) == ([Fraction(1, 2)], True)
    assert exact_threshold(Fraction(7, 25), 25) == 7
    assert exact_threshold(Fraction(0), 10) == 1  # m = max(ceil(tau k), 1)


def test_check_option_messages():
    assert check_option("any", "rule", ("any", "all")) == "any"
    with pytest.raises(ValueError, match=r"`rule` must be one of \['any', 'all'\]; got 'most'"):
        check_option("most", "rule", ("any", "all"))
    with pytest.raises(TypeError, match=r"`rule` must be one of \['any', 'all'\]; got 1 of type int"):
        check_option(1, "rule", ("any", "all"))


# ---------------------------------------------------------------- each estimator's _iv
@pytest.mark.parametrize("fn", COUNT_FUNCTIONS)
def test_estimators_reject_k_above_n(fn):
    with pytest.raises(ValueError, match=r"`k` = 5 exceeds `n_samples` .* for 2 problems; first: \[0\] \(n_samples=3\), \[2\] \(n_samples=4\)"):
        fn([3, 10, 4], [1, 2, 0], 5)


@pytest.mark.parametrize(
    ("fn", "name"),
    [(pass_at_k, "n_correct"), (pass_hat_k, "n_correct"), (cot_pass_at_k, "n_cot_correct"), (fin_at_k, "n_finished"), (mg_pass_at_k, "n_correct")],
)
def test_estimators_name_their_count_parameter(fn, name):
    with pytest.raises(ValueError, match=rf"`{name}` exceeds `n_samples` for 1 problem; first: \[1\] \({name}=9, n_samples=5\)"):
        fn([5, 5], [1, 9], 2)
    with pytest.raises(ValueError, match=rf"`{name}` must be non-negative; negative values at 1 problem; first: \[0\]"):
        fn([5, 5], [-1, 2], 2)


def test_g_pass_at_k_iv():
    with pytest.raises(ValueError, match=r"`tau` must be in \[0, 1\]; got 2"):
        g_pass_at_k([5], [2], 3, tau=2)
    with pytest.raises(ValueError, match=r"`k` = 6 exceeds `n_samples`"):
        g_pass_at_k([5], [2], [1, 6], tau=0.5)
    with pytest.raises(ValueError, match=r"`n_samples` and `n_correct` must have the same length"):
        g_pass_at_k([5, 5], [2], 3, tau=0.5)


def test_mg_pass_at_k_iv():
    with pytest.raises(ValueError, match=r"`variant` must be one of \['published', 'integral'\]; got 'exact'"):
        mg_pass_at_k([5], [2], 3, variant="exact")


def test_biased_plugin_pass_at_k_iv():
    with pytest.raises(ValueError, match=r"`n_samples` must be >= 1 for the plug-in estimate; zero at 1 problem; first: \[0\]"):
        biased_plugin_pass_at_k([0, 2], [0, 1], 1)
    assert biased_plugin_pass_at_k([2], [1], 5)[0] == pytest.approx(1 - 0.5**5)  # k > n is defined here


def test_no_silent_nan_from_bad_input():
    for bad in ([np.nan], [np.inf], [-1]):
        with pytest.raises(ValueError):
            pass_at_k([5], bad, 1)
        with pytest.raises(ValueError):
            pass_at_k(bad, [1], 1)
