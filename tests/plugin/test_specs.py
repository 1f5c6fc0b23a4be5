"""Metric-spec parsing: what users type -> canonical names, and errors that list what is valid."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kpass
from kpass.host.specs import format_decimal, split_spec_text


@pytest.fixture
def pm():
    return kpass.make_plugin_manager(load_entry_points=False)


def names(text, pm):
    return [spec.name for spec in kpass.parse_metric_specs(text, plugin_manager=pm)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pass@1,8,64", ["pass@1", "pass@8", "pass@64"]),
        ("pass^4", ["pass^4"]),
        ("cons@16", ["cons@16"]),
        ("maj@16", ["cons@16"]),
        ("MAJ@16", ["cons@16"]),
        ("g-pass@16_0.5,0.75,1.0", ["G-Pass@16_0.5", "G-Pass@16_0.75", "G-Pass@16_1.0"]),
        ("G-PASS@16_.50,1", ["G-Pass@16_0.5", "G-Pass@16_1.0"]),
        ("g-pass@4,8_0.5", ["G-Pass@4_0.5", "G-Pass@8_0.5"]),
        ("mg-pass@16", ["mG-Pass@16"]),
        ("mg-pass@16[variant=integral]", ["mG-Pass@16[variant=integral]"]),
        ("mg-pass@16[variant=published]", ["mG-Pass@16"]),  # defaults are not printed
        ("cot-pass@8", ["CoT-Pass@8"]),
        ("CoT-Pass@8[rule=Majority]", ["CoT-Pass@8[rule=majority]"]),
        ("fin@1", ["fin@1"]),
        ("fin@1[budget=4096]", ["fin@1(B=4096)"]),
        ("fin@1(B=4096)", ["fin@1(B=4096)"]),
        ("pass@1,8[budget=2048]", ["pass@1(B=2048)", "pass@8(B=2048)"]),
        ("cons@16[ties=strict,invalid=vote]", ["cons@16[invalid=vote,ties=strict]"]),
        ("cons@16[invalid=vote][ties=strict]", ["cons@16[invalid=vote,ties=strict]"]),
    ],
)
def test_canonical_names(text, expected, pm):
    assert names(text, pm) == expected


def test_several_specs_in_one_string_and_a_list(pm):
    assert names("pass@1,8,cons@16[ties=strict,invalid=vote];fin@1 pass^2", pm) == [
        "pass@1", "pass@8", "cons@16[invalid=vote,ties=strict]", "fin@1", "pass^2"]
    assert names(["pass@1", "pass@1", "maj@4", "cons@4"], pm) == ["pass@1", "cons@4"]  # duplicates kept once


def test_spec_fields(pm):
    (spec,) = kpass.parse_metric_specs("g-pass@16_0.28", plugin_manager=pm)
    assert spec.family == "G-Pass@k" and spec.k == 16
    assert spec.params["tau"] == Fraction(7, 25)  # exact, never the float 0.28
    assert spec.parameter == Fraction(7, 25)
    assert spec.min_samples == 16 and spec.budget is None
    (cons,) = kpass.parse_metric_specs("maj@8[ties=strict]", plugin_manager=pm)
    assert cons.option("ties") == "strict" and cons.option("invalid") == "abstain"
    assert cons.requires == ("answer",) and cons.text == "maj@8[ties=strict]"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("foo@3", "unknown metric 'foo@'"),
        ("pass@0", "k must be a positive integer"),
        ("pass@", "k must be a positive integer"),
        ("pass@x", "k must be a positive integer"),
        ("pass@8_0.5", "takes no '_' parameter"),
        ("g-pass@16", "needs tau"),
        ("g-pass@16_1.5", "must be in \\[0, 1\\]"),
        ("g-pass@16_abc", "decimal number"),
        ("cons@16[ties=maybe]", "must be one of fractional, strict"),
        ("cons@16[color=red]", "unknown option 'color'"),
        ("cons@16[ties]", "name=value"),
        ("fin@1[budget=-3]", "positive integer of output tokens"),
        ("cons@16(B=4096)", "does not support a token budget"),
        ("8@pass", "expected NAME@K"),
        ("pass@8]", "got .8\\]."),
    ],
)
def test_malformed_specs_list_what_is_valid(text, message, pm):
    with pytest.raises(kpass.MetricSpecError, match=message) as info:
        kpass.parse_metric_specs(text, plugin_manager=pm)
    text_of_error = str(info.value)
    assert "valid metric specs" in text_of_error
    for pattern in ("pass@k", "pass^k", "cons@k", "G-Pass@k_tau", "mG-Pass@k", "CoT-Pass@k", "fin@k"):
        assert pattern in text_of_error


def test_unknown_metric_is_a_key_error_too(pm):
    with pytest.raises(KeyError):
        kpass.parse_metric_specs("nope@2", plugin_manager=pm)


def test_empty_and_wrong_types(pm):
    with pytest.raises(kpass.MetricSpecError, match="no metric spec"):
        kpass.parse_metric_specs("  ", plugin_manager=pm)
    with pytest.raises(TypeError, match="must be strings"):
        kpass.parse_metric_specs([8], plugin_manager=pm)


def test_split_respects_brackets():
    assert split_spec_text("cons@8[ties=strict,invalid=vote],pass@1,2") == [
        "cons@8[ties=strict,invalid=vote]", "pass@1,2"]
    assert split_spec_text(" g-pass@8_0.5,.75 ; fin@1(B=10)") == ["g-pass@8_0.5,.75", "fin@1(B=10)"]


@given(st.fractions(min_value=0, max_value=1, max_denominator=1000).filter(
    lambda f: all(p in (2, 5) for p in _prime_factors(f.denominator))))
def test_format_decimal_round_trips(value):
    text = format_decimal(value)
    assert Fraction(text) == value
    assert "." in text and not text.endswith("0") or text.endswith(".0")


def _prime_factors(n):
    out, d = set(), 2
    while n > 1:
        while n % d == 0:
            out.add(d)
            n //= d
        d += 1
    return out


@given(st.lists(st.integers(1, 512), min_size=1, max_size=6))
def test_every_k_gives_one_metric_in_order(ks):
    pm = kpass.make_plugin_manager(load_entry_points=False)
    parsed = kpass.parse_metric_specs("pass@" + ",".join(map(str, ks)), plugin_manager=pm)
    assert [s.k for s in parsed] == list(dict.fromkeys(ks))
