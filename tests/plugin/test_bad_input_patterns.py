"""Untrusted regular expressions (issue #15, item 3): refused before anything is read, or timed."""

from __future__ import annotations

import pytest

from kpass.cli import main
from kpass.data.patterns import BoundedPattern, check_pattern, regex_budget
from kpass.errors import DataError, UsageError


@pytest.mark.parametrize("pattern, message", [
    ("(", "invalid regular expression '\\('"),
    ("(a+)+$", "nests unbounded quantifiers"),
])
def test_answer_pattern_is_checked_before_anything_is_read(tmp_path, capsys, pattern, message):
    missing = tmp_path / "never-read.jsonl"   # reading it would be a different error
    code = main(["budget", str(missing), "--tokenizer", "tiktoken:cl100k_base", "--answer-pattern", pattern])
    err = capsys.readouterr().err
    assert code == 2
    assert "--answer-pattern" in err and message.replace("\\", "") in err
    assert "no such file" not in err and "Traceback" not in err


@pytest.mark.parametrize("pattern", ["(a+)+", "(a*)*b", r"(\w+\s?)*$", "(x{2,})+", "((ab)+c?)*", "(?=(a+)+)"])
def test_nested_quantifiers_are_refused(pattern):
    with pytest.raises(DataError, match="nests unbounded quantifiers") as error:
        check_pattern(pattern, source="results.json", field="regex_pattern")
    assert "results.json" in str(error.value) and repr(pattern) in str(error.value)


@pytest.mark.parametrize("pattern", [r"#### (\-?[0-9\.\,]+)", r"(-?[$0-9.,]{2,})|(-?[0-9]+)", r"(?:ab)+c",
                                     r"The answer is (\-?[0-9]+)", r"\b([A-D])\b"])
def test_ordinary_patterns_pass(pattern):
    assert check_pattern(pattern) == pattern


def test_a_slow_call_is_stopped_with_file_and_pattern():
    bounded = BoundedPattern("(?:x|xx)+y", source="run.json", field="filter 'f'", timeout=0.1)
    with pytest.raises(DataError, match=r"run.json, field 'filter 'f'': regular expression '\(\?:x\|xx\)\+y' ran "
                                        r"longer than 0.1 s"):
        bounded.findall("x" * 5000)
    with pytest.raises(UsageError, match="ran longer"):
        BoundedPattern("(?:x|xx)+y", timeout=0.1).search("x" * 5000)


def test_bounded_pattern_matches_like_re():
    import re

    for pattern, text in [(r"(\d+)-(\d+)", "1-2 and 33-44"), (r"a|b", "cab"), (r"(?i)ANSWER: (\w+)", "answer: x")]:
        bounded, plain = BoundedPattern(pattern), re.compile(pattern)
        assert bounded.findall(text) == plain.findall(text)
        assert [m.span() for m in bounded.finditer(text)] == [m.span() for m in plain.finditer(text)]
        assert bounded.sub("_", text) == plain.sub("_", text) and bounded.groups == plain.groups


# ------------------------------------------------------------------ issue #34: one guard, one budget per run


def test_answer_extractor_regex_has_the_guard_of_answer_pattern(tmp_path, capsys):
    missing = tmp_path / "never-read.jsonl"
    code = main(["report", str(missing), "--answer-extractor", "regex:(a+)+$", "-m", "cons@1"])
    err = capsys.readouterr().err
    assert code == 2
    assert "argument --answer-extractor: refusing regular expression '(a+)+$'" in err
    assert "no such file" not in err and "Traceback" not in err


def test_answer_extractor_regex_is_timed():
    from kpass.host.lookups import resolve_answer_extractor

    extract = resolve_answer_extractor("regex:(?:x|xx)+y").extract
    with regex_budget(0.3), pytest.raises(UsageError, match=r"argument --answer-extractor: regular expression "
                                                            r"'\(\?:x\|xx\)\+y' used up the run's time budget"):
        extract("x" * 34)  # seconds on its own


def test_the_budget_is_shared_by_every_call_and_names_how_to_raise_it():
    bounded = BoundedPattern("(?:x|xx)+y", source="results.json", field="filter 'f'")
    with regex_budget(0.4) as budget, pytest.raises(DataError) as error:
        for _ in range(100):  # about 0.1 s each: the fifth call runs out
            bounded.search("x" * 24)
    message = str(error.value)
    assert "results.json" in message and "(0.4 s, regex_budget(0.4))" in message
    assert "--regex-budget SECONDS or KPASS_REGEX_BUDGET=SECONDS" in message
    assert 0.4 <= budget.spent < 1.0


def test_the_budget_comes_from_the_environment_and_bad_values_are_refused(monkeypatch):
    monkeypatch.setenv("KPASS_REGEX_BUDGET", "0.25")
    with regex_budget() as budget:
        assert budget.seconds == 0.25 and budget.origin == "KPASS_REGEX_BUDGET=0.25"
    for text in ("abc", "0", "-1", "nan", "inf"):
        monkeypatch.setenv("KPASS_REGEX_BUDGET", text)
        with pytest.raises(UsageError, match=f"KPASS_REGEX_BUDGET: .*got '{text}'"):
            with regex_budget():
                pass


def test_ordinary_calls_cost_next_to_nothing_of_the_budget():
    bounded = BoundedPattern(r"#### (\-?[0-9\.\,]+)")
    with regex_budget(60) as budget:
        for _ in range(10_000):
            bounded.search("so the answer is #### 42 and that is all " * 5)
    assert budget.spent < 1.0  # 10,000 generations of a shipped gsm8k pattern
