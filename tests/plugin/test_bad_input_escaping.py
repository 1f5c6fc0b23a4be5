"""Hostile names made inert in every output format (issue #15, item 2)."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kpass.cli import main
from kpass.render.escape import csv_cell, html_json, markdown_text, terminal_text

FORMULA = "=cmd|' /C calc'!A0"
HYPERLINK = '@HYPERLINK("http://x.invalid","y")'
TERMINAL = "evil\x1b[2J\x1b]52;c;aGVsbG8=\x07\x9b31m"
MARKUP = "<img src=x onerror=alert(1)>"
MODELS = (FORMULA, HYPERLINK, TERMINAL, MARKUP, "+SUM(1,1)", "-2+3", "\tcmd", "\rcmd")


@pytest.fixture
def samples(tmp_path):
    path = tmp_path / "hostile.jsonl"
    with open(path, "w") as handle:
        for shift, model in enumerate(MODELS):
            for j in range(4):
                for s in range(3):
                    handle.write(json.dumps({"model": model, "task": "t", "problem_id": f"p{j}",
                                             "sample_index": s, "correct": (j + s + shift) % 3 == 0}) + "\n")
    return path


def output(capsys, *argv) -> str:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def text_cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


@pytest.mark.parametrize("command", [["report"], ["compare", "--baseline", FORMULA], ["leaderboard", "--no-curves"]])
def test_csv_outputs_have_no_formula_cells(samples, capsys, command):
    extra = ["--n-resamples", "50"] + (["-f", "csv"] if command[0] != "leaderboard" else ["--format", "csv"])
    text = output(capsys, command[0], samples, *command[1:], *extra)
    cells = text_cells(text)
    for cell in cells:
        if cell.startswith(("=", "+", "-", "@", "\t", "\r")):
            float(cell)  # only numbers may start so (negative numbers stay numbers)
    assert "'" + FORMULA in cells and "'" + HYPERLINK in cells and "'+SUM(1,1)" in cells
    assert "'-2+3" in cells and "'\tcmd" in cells and "\\x0dcmd" in cells
    assert not any("\r" in cell or "\x1b" in cell for cell in cells)


def test_csv_cell_keeps_numbers():
    assert [csv_cell(v) for v in ("-0.25", "+1e-5", "-inf", -3, 0.5, None, "gpt-4", "-x")] == \
        ["-0.25", "+1e-5", "-inf", -3, 0.5, None, "gpt-4", "'-x"]


def test_budget_csv_has_no_formula_cells(samples, capsys, tmp_path):
    path = tmp_path / "tokens.jsonl"
    with open(path, "w") as handle:
        for j in range(4):
            for s in range(3):
                handle.write(json.dumps({"model": FORMULA, "task": "t", "problem_id": f"p{j}", "sample_index": s,
                                         "correct": s == 0, "finished": True, "output_tokens": 10 + s}) + "\n")
    text = output(capsys, "budget", path, "--budgets", "20", "--format", "csv", "--n-resamples", "50")
    assert "'" + FORMULA in text_cells(text) and FORMULA not in text_cells(text)


@pytest.mark.parametrize("command", [["report"], ["leaderboard", "--no-curves"]])
def test_markdown_escapes_html(samples, capsys, command):
    text = output(capsys, command[0], samples, *command[1:], "--n-resamples", "50",
                  *(["-f", "markdown"] if command[0] == "report" else []))
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)>" in text
    assert "\x1b" not in text and "\\x1b[2J" in text


def test_table_output_shows_control_characters_escaped(samples, capsys):
    text = output(capsys, "report", samples, "--n-resamples", "50")
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert "evil\\x1b[2J\\x1b]52;c;aGVsbG8=\\x07\\x9b31m" in text
    lines = text.splitlines()
    assert len({len(line.split("  t  ")[0]) for line in lines if "  t  " in line}) == 1  # still aligned


def test_write_stdout_escapes_on_a_terminal(monkeypatch, capsys):
    from kpass.cli.output import write_stdout

    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    write_stdout("a\x1b]52;c;eA==\x07b\n\tc\n")
    assert capsys.readouterr().out == "a\\x1b]52;c;eA==\\x07b\n\tc\n"


def test_html_json_escapes_markup():
    text = html_json({"model": "<!--<script></script>&\u2028"})
    assert not set("<>&") & set(text) and "\u2028" not in text
    assert json.loads(text) == {"model": "<!--<script></script>&\u2028"}


@given(st.text())
def test_escapes_are_inert_for_any_text(text):
    shown = terminal_text(text)
    assert not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in shown)
    markdown = markdown_text(text)
    # no raw HTML can start (a tag, a comment, an autolink) and the only references are kpass's own
    assert not re.search(r"<[A-Za-z/!?]", markdown) and "|" not in markdown.replace("\\|", "")
    assert set(re.findall(r"&#?[A-Za-z0-9]+;", markdown)) <= {"&lt;", "&amp;"}
    cell = csv_cell(text)
    assert "\r" not in cell
    if cell.startswith(("=", "+", "-", "@", "\t")):
        float(cell)
    assert json.loads(html_json(text)) == text
