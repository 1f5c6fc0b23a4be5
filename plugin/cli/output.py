"""Output writing of the ``kpass`` command: every file it writes goes through :func:`write_atomically`."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from kpass.errors import UsageError

__all__ = ["emit", "save_figure", "write_atomically"]


def write_atomically(path: str | os.PathLike, data: str | bytes | Callable[[str], None]) -> None:
    """Write ``data`` (text, bytes, or a callable that writes to a given temporary path) to
    ``path`` through a temporary file in the same directory and an atomic rename, so a failed
    run never leaves a half-written file.

    Raises
    ------
    UsageError
        The directory of ``path`` does not exist.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise UsageError(f"cannot write {path}: directory {directory} does not exist")
    suffix = os.path.splitext(path)[1]
    fd, temporary = tempfile.mkstemp(prefix=".kpass-", suffix=suffix, dir=directory)
    try:
        if callable(data):
            os.close(fd)
            data(temporary)
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp creates 0600; give the usual mode
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def emit(text: str, output: str | None) -> None:
    """``text`` to stdout, or atomically to the file ``output`` (said on stderr)."""
    if output:
        write_atomically(output, text)
        print(f"kpass: wrote {output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def save_figure(figure: Any, path: str) -> None:
    """Write a matplotlib figure atomically in the format of the suffix (``.png`` or ``.svg``)."""
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in (".png", ".svg"):
        raise UsageError(f"plot file {os.fspath(path)!r} must end in .png or .svg")
    write_atomically(path, lambda temporary: figure.savefig(temporary, format=suffix[1:], dpi=120))
    print(f"kpass: wrote {path}", file=sys.stderr)
