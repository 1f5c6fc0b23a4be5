"""Notes as data (issue #35, point 4): the :class:`kpass.Note` record, its kinds and their docs,
rendering grouped by kind in every medium, and the note budget of the bundled examples."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

import kpass
from kpass.notes import NOTE_KINDS, Note, as_note, as_notes, warning_note
from kpass.render.escape import markdown_text
from kpass.render.notes import MAX_ROWS_SHOWN, grouped_notes, note_lines, notes_block

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "sample_tables"

#: At most this many note lines after the bundled examples' ``kpass report`` and ``kpass compare``.
EXAMPLE_NOTE_BUDGET = 8


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_kind_links_to_a_doc_section_that_exists():
    for kind in NOTE_KINDS.values():
        page, _, anchor = kind.doc.partition("#")
        path = REPO / page
        assert path.is_file(), kind
        anchors = {_anchor(line.lstrip("#")) for line in path.read_text().splitlines() if line.startswith("#")}
        assert anchor in anchors, (kind.name, sorted(anchors))
        assert Note(kind.name, (), "x").doc == kind.doc


def test_the_note_record():
    note = Note("near-end", ("base / arith / pass@8",), "the mean lies\nnear an end")
    assert note.text == "the mean lies near an end"  # one line
    assert note.as_dict() == {"kind": "near-end", "rows": ["base / arith / pass@8"],
                              "text": "the mean lies near an end", "doc": "docs/notes.md#near-end"}
    assert json.loads(json.dumps(note.as_dict())) == note.as_dict()
    assert as_note(note.as_dict()) == note
    assert kpass.Note is Note
    with pytest.raises(ValueError, match="`kind` must be one of"):
        Note("surprise", (), "x")
    with pytest.raises(TypeError, match="`rows` must be a tuple of str"):
        Note("reader", "base", "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a note must be a str or a kpass.Note"):
        as_note(3)  # type: ignore[arg-type]


def test_plain_strings_become_reader_notes_their_file_their_row():
    assert as_note("run.eval: 3 unscored epochs left out") == Note("reader", ("run.eval",), "3 unscored epochs left out")
    assert as_note("logs/: task x skipped") == Note("reader", ("logs/",), "task x skipped")
    assert as_note("pass@1: something") == Note("reader", (), "pass@1: something")  # not a file name
    assert as_notes(["a", "a", "b"], kind="metric") == [Note("metric", (), "a"), Note("metric", (), "b")]


def test_warnings_become_notes_of_their_class():
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("every per-problem value is identical", kpass.DegenerateIntervalWarning, stacklevel=1)
        warnings.warn("a bound from another interval", kpass.IntervalMethodWarning, stacklevel=1)
        warnings.warn(kpass.few_clusters_note(3), kpass.IntervalMethodWarning, stacklevel=1)
    kinds = [warning_note(w, ("r",)).kind for w in caught]
    assert kinds == ["degenerate", "interval-rule", "few-clusters"]


def test_one_line_per_kind_and_text_listing_rows_once():
    notes = [Note("near-end", ("a",), "near"), Note("mixed-samples", ("b (6 to 16)",), "vary"),
             Note("near-end", ("c",), "near"), Note("near-end", ("a",), "near"), "x.jsonl: left out"]
    assert [(line.kind, line.rows) for line in grouped_notes(notes)] == [
        ("near-end", ["a", "c"]), ("mixed-samples", ["b (6 to 16)"]), ("reader", ["x.jsonl"])]
    assert note_lines(notes) == [
        "[near-end] a; c: near (docs/notes.md#near-end)",
        "[mixed-samples] b (6 to 16): vary (docs/notes.md#mixed-samples)",
        "[reader] x.jsonl: left out (docs/notes.md#reader)"]
    many = [Note("budget", (f"m{i}",), "no curve") for i in range(MAX_ROWS_SHOWN + 3)]
    (line,) = note_lines(many)
    assert line.startswith("[budget] m0; m1;") and "; ... and 3 more: no curve" in line
    assert notes_block([]) == ""
    assert notes_block(notes).splitlines()[:2] == ["", "Notes:"]


def test_each_medium_escapes_its_own_way():
    note = Note("reader", ("<img src=x>",), "=cmd() & Cameron & Miller, n >= k | \x1b[2J")
    (plain,) = note_lines([note], "table")
    assert "<img src=x>" in plain and "Cameron & Miller, n >= k | " in plain and "\x1b" not in plain
    (markdown,) = note_lines([note], "markdown")
    assert "&lt;img src=x>" in markdown and "Cameron & Miller, n >= k \\| " in markdown
    (page,) = note_lines([note], "html")
    assert "&lt;img src=x&gt;" in page and "Cameron &amp; Miller" in page and "<img" not in page
    (cell,) = note_lines([Note("reader", (), "=cmd()")], "csv")
    assert not cell.startswith("=")


def test_markdown_escapes_only_what_starts_html():
    for hostile, escaped in (("<script>", "&lt;script>"), ("</b>", "&lt;/b>"), ("<!-- x", "&lt;!-- x"),
                             ("<https://x>", "&lt;https://x>"), ("&amp;", "&amp;amp;"), ("&#60;", "&amp;#60;")):
        assert markdown_text(hostile) == escaped
    for plain in ("n >= k", "a < b", "Cameron & Miller", "a&b"):
        assert markdown_text(plain) == plain


def _note_lines(out: str) -> list[str]:
    _, _, notes = out.partition("\nNotes:\n")
    return [line for line in notes.splitlines() if line.strip()]


EXAMPLE_COMMANDS = [
    ["report", "two_models.jsonl", "--metrics", "pass@1,8", "cons@8", "g-pass@8_0.5"],
    ["compare", "two_models.jsonl", "--baseline", "base", "--metrics", "pass@1,8", "cons@8"],
    ["report", "rl_and_base.jsonl", "-m", "pass@32", "pass@256,1024[extrapolate]"],
    ["report", "rl_and_base.jsonl", "-m", "pass@1,8", "cons@8"],
    ["compare", "rl_and_base.jsonl", "--baseline", "base", "-m", "pass@1,8"],
    ["report", "checkpoints.jsonl", "--selected-on-this-set", "step-1000"],
    ["compare", "checkpoints.jsonl", "--baseline", "step-500", "-m", "pass@1,4"],
]


@pytest.mark.parametrize("command", EXAMPLE_COMMANDS, ids=" ".join)
def test_the_bundled_examples_print_few_note_lines_and_no_entity_or_escape(run_cli, command, monkeypatch):
    monkeypatch.chdir(EXAMPLES)
    code, out, err = run_cli(*command, "--n-resamples", "500")
    assert code == 0, err
    lines = _note_lines(out)
    assert len(lines) <= EXAMPLE_NOTE_BUDGET, "\n".join(lines)
    assert all(re.match(r"  \[[a-z-]+\] ", line) for line in lines), lines
    assert not re.search(r"&(amp|lt|gt|quot|#\d+);", out) and not re.search(r"\\x[0-9a-f]{2}", out)


def test_json_notes_are_records(run_cli, monkeypatch):
    monkeypatch.chdir(EXAMPLES)
    code, out, err = run_cli("report", "two_models.jsonl", "-m", "pass@8", "--format", "json", "--n-resamples", "200")
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert notes and all(set(note) == {"kind", "rows", "text", "doc"} for note in notes)
    (mixed,) = [note for note in notes if note["kind"] == "mixed-samples"]
    assert mixed["rows"] == ["base / logic (6 to 16)"]


def test_the_cluster_and_by_columns_are_not_listed_as_uninterpreted(run_cli, write_jsonl):
    records = [{"model": "m", "task": "t", "problem_id": f"p{j}", "sample_index": s, "correct": (j + s) % 3 == 0,
                "subject": f"s{j % 4}", "difficulty": "easy", "run": "r1"}
               for j in range(12) for s in range(2)]
    path = write_jsonl(records)
    code, out, err = run_cli("report", path, "--cluster-by", "subject", "--format", "json", "--n-resamples", "200")
    assert code == 0, err
    (extra,) = [note for note in json.loads(out)["notes"] if note["kind"] == "extra-columns"]
    assert extra["rows"] == ["difficulty"]  # not subject (the cluster), not run (kpass's own)
    code, out, err = run_cli("report", path, "--by", "model,subject", "--format", "json", "--n-resamples", "200")
    (extra,) = [note for note in json.loads(out)["notes"] if note["kind"] == "extra-columns"]
    assert extra["rows"] == ["difficulty"]


def _token_records(models=("a", "b"), n_problems=20, n_samples=6, seed=1):
    import numpy as np

    rng = np.random.default_rng(seed)
    records = []
    for model in models:
        for j in range(n_problems):
            p = rng.random()
            for s in range(n_samples):
                correct = bool(rng.random() < p)
                finished = correct or bool(rng.random() < 0.8)  # an unfinished sample ran to the limit, 100
                records.append({"model": model, "task": "t", "problem_id": f"p{j:02d}", "sample_index": s,
                                "correct": correct, "finished": finished, "subject": f"s{j % 4}",
                                "output_tokens": int(rng.integers(10, 100)) if finished else 100})
    return records


@pytest.mark.parametrize("command", [["budget", "--budgets", "50,100"],
                                     ["decompose", "--base", "a", "--model", "b", "--budgets", "50"]])
def test_budget_and_decompose_print_no_escape_and_group_their_notes(run_cli, write_jsonl, command):
    path = write_jsonl(_token_records())
    code, out, err = run_cli(command[0], path, *command[1:], "--cluster-by", "subject", "--n-resamples", "200")
    assert code == 0, err
    assert not re.search(r"\\x[0-9a-f]{2}", out) and not re.search(r"&(amp|lt|gt|quot|#\d+);", out)
    lines = _note_lines(out)
    assert lines and all(re.match(r"  \[[a-z-]+\] ", line) for line in lines), lines
    assert len({line.split("] ", 1)[1].split(": ", 1)[1] for line in lines}) == len(lines)  # each text once
