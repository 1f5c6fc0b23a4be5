"""Untrusted regular expressions (issue #15, item 3): refused before anything is read, or timed."""

from __future__ import annotations

import pytest

from kpass.cli import main
from kpass.data.patterns import BoundedPattern, check_pattern
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
