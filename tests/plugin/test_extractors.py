"""Answer extractors (kpass.host.extractors) and the checks every report makes (kpass.reports.sample_checks)."""

from __future__ import annotations

import pytest

import kpass
from kpass.host.extractors import EXTRACTOR_COLUMN, last_boxed_content
from kpass.host.lookups import apply_answer_extractor, resolve_answer_extractor
from kpass.reports.sample_checks import identical_samples_notes


def _table(outputs_by_problem, *, key="output", correct=None, gold="7"):
    records = []
    for problem, outputs in enumerate(outputs_by_problem):
        for index, text in enumerate(outputs):
            verdict = correct[problem][index] if correct else False
            records.append({"model": "m", "task": "t", "problem_id": str(problem), "sample_index": index,
                            "correct": verdict, "gold": gold, "metadata": {key: text}})
    return kpass.SampleTable.from_records(records, source="test")


@pytest.mark.parametrize("text, expected", [
    (r"so \boxed{7}.", "7"),
    (r"\boxed{ \frac{1}{2} } then \boxed{3}", "3"),
    (r"$x = \boxed{\frac{1}{2}}$", r"\frac{1}{2}"),
    (r"\boxed{7 and an unclosed \boxed{8", None),  # neither box closes
    ("no box", None),
    (r"\fbox{9}", "9"),
])
def test_last_boxed_content(text, expected):
    assert last_boxed_content(text) == expected


def test_builtin_extractors_are_registered_through_the_hook():
    registry = kpass.get_registry()
    assert {"boxed", "regex"} <= set(registry.extractors)
    assert registry.owners[("extractor", "boxed")] == "kpass.builtin"
    assert resolve_answer_extractor("boxed").extract(r"\boxed{ 1 2 }") == "12"
    regex = resolve_answer_extractor("regex:answer is (-?[0-9]+)")
    assert regex.extract("answer is 3, no: answer is -4.") == "-4"  # the last match, its first group
    assert regex.extract("nothing") is None
    assert resolve_answer_extractor("regex:[0-9]+").extract("a 12 b 34") == "34"


@pytest.mark.parametrize("spec, message", [
    ("nope", r"unknown answer extractor 'nope'; registered: .*boxed.*regex"),
    ("regex:(", r"argument --answer-extractor: invalid regular expression '\('"),
    ("regex:(a+)+$", r"argument --answer-extractor: refusing regular expression '\(a\+\)\+\$': it nests"),
    ("regex", r"answer extractor 'regex' needs a pattern"),
    ("boxed:x", r"answer extractor 'boxed' takes no argument"),
    ("", r"an answer extractor spec is a name or name:argument"),
])
def test_bad_extractor_specs_are_usage_errors(spec, message):
    with pytest.raises(kpass.UsageError, match=message):
        resolve_answer_extractor(spec)


def test_apply_answer_extractor_votes_over_answer_classes():
    outputs = [[r"so \boxed{7}", r"\boxed{ 8 }", r"$\boxed{8}$", "no idea"]]
    table = _table(outputs, correct=[[True, False, False, False]])
    extracted = apply_answer_extractor(table, "boxed")
    records = extracted.to_records()
    assert [r["answer"] for r in records] == ["7", "8", "8", None]
    assert {r[EXTRACTOR_COLUMN] for r in records} == {"boxed"}
    # 8 has two votes against the gold answer's one: cons@4 is 0 (a raw-text vote would give 1)
    assert kpass.compute_report(extracted, "cons@4", rng=0).rows[0].estimate == 0
    with pytest.raises(kpass.DataError, match=r"the samples keep no generation text"):
        apply_answer_extractor(kpass.SampleTable.from_records(
            [{"model": "m", "task": "t", "problem_id": "0", "sample_index": 0, "correct": True}], source="x"), "boxed")


def test_cli_answer_extractor_is_checked_before_reading(tmp_path, capsys):
    from kpass.cli import main

    missing = tmp_path / "missing.jsonl"
    assert main(["report", str(missing), "--answer-extractor", "nope"]) == 2
    assert "unknown answer extractor 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("key", ["output", "completion"])  # lm-eval's and Inspect's readers
def test_identical_samples_get_a_note_in_every_report(key):
    trap = _table([["same"] * 4, ["same"] * 4, ["a", "b", "a", "a"]], key=key)
    (note,) = identical_samples_notes(trap)
    assert note.kind == "seed-trap" and note.rows == ("m / t (2 of 3 problems, 4 identical samples)",)
    assert note.text.startswith("most problems' samples are identical generations")
    report = kpass.compute_report(trap, "pass@1", rng=0)
    assert note in report.notes and note.as_dict() in report.as_dict()["notes"]
    assert identical_samples_notes(_table([["same"] * 4, ["a", "b", "a", "a"]], key=key)) == []  # half is not most
    assert identical_samples_notes(_table([["x"], ["y"]], key=key)) == []  # one sample says nothing
