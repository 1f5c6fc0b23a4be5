"""The ``kpass`` command: formats, atomic output, plots, progress, exit codes, the bundled example
and the output shown in README.md and docs/ (which must be what the command really prints)."""

from __future__ import annotations

import csv
import io
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import kpass
from kpass import cli
from kpass.cli.progress import ProgressBar

from .conftest import make_records

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "sample_tables" / "two_models.jsonl"
KPASS = pathlib.Path(sys.executable).with_name("kpass")


def test_formats(run_cli):
    code, table_out, _ = run_cli("report", EXAMPLE, "-m", "pass@1,8", "--method", "t")
    assert code == 0
    assert table_out.splitlines()[0].split()[:4] == ["model", "task", "metric", "estimate"]
    assert "base   logic  pass@8" in table_out and "logic-03, logic-11, logic-19" in table_out
    code, md, _ = run_cli("report", EXAMPLE, "-m", "pass@1,8", "--method", "t", "--format", "markdown")
    assert code == 0 and md.startswith("| model | task | metric |") and "|:---|" in md
    code, text, _ = run_cli("report", EXAMPLE, "-m", "pass@1,8", "--method", "t", "-f", "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 8 and rows[0]["metric"] == "pass@1" and rows[0]["method"] == "t"
    code, text, _ = run_cli("report", EXAMPLE, "-m", "pass@1,8", "--method", "t", "-f", "json")
    data = json.loads(text)
    by_csv = {(r["model"], r["task"], r["metric"]): float(r["estimate"]) for r in rows}
    by_json = {(r["model"], r["task"], r["metric"]): r["estimate"] for r in data["rows"]}
    assert by_csv == by_json
    assert data["exclusions"][0]["problem_ids"] == ["logic-03", "logic-11", "logic-19"]


def test_cli_numbers_equal_compute_report(run_cli):
    code, text, _ = run_cli("report", EXAMPLE, "-m", "pass@1,8", "cons@4", "--seed", "7", "-f", "json")
    assert code == 0
    pm = kpass.make_plugin_manager(load_entry_points=False)
    table = kpass.read_samples(EXAMPLE, plugin_manager=pm)
    report = kpass.compute_report(table, "pass@1,8 cons@4", rng=7, plugin_manager=pm)
    assert json.loads(text)["rows"] == [row.as_dict() for row in report.rows]


def test_output_is_written_atomically(run_cli, tmp_path, write_jsonl):
    target = tmp_path / "report.json"
    code, out, err = run_cli("report", EXAMPLE, "-m", "pass@1", "-f", "json", "-o", target)
    assert code == 0 and out == "" and f"wrote {target}" in err
    assert json.loads(target.read_text())["metrics"] == ["pass@1"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    before = target.read_bytes()
    bad = write_jsonl(['{"model": "m"'], name="bad.jsonl")
    code, _, _ = run_cli("report", bad, "-f", "json", "-o", target)
    assert code == 1 and target.read_bytes() == before  # a failed run leaves the old file alone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "report.json"]  # no temporary left


def test_write_atomically_removes_the_temporary_on_failure(tmp_path):
    def explode(temporary):
        pathlib.Path(temporary).write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        cli.write_atomically(tmp_path / "x.txt", explode)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(cli.UsageError, match="does not exist"):
        cli.write_atomically(tmp_path / "missing" / "x.txt", "text")


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plots(run_cli, tmp_path, suffix):
    report_plot = tmp_path / f"report{suffix}"
    code, _, err = run_cli("report", EXAMPLE, "-m", "pass@1,2,4,8", "g-pass@8_0.5,1.0", "cons@4", "--method", "t",
                           "--plot", report_plot)
    assert code == 0, err
    compare_plot = tmp_path / f"compare{suffix}"
    code, _, err = run_cli("compare", EXAMPLE, "-b", "base", "-m", "pass@1,4", "--method", "t",
                           "--intersection", "--plot", compare_plot)
    assert code == 0, err
    for path in (report_plot, compare_plot):
        head = path.read_bytes()[:200]
        assert head.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in path.read_bytes()[:2000]
    code, _, err = run_cli("report", EXAMPLE, "--plot", tmp_path / "plot.pdf")
    assert code == 2 and "must end in .png or .svg" in err


def test_compare_two_files_without_baseline(run_cli, write_jsonl):
    first = write_jsonl(make_records(model="old", n=6), name="old.jsonl")
    second = write_jsonl(make_records(model="new", n=6, correct=lambda j, s: s < 4), name="new.jsonl")
    code, out, err = run_cli("compare", first, second, "-m", "pass@1", "--method", "t")
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.startswith("t "))
    assert "new" in line and "old" in line and "+0.1667" in line
    code, _, err = run_cli("compare", first, "-m", "pass@1")
    assert code == 2 and "give --baseline MODEL" in err
    code, _, err = run_cli("compare", first, second, "-b", "nobody")
    assert code == 2 and "--baseline 'nobody' is not a model in the input; models: old, new" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "the following arguments are required: COMMAND"),
        (("report",), "the following arguments are required: FILE"),
        (("report", EXAMPLE, "-m", "pass@0"), "k must be a positive integer"),
        (("report", EXAMPLE, "-m", "nonsense@3"), "valid metric specs"),
        (("report", "no/such/file.jsonl"), "no such file: no/such/file.jsonl"),
        (("report", EXAMPLE, "--confidence", "1.5"), "--confidence must be in the open interval (0, 1); got 1.5."),
        (("report", EXAMPLE, "--format", "xml"), "invalid choice: 'xml'"),
        (("report", EXAMPLE, "--method", "magic"), "--method must be one of"),
        (("report", EXAMPLE, "--reader", "nope"), "unknown reader 'nope'"),
        (("power",), "one of the arguments --effect --problems is required"),
    ],
)
def test_usage_errors_exit_2(run_cli, args, message):
    code, out, err = run_cli(*args)
    assert code == 2 and out == ""
    assert message in err


def test_help_and_version_exit_0(run_cli):
    code, out, _ = run_cli("--version")
    assert code == 0 and out.strip() == f"kpass {kpass.__version__}"
    code, out, _ = run_cli("report", "--help")
    assert code == 0 and "--cluster-by" in out


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_only_on_a_terminal(run_cli, monkeypatch):
    code, _, err = run_cli("report", EXAMPLE, "-m", "pass@1", "--method", "t")
    assert code == 0 and "\r" not in err and err == ""
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert cli.main(["report", str(EXAMPLE), "-m", "pass@1", "--method", "t"]) == 0
    drawn = terminal.getvalue()
    assert "\r" in drawn and "computing" in drawn and drawn.endswith("\r\x1b[K")
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert cli.main(["report", str(EXAMPLE), "-m", "pass@1", "--method", "t", "--no-progress"]) == 0
    assert terminal.getvalue() == ""


def test_progress_bar_drawing():
    stream = FakeTerminal()
    with ProgressBar("work", 4, stream=stream, min_interval=0) as bar:
        for done in range(1, 5):
            bar.update(done)
    assert "work [" in stream.getvalue() and "4/4" in stream.getvalue()
    quiet = io.StringIO()
    ProgressBar("work", 4, stream=quiet).update(2)
    assert quiet.getvalue() == ""


def test_installed_console_script_on_the_bundled_example(tmp_path):
    # the real `kpass` executable, with every installed entry-point plugin loaded
    env = {k: v for k, v in os.environ.items() if k != "KPASS_LOAD_PLUGINS"}
    completed = subprocess.run([str(KPASS), "report", str(EXAMPLE), "-m", "pass@1,8", "cons@8", "--method", "t"],
                               capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert "tuned  logic  cons@8" in completed.stdout
    completed = subprocess.run([str(KPASS), "report", str(tmp_path / "missing.jsonl")], capture_output=True,
                               text=True, env=env, cwd=tmp_path, timeout=120)
    assert completed.returncode == 2 and "no such file" in completed.stderr


def _readme_blocks():
    # README.md and every docs/ page: each ```console block of a `kpass` command shows its real output
    text = "".join(page.read_text() for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))])
    return re.findall(r"```console\n\$ (kpass [^\n]+)\n(.*?)```", text, flags=re.S)


def test_readme_shows_real_output(run_cli, monkeypatch):
    blocks = _readme_blocks()
    commands = [command for command, _ in blocks]
    assert any(c.startswith("kpass report") for c in commands) and any(c.startswith("kpass compare") for c in commands)
    monkeypatch.chdir(REPO)
    for command, shown in blocks:
        code, out, err = run_cli(*command.split()[1:])
        assert code == 0, err
        assert out == shown, (f"documented output of `{command}` is stale; regenerate it with "
                              f"`.venv/bin/{command}` from the repository root")


def test_a_system_file_not_found_names_the_path(monkeypatch, capsys):
    """An OSError from the system (errno, message, path) prints its message and path, not its errno."""
    import importlib

    cli_main = importlib.import_module("kpass.cli.main")

    def missing(args):
        raise FileNotFoundError(2, "No such file or directory", "/no/such/place")

    command = cli_main.SUBCOMMANDS["report"]
    monkeypatch.setitem(cli_main.SUBCOMMANDS, "report", command._replace(run=missing))
    assert cli_main.main(["report", "x.jsonl"]) == cli_main.EXIT_USAGE
    assert capsys.readouterr().err.strip() == "kpass report: error: No such file or directory: /no/such/place"


def test_only_the_command_asked_for_gets_its_arguments():
    """Parsing ``kpass report ...`` builds report's arguments alone; every subcommand is still
    listed, and without a command (``kpass --help``) every one gets its arguments."""
    from kpass.cli.main import SUBCOMMANDS, build_parser

    def flags(parser):
        subcommands = next(action for action in parser._actions if action.dest == "command")
        assert list(subcommands.choices) == list(SUBCOMMANDS)
        return {name: {option for action in sub._actions for option in action.option_strings}
                for name, sub in subcommands.choices.items()}

    only_report, every = flags(build_parser("report")), flags(build_parser())
    assert only_report["report"] == every["report"] and "--cluster-by" in only_report["report"]
    assert only_report["compare"] == {"-h", "--help"} and "--baseline" in every["compare"]
