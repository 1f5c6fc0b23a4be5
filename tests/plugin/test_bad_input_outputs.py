"""Where outputs go (issue #15, item 1): regular files replaced atomically, devices and FIFOs
written through, symbolic links followed, every failure one line with the right exit code, and
several outputs all prepared before any is replaced."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kpass.cli import main
from kpass.cli import output as output_module
from kpass.cli.output import write_output, write_outputs
from kpass.errors import OutputError


def write_samples(path: Path) -> Path:
    with open(path, "w") as handle:
        for model, rate in (("base", 2), ("tuned", 3)):
            for j in range(6):
                for s in range(4):
                    handle.write(json.dumps({"model": model, "task": "t", "problem_id": f"p{j}",
                                             "sample_index": s, "correct": (j + s) % rate == 0}) + "\n")
    return path


@pytest.fixture
def samples(tmp_path):
    return write_samples(tmp_path / "samples.jsonl")


def run(*argv, capsys):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(err: str, path) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and str(path) in lines[0]
    return lines[0]


def test_regular_file_is_replaced_and_keeps_its_mode(samples, tmp_path, capsys):
    target = tmp_path / "out.md"
    target.write_text("old")
    target.chmod(0o640)
    code, _, err = run("report", samples, "-f", "markdown", "-o", target, capsys=capsys)
    assert code == 0, err
    assert target.read_text().startswith("| model |")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".kpass-")] == []


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can replace /dev/null; the FIFO test covers others")
def test_dev_null_as_root_stays_a_character_device(samples, capsys):
    restore_dev_null()  # the machine is shared: an older kpass elsewhere may have replaced it
    before = os.stat("/dev/null")
    try:
        code, _, err = run("report", samples, "-o", "/dev/null", capsys=capsys)
        assert code == 0, err
        after = os.stat("/dev/null")
        assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    finally:
        restore_dev_null()


def restore_dev_null() -> None:
    """Put back the character device 1:3 if /dev/null is anything else (root only)."""
    if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        os.unlink("/dev/null")
        os.mknod("/dev/null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        os.chmod("/dev/null", 0o666)


def test_fifo_is_written_through(samples, tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()))
    reader.start()
    code, _, err = run("report", samples, "-f", "csv", "-o", fifo, capsys=capsys)
    reader.join(timeout=30)
    assert code == 0, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received and received[0].startswith(b"model,task,metric")


def test_process_substitution_is_written_through(samples, tmp_path):
    script = (f"{sys.executable} -m kpass.cli report {samples} -f csv -o >(cat > {tmp_path / 'copy.csv'}); "
              "rc=$?; wait; exit $rc")
    finished = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    for _ in range(100):  # the `cat` of the substitution may finish after bash
        if (tmp_path / "copy.csv").exists() and (tmp_path / "copy.csv").read_text():
            break
        threading.Event().wait(0.05)
    assert (tmp_path / "copy.csv").read_text().startswith("model,task,metric")


def test_symlink_is_followed_and_kept(samples, tmp_path, capsys):
    target = tmp_path / "real.csv"
    target.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    code, _, err = run("report", samples, "-f", "csv", "-o", link, capsys=capsys)
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("model,task,metric")


def test_output_onto_a_directory_is_one_line(samples, tmp_path, capsys):
    code, _, err = run("report", samples, "-o", tmp_path, capsys=capsys)
    assert code == 2
    assert one_line_error(err, tmp_path).endswith("it is a directory")


def test_missing_directory_is_one_line(samples, tmp_path, capsys):
    code, _, err = run("report", samples, "-o", tmp_path / "nodir" / "x.md", capsys=capsys)
    assert code == 2
    assert "does not exist" in one_line_error(err, tmp_path / "nodir" / "x.md")


def test_permission_denied_is_one_line(samples, capsys):
    # /sys refuses new files even to root: a real permission error
    code, _, err = run("report", samples, "-o", "/sys/kpass-report.md", capsys=capsys)
    assert code == 2
    assert "permission denied" in one_line_error(err, "/sys/kpass-report.md")


def test_read_only_file_system_is_one_line(samples, tmp_path, capsys, monkeypatch):
    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(output_module.tempfile, "mkstemp", read_only)
    code, _, err = run("report", samples, "-o", tmp_path / "x.md", capsys=capsys)
    assert code == 2
    assert one_line_error(err, tmp_path / "x.md").endswith("read-only file system")


def test_full_disk_is_one_line_and_leaves_the_old_file(samples, tmp_path, capsys, monkeypatch):
    target = tmp_path / "x.md"
    target.write_text("old")

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(output_module, "_write_all", full)
    code, _, err = run("report", samples, "-o", target, capsys=capsys)
    assert code == 1
    assert one_line_error(err, target).endswith("no space left on the device")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".kpass-")] == []


def test_full_device_is_one_line(samples, capsys):
    code, _, err = run("report", samples, "-o", "/dev/full", capsys=capsys)
    assert code == 1
    assert one_line_error(err, "/dev/full").endswith("no space left on the device")


def test_too_long_name_is_one_line(samples, tmp_path, capsys):
    target = tmp_path / ("a" * 300 + ".md")
    code, _, err = run("report", samples, "-o", target, capsys=capsys)
    assert code == 2
    assert "file name too long" in one_line_error(err, target)


def test_several_outputs_are_all_prepared_before_any_is_replaced(samples, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("a.md").write_text("old")
    code, _, err = run("leaderboard", samples, "--n-resamples", "50", "--no-curves",
                       "-o", "a.md", "-o", "nodir/x.html", capsys=capsys)
    assert code == 2
    assert "nodir/x.html" in one_line_error(err, "nodir/x.html")
    assert Path("a.md").read_text() == "old"


def test_a_failure_while_preparing_the_second_output_replaces_nothing(tmp_path, monkeypatch):
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    first.write_text("old")
    calls = []
    real = output_module._write_all

    def full_on_second(fd, data):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, data)

    monkeypatch.setattr(output_module, "_write_all", full_on_second)
    with pytest.raises(OutputError, match="b.md: no space left"):
        write_outputs([(first, "new a"), (second, "new b")])
    assert first.read_text() == "old" and not second.exists()


def test_writer_function_output_through_a_fifo(tmp_path):
    fifo = tmp_path / "plot.svg"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()))
    reader.start()
    write_output(fifo, lambda temporary: Path(temporary).write_bytes(b"<svg/>"))
    reader.join(timeout=30)
    assert received == [b"<svg/>"]
