"""Where every output of the ``kpass`` command is written: files (``--output``, ``--plot``) and stdout.

The rules, one function each:

- A regular file (or a name that does not exist yet) is replaced atomically: the bytes go to a
  temporary file in the same directory, which is then renamed onto the name, so a failed run
  never leaves a half-written file. An existing file keeps its permissions.
- A symbolic link is followed: its target is replaced atomically and the link itself is kept.
- Anything else that exists (a character device such as ``/dev/null``, a FIFO, the pipe behind
  the shell's ``-o >(cat)``, a socket) is written through, never replaced.
- Several outputs of one command (``kpass leaderboard -o a.md -o b.html``) are all prepared
  (every temporary file written, every path checked) before the first one is replaced: either
  every file is written or none is touched.
- Whatever goes wrong (a directory, a missing directory, no permission, a read-only file system,
  a full disk, a name too long) is an :class:`~kpass.errors.OutputError`: one line naming the
  path and the reason; the ``kpass`` command prints it and exits 2 (1 for a full disk or an I/O
  error, which the data volume caused rather than the option).
- Text for stdout goes through :func:`write_stdout`, which escapes control characters when
  stdout is a terminal (see :func:`kpass.render.escape.terminal_text`).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Union

from kpass.errors import OutputError

__all__ = ["OutputData", "emit", "save_figure", "write_atomically", "write_output", "write_outputs", "write_stdout"]

#: What an output holds: text (written as UTF-8), bytes, or a function that writes the file
#: itself to the temporary path it is given (``lambda tmp: figure.savefig(tmp, format="png")``).
OutputData = Union[str, bytes, Callable[[str], None]]

_EXIT_USAGE = 2
_EXIT_DATA = 1

#: errno -> (reason, exit code) of the failures worth a sentence of their own.
_REASONS = {
    errno.EISDIR: ("it is a directory", _EXIT_USAGE),
    errno.ENOTDIR: ("a part of the path is not a directory", _EXIT_USAGE),
    errno.ENOENT: ("the directory does not exist", _EXIT_USAGE),
    errno.EACCES: ("permission denied", _EXIT_USAGE),
    errno.EPERM: ("operation not permitted", _EXIT_USAGE),
    errno.EROFS: ("read-only file system", _EXIT_USAGE),
    errno.ENAMETOOLONG: ("file name too long", _EXIT_USAGE),
    errno.ENOSPC: ("no space left on the device", _EXIT_DATA),
    errno.EDQUOT: ("disk quota exceeded", _EXIT_DATA),
    errno.EFBIG: ("file too large", _EXIT_DATA),
    errno.EIO: ("input/output error", _EXIT_DATA),
}


def output_failure(path: str, exc: OSError) -> OutputError:
    """The :class:`OutputError` for an ``OSError`` met while writing ``path``."""
    reason, code = _REASONS.get(exc.errno or 0, (exc.strerror or type(exc).__name__, _EXIT_USAGE))
    return OutputError(f"cannot write {path}: {reason}", exit_code=code)


@dataclass
class _Planned:
    """One output: the name given, the file really written and how (``through`` or atomically)."""

    path: str
    target: str
    through: bool
    mode: int | None = None
    temporary: str | None = None
    payload: bytes | None = None


def _plan(path: str | os.PathLike) -> _Planned:
    """Check ``path`` without writing anything (phase 1 of :func:`write_outputs`)."""
    name = os.fspath(path)
    if not name:
        raise OutputError("cannot write an output to an empty file name")
    try:
        status = os.stat(name)  # follows symbolic links
    except FileNotFoundError:
        status = None
    except OSError as exc:  # ENAMETOOLONG, ENOTDIR, EACCES on a parent, a symlink loop
        raise output_failure(name, exc) from None
    if status is not None and stat.S_ISDIR(status.st_mode):
        raise output_failure(name, OSError(errno.EISDIR, "is a directory"))
    if status is not None and not stat.S_ISREG(status.st_mode):
        if not os.access(name, os.W_OK):
            raise output_failure(name, OSError(errno.EACCES, "permission denied"))
        return _Planned(name, name, through=True)
    target = os.path.realpath(name)  # a symbolic link: replace what it points at, keep the link
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        shown = os.path.dirname(name) or "."
        raise OutputError(f"cannot write {name}: directory {shown} does not exist", exit_code=_EXIT_USAGE)
    try:
        name_max = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    length = len(os.fsencode(os.path.basename(target)))
    if length > name_max:
        raise OutputError(f"cannot write {name}: file name too long ({length} bytes; this file system "
                          f"allows {name_max})", exit_code=_EXIT_USAGE)
    return _Planned(name, target, through=False, mode=None if status is None else stat.S_IMODE(status.st_mode))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _as_bytes(data: OutputData, suffix: str) -> bytes:
    """The bytes of ``data``; a writer function writes to a scratch file that is read back."""
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, bytes):
        return data
    fd, scratch = tempfile.mkstemp(prefix="kpass-", suffix=suffix)
    os.close(fd)
    try:
        data(scratch)
        with open(scratch, "rb") as handle:
            return handle.read()
    finally:
        os.unlink(scratch)


def _prepare(plan: _Planned, data: OutputData) -> None:
    """Phase 2: write the temporary file next to the target (or hold the bytes of a write-through)."""
    suffix = os.path.splitext(plan.target)[1]
    if plan.through:
        plan.payload = _as_bytes(data, suffix)
        return
    try:
        fd, plan.temporary = tempfile.mkstemp(prefix=".kpass-", suffix=suffix, dir=os.path.dirname(plan.target))
    except OSError as exc:
        raise output_failure(plan.path, exc) from None
    try:
        if callable(data):
            os.close(fd)
            data(plan.temporary)
        else:
            try:
                _write_all(fd, data.encode("utf-8") if isinstance(data, str) else data)
            finally:
                os.close(fd)
        os.chmod(plan.temporary, plan.mode if plan.mode is not None else 0o666 & ~_umask())
    except OSError as exc:
        raise output_failure(plan.path, exc) from None


def _commit(plan: _Planned) -> None:
    """Phase 3: rename the temporary file onto the target, or write through to it."""
    try:
        if plan.through:
            fd = os.open(plan.target, os.O_WRONLY)
            try:
                _write_all(fd, plan.payload or b"")
            finally:
                os.close(fd)
        else:
            assert plan.temporary is not None
            os.replace(plan.temporary, plan.target)
            plan.temporary = None
    except OSError as exc:
        raise output_failure(plan.path, exc) from None


def write_outputs(outputs: Sequence[tuple[str | os.PathLike, OutputData]]) -> None:
    """Write several outputs all-or-nothing (as far as a file system allows).

    Every path is checked and every temporary file written before the first rename, so a bad
    path or a full disk anywhere leaves every existing file as it was. Write-through targets
    (devices, FIFOs) are written last.

    Parameters
    ----------
    outputs : sequence of (path, data)
        ``data`` is text (UTF-8), bytes, or a function writing the file to the path it is given.

    Raises
    ------
    kpass.errors.OutputError
        One line naming the path and the reason (see the module docstring).
    """
    plans = [_plan(path) for path, _ in outputs]
    try:
        for plan, (_, data) in zip(plans, outputs):
            _prepare(plan, data)
        for plan in sorted(plans, key=lambda p: p.through):
            _commit(plan)
    finally:
        for plan in plans:
            if plan.temporary is not None:
                try:
                    os.unlink(plan.temporary)
                except OSError:
                    pass


def write_output(path: str | os.PathLike, data: OutputData) -> None:
    """Write one output (see :func:`write_outputs` and the module docstring)."""
    write_outputs([(path, data)])


#: The one writer of output files under its old name (callers outside the CLI use it).
write_atomically = write_output


def emit(text: str, output: str | None) -> None:
    """``text`` to stdout (:func:`write_stdout`), or to the file ``output`` (said on stderr)."""
    if output:
        write_output(output, text)
        print(f"kpass: wrote {output}", file=sys.stderr)
    else:
        write_stdout(text)


def save_figure(figure: Any, path: str) -> None:
    """Write a matplotlib figure in the format of the suffix (``.png`` or ``.svg``)."""
    from kpass.errors import UsageError

    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in (".png", ".svg"):
        raise UsageError(f"plot file {os.fspath(path)!r} must end in .png or .svg")
    write_output(path, lambda temporary: figure.savefig(temporary, format=suffix[1:], dpi=120))
    print(f"kpass: wrote {path}", file=sys.stderr)


def write_stdout(text: str) -> None:
    """Write ``text`` to stdout; control characters are shown escaped when stdout is a terminal."""
    stream = sys.stdout
    if stream.isatty():
        from kpass.render.escape import terminal_text

        text = terminal_text(text, keep="\n\t")
    stream.write(text)
    stream.flush()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
