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

Before any command reads a file, :func:`check_outputs` (called by :func:`kpass.cli.main.main`
for every command) refuses an output that is an input (through any link, ``..`` or hard link)
or lies in an input directory, refuses one file named by two outputs, and gives each
``--output`` the format of its suffix (:func:`output_format`; ``--format`` must agree with it).
The options it knows are :data:`OUTPUT_OPTIONS` and :data:`INPUT_OPTIONS`.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from kpass.data.sources import glob_matches
from kpass.errors import OutputError, UsageError

__all__ = ["INPUT_OPTIONS", "OTHER_PATH_OPTIONS", "OUTPUT_OPTIONS", "SUFFIX_FORMATS", "OutputData", "OutputFormats",
           "add_output_argument", "broken_pipe", "check_inputs", "check_outputs", "emit", "flush_stdout",
           "reserve_standard_streams", "output_format", "save_figure", "write_atomically",
           "write_output", "write_outputs", "write_stdout"]

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


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (a name read from a file) is written as ``\\ud800``."""
    return text.encode("utf-8", "backslashreplace")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _as_bytes(data: OutputData, suffix: str) -> bytes:
    """The bytes of ``data``; a writer function writes to a scratch file that is read back."""
    if isinstance(data, str):
        return _utf8(data)
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
                _write_all(fd, _utf8(data) if isinstance(data, str) else data)
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
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in (".png", ".svg"):
        raise UsageError(f"plot file {os.fspath(path)!r} must end in .png or .svg")
    write_output(path, lambda temporary: figure.savefig(temporary, format=suffix[1:], dpi=120))
    print(f"kpass: wrote {path}", file=sys.stderr)


def write_stdout(text: str) -> None:
    """Write ``text`` to stdout; control characters are shown escaped when stdout is a terminal,
    and what stdout's encoding cannot write (a lone surrogate) as ``\\ud800``.

    Raises
    ------
    kpass.errors.OutputError
        stdout is closed (``kpass report x >&-``) or cannot take the text (``> /dev/full``): one
        line, exit code 1. A reader that went away (``| head -1``) is a ``BrokenPipeError``,
        which the ``kpass`` command ends quietly (:func:`broken_pipe`).
    """
    stream = sys.stdout
    if stream is None or _standard_streams_closed.get(1):
        raise OutputError("cannot write to stdout: it is closed; give --output FILE", exit_code=_EXIT_DATA)
    if stream.isatty():
        from kpass.render.escape import terminal_text

        text = terminal_text(text, keep="\n\t")
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        text = text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:
        pass
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        _detach_stdout()
        raise output_failure("stdout", exc) from None


def flush_stdout() -> None:
    """Flush stdout at the end of a command, so that a failure (a full disk, a reader gone) is met
    here, where it is one line, rather than at the interpreter's exit (a traceback-like warning)."""
    stream = sys.stdout
    if stream is None:
        return
    try:
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        _detach_stdout()
        raise output_failure("stdout", exc) from None


def broken_pipe() -> int:
    """The reader of stdout went away (``kpass report x | head -1``): stop quietly with 141
    (128 + SIGPIPE), as the usual command-line tools do; nothing more is written to the pipe."""
    _detach_stdout()
    return 141


def _detach_stdout() -> None:
    """Point fd 1 at the null device, so that what Python still holds for stdout is dropped
    instead of failing again (with a warning) when the interpreter exits."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


#: fd -> whether it was closed when the command started (:func:`reserve_standard_streams`).
_standard_streams_closed: dict[int, bool] = {}


def reserve_standard_streams() -> None:
    """Open the null device on a standard descriptor (0, 1, 2) that is closed (``kpass ... >&-``),
    so that no file kpass or an engine opens later takes its number (DuckDB's spill file on fd 1
    would receive the report); a closed stdout is then refused when the command writes to it."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            _standard_streams_closed[fd] = False
        except OSError:
            _standard_streams_closed[fd] = True
            try:
                null = os.open(os.devnull, os.O_RDWR)
            except OSError:
                continue
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    if sys.stderr is None:  # nothing to say things on: say them to nobody, never to stdout
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # lives as long as the process


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ----------------------------------------------------------------------------------------------
# What every command checks before it reads anything (:func:`check_outputs`, called by kpass.cli.main)

#: The options that write a file: ``dest`` -> the flag messages name.
OUTPUT_OPTIONS = {"output": "--output", "plot": "--plot"}


@dataclass(frozen=True)
class DirectoryFiles:
    """The files a reader takes from a directory given as input, by suffix: ``existing`` files
    are inputs (an output may not replace one), and a new output named with a suffix in ``new``
    would be read as input by the next run."""

    existing: tuple[str, ...]
    new: tuple[str, ...]


#: Sample tables (every one in a directory is read, hive partitions too), Inspect logs, lm-eval
#: results and samples. A new ``.json`` is allowed: lm-eval and Inspect take a ``.json`` by its
#: name and content, and a kpass JSON report is neither (``-o lm_eval_out/report.json``).
SAMPLE_DIRECTORY = DirectoryFiles(
    existing=(".jsonl", ".ndjson", ".csv", ".parquet", ".pq", ".gz", ".eval", ".json"),
    new=(".jsonl", ".ndjson", ".csv", ".parquet", ".pq", ".gz", ".eval"))
#: lm-eval task directories (``--include-path``): the task YAMLs and the Python files they import.
TASK_DIRECTORY = DirectoryFiles(existing=(".yaml", ".yml", ".py"), new=(".yaml", ".yml", ".py"))

#: The options whose files are read: ``dest`` -> (what messages call it, what is read in a directory it names).
INPUT_OPTIONS: dict[str, tuple[str, DirectoryFiles]] = {
    "files": ("input", SAMPLE_DIRECTORY),
    "extend": ("--extend table", SAMPLE_DIRECTORY),
    "include_path": ("--include-path directory", TASK_DIRECTORY),
    "tokenizer": ("--tokenizer file", SAMPLE_DIRECTORY),  # hf:PATH (a file, or a directory holding one)
    "approximate_tokenizer": ("--approximate-tokenizer file", SAMPLE_DIRECTORY),
}
#: Files the lm-eval reader opens beside a samples file it is given: the run's results file
#: (``results_<date>.json``; ``results.json`` before 0.4.3) and 0.3's ``{task}_write_out_info.json``.
READ_BESIDE = ("results*.json", "*_write_out_info.json")
#: Options that name a path but are neither read nor written: --temp-dir (DuckDB spills there in
#: files of its own), --label NAME=PATH (PATH is one of the inputs, already checked).
OTHER_PATH_OPTIONS = frozenset({"temp_dir", "label"})

TEXT = "text"
#: The suffix of an output -> its format; ``.txt`` and no suffix are :data:`TEXT` (the command's
#: stdout format, or ``--format``). Any other suffix needs ``--format``.
SUFFIX_FORMATS = {"": TEXT, ".txt": TEXT, ".md": "markdown", ".markdown": "markdown", ".csv": "csv",
                  ".json": "json", ".html": "html", ".htm": "html", ".svg": "svg", ".png": "png"}
PLOT_FORMATS = ("png", "svg")
_FORMAT_NAMES = {"table": "a plain-text table", "markdown": "Markdown", "csv": "CSV", "json": "JSON",
                 "html": "HTML", "svg": "an SVG image", "png": "a PNG image"}
_FORMAT_SUFFIXES = {"table": ".txt", "markdown": ".md", "csv": ".csv", "json": ".json", "html": ".html"}


@dataclass(frozen=True)
class OutputFormats:
    """The formats a command writes, the one stdout gets without ``--format``, and whether it
    writes several ``--output`` files at once (set as the parser default ``output_formats`` by
    :func:`add_output_argument`)."""

    choices: tuple[str, ...]
    default: str
    several: bool = False


def add_output_argument(parser: Any, formats: Sequence[str], *, default: str, several: bool = False) -> None:
    """``--format`` / ``-f`` and ``--output`` / ``-o`` of a command that writes ``formats``
    (``default`` on stdout), one output file or, with ``several``, any number.

    Neither option has an argparse default: :func:`check_outputs` tells a format the user gave
    from none, takes each ``--output``'s format from its suffix, refuses a repeated ``--output``
    where one is written, and sets ``args.format``, ``args.output`` and ``args.output_targets``.
    """
    suffixes = ", ".join(dict.fromkeys(_FORMAT_SUFFIXES[f] for f in formats))
    parser.add_argument("--format", "-f", choices=tuple(formats), default=None,
                        help=f"output format (default: {default}; an --output's suffix ({suffixes}) gives its "
                             f"format, and --format must agree with it)")
    parser.add_argument("--output", "-o", metavar="PATH", action="append",
                        help="write to PATH (atomically) instead of stdout; never an input file"
                             + ("; repeat for several formats at once" if several else ""))
    parser.set_defaults(output_formats=OutputFormats(tuple(formats), default, several))


@dataclass(frozen=True)
class _Input:
    """A file or directory a command will read: the option, the name as typed, the path found."""

    option: str
    given: str
    path: str
    directory: bool
    reads: DirectoryFiles  # of a directory: which files inside are read

    def describe(self) -> str:
        kind = " directory" if self.directory and self.option == "input" else ""
        shown = f"{self.option}{kind} {self.given}"
        return shown if self.path == self.given else f"{shown} (matching {self.path})"


def _named(args: Any, options: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(dest, value)`` for every value of ``options`` set in ``args`` (appended options give several)."""
    found = []
    for dest in options:
        value = getattr(args, dest, None)
        for item in (value if isinstance(value, (list, tuple)) else [value]):
            if item is not None and item != "":
                found.append((dest, os.fspath(item)))
    return found


def _inputs(args: Any) -> list[_Input]:
    """Every input of ``args``, globs expanded (names only: nothing is opened)."""
    found = []
    for dest, given in _named(args, INPUT_OPTIONS):
        option, reads = INPUT_OPTIONS[dest]
        if dest in ("tokenizer", "approximate_tokenizer"):
            if not given.startswith("hf:"):
                continue
            given = given[3:]
        paths = [given]
        if not os.path.lexists(given) and set("*?[") & set(given):
            try:
                paths = glob_matches(given)
            except FileNotFoundError:  # the command says so when it reads its inputs
                paths = []
        for path in paths:
            found.append(_Input(option, given, path, os.path.isdir(path), reads))
    return found


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


def _file_identity(path: str) -> tuple[int, int] | None:
    """``(device, inode)`` of a regular file (symbolic links followed), else None."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return (status.st_dev, status.st_ino) if stat.S_ISREG(status.st_mode) else None


def _files_inside(item: _Input, beside: dict[str, list[str]] | None = None) -> list[str]:
    """The files read inside an input directory (links to directories not followed, as by the readers).
    Beside an input file, the files of its folder a reader opens with it (:data:`READ_BESIDE`);
    ``beside`` keeps each folder's list, so that a glob of many files in one folder lists it once."""
    if not item.directory:
        folder = os.path.dirname(item.path) or "."
        if beside is None or folder not in beside:
            try:
                names = [entry.name for entry in os.scandir(folder) if entry.is_file()]
            except OSError:
                names = []
            found = [os.path.join(folder, name) for name in names
                     if any(fnmatch.fnmatch(name.lower(), pattern) for pattern in READ_BESIDE)]
            if beside is None:
                return [item.path, *found]
            beside[folder] = found
        return [item.path, *beside[folder]]
    files = []
    for root, _, names in os.walk(item.path):
        files += [os.path.join(root, name) for name in names if name.lower().endswith(item.reads.existing)]
    return files


def _refuse_inputs(outputs: Sequence[tuple[str, str]], inputs: Sequence[_Input]) -> None:
    """An output that is an input (the same file through any link, ``..`` or hard link: the same
    device and inode), an input directory, or a new file an input directory's reader would read
    next time, is refused."""
    identities: dict[tuple[int, int], tuple[_Input, str]] | None = None
    for dest, path in outputs:
        flag, real = OUTPUT_OPTIONS[dest], _real(path)
        identity = _file_identity(path)
        if identity is not None:
            if identities is None:  # only when an output exists: then every input file's identity
                identities = {}
                listed: dict[str, list[str]] = {}
                for item in inputs:
                    for file in _files_inside(item, listed):
                        if (found := _file_identity(file)) is not None:
                            identities.setdefault(found, (item, file))
            if identity in identities:
                item, file = identities[identity]
                where = (f"the {item.describe()}" if file == item.path else
                         f"{file}, read from the {item.describe()}" if item.directory else
                         f"{file}, which kpass reads beside the {item.describe()}")
                how = "" if os.path.abspath(file) == os.path.abspath(path) else " (the same file through a link)"
                raise UsageError(f"{flag} {path} is {where}{how}: kpass never writes over an input; "
                                 f"choose another name")
        for item in inputs:
            directory = _real(item.path) if item.directory else None
            if directory is None or os.path.commonpath([real, directory]) != directory:
                continue
            if real == directory:
                raise UsageError(f"{flag} {path} is the {item.describe()}: kpass never writes over an input")
            if real.lower().endswith(item.reads.new):
                raise UsageError(f"{flag} {path} is inside the {item.describe()}, where the next run would read "
                                 f"it as input: kpass never writes where it reads; choose another name")


def _output_key(path: str) -> tuple[Any, ...]:
    """What makes two output names the same file: the inode of an existing file or directory,
    the resolved name of anything else (devices by their own name: /dev/stdout and /dev/stderr
    may be one terminal)."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return ("name", _real(path))
    if stat.S_ISREG(status.st_mode) or stat.S_ISDIR(status.st_mode):
        return ("inode", status.st_dev, status.st_ino)
    return ("name", os.path.normpath(os.path.abspath(path)))


def _refuse_duplicates(outputs: Sequence[tuple[str, str]]) -> None:
    seen: dict[tuple[Any, ...], tuple[str, str]] = {}
    for dest, path in outputs:
        key = _output_key(path)
        if key in seen:
            first_dest, first = seen[key]
            raise UsageError(f"{OUTPUT_OPTIONS[first_dest]} {first} and {OUTPUT_OPTIONS[dest]} {path} name the "
                             f"same file: each output needs its own name")
        seen[key] = (dest, path)


def _suffix(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[1].lower()


def output_format(path: str, given: str | None, formats: OutputFormats, *, command: str = "kpass",
                  plot: bool = False) -> str:
    """The format of the output file ``path``: the suffix's, unless ``given`` (``--format``) says
    otherwise.

    ``.txt`` and no suffix take ``given`` or the command's stdout format; a suffix naming a format
    (``.md``, ``.csv``, ``.json``, ``.html``) must agree with ``given`` and be one the command
    writes; any other suffix needs ``given``.

    ``command`` names the command in messages; ``plot`` says it has a ``--plot`` option (the
    message for an image suffix points there).

    Raises
    ------
    kpass.errors.UsageError
        A contradiction with ``--format``, a format the command does not write, or an unknown
        suffix without ``--format``; the message names the option and the path.
    """
    suffix = _suffix(path)
    by_suffix = SUFFIX_FORMATS.get(suffix)
    if by_suffix is None:
        if given is not None:
            return given
        known = ", ".join(dict.fromkeys([".txt", *(_FORMAT_SUFFIXES[f] for f in formats.choices)]))
        raise UsageError(f"--output {path}: cannot tell the format from the suffix {suffix}; use {known} "
                         f"(or no suffix), or give --format")
    if by_suffix == TEXT:
        return given or formats.default
    if by_suffix not in formats.choices:
        if by_suffix in PLOT_FORMATS:
            hint = f"; draw a plot with --plot {path}" if plot else ""
            raise UsageError(f"--output {path}: {command} writes tables, not images{hint}")
        writes = ", ".join(_FORMAT_NAMES[f] for f in formats.choices)
        raise UsageError(f"--output {path}: {command} does not write {_FORMAT_NAMES[by_suffix]}; it writes {writes}")
    if given is not None and given != by_suffix:
        raise UsageError(f"--format {given} contradicts --output {path} (a {suffix} file is "
                         f"{_FORMAT_NAMES[by_suffix]}): drop --format or change the suffix")
    return by_suffix


def check_outputs(args: Any) -> None:
    """What ``kpass`` checks before any command reads a file, for every command alike.

    1. An output (``--output``, ``--plot``: :data:`OUTPUT_OPTIONS`) that is an input
       (:data:`INPUT_OPTIONS`: the files given, the files globs match, the files in input
       directories, the ``--extend`` table, ...) through any symbolic link, ``..`` or hard link
       (the same device and inode), or a new file in an input directory that the next run would
       read as input (:class:`DirectoryFiles`), is refused; so is an empty output name.
    2. The same file named by two outputs (``--plot x.svg -o x.svg``, two links to one file) is refused.
    3. Formats: a ``--plot`` ends in ``.png`` or ``.svg``; each ``--output`` gets the format of
       its suffix (:func:`output_format`). ``args.format`` becomes the format of the (first)
       output, or of stdout; ``args.output_targets`` lists ``(path or None for stdout, format)``.

    Raises
    ------
    kpass.errors.UsageError
        One line naming the option and the paths (the ``kpass`` command exits 2).
    """
    for dest in OUTPUT_OPTIONS:
        value = getattr(args, dest, None)
        if value == "" or (isinstance(value, list) and "" in value):
            raise UsageError(f"{OUTPUT_OPTIONS[dest]} '': an empty file name; give a path (or leave the option out "
                             f"for stdout)")
    outputs = _named(args, OUTPUT_OPTIONS)
    if outputs:
        _refuse_inputs(outputs, _inputs(args))
        _refuse_duplicates(outputs)
    for dest, path in outputs:
        if dest == "plot" and _suffix(path) not in (".png", ".svg"):
            raise UsageError(f"--plot {path}: the file name must end in .png or .svg")
    formats = getattr(args, "output_formats", None)
    if formats is None:
        return
    given = getattr(args, "format", None)
    command = f"kpass {getattr(args, 'command', '')}".rstrip()
    files = [path for dest, path in outputs if dest == "output"]
    if len(files) > 1 and not formats.several:
        raise UsageError(f"--output is given {len(files)} times ({', '.join(files)}); {command} writes one output")
    targets: list[tuple[str | None, str]] = [
        (path, output_format(path, given, formats, command=command, plot=hasattr(args, "plot"))) for path in files]
    args.output_targets = targets or [(None, given or formats.default)]
    args.format = args.output_targets[0][1]
    if not formats.several:
        args.output = files[0] if files else None


#: st_mode test -> what an input that is not a regular file is called.
_NOT_REGULAR = ((stat.S_ISFIFO, "named pipe (FIFO)"), (stat.S_ISCHR, "character device"),
                (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"))


def _special_kind(path: str) -> str | None:
    """What ``path`` is (symbolic links followed) when it is not a regular file or a directory."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # missing: the command says so when it reads
        return None
    return next((kind for test, kind in _NOT_REGULAR if test(mode)), None)


def check_inputs(args: Any) -> None:
    """Refuse an input that is not a regular file or a directory, before anything is opened.

    A named pipe, a device (``/dev/zero``, also through a link named ``x.jsonl``) or a socket
    given as input (or matched by a glob, or lying in an input directory with a suffix the
    readers take) is refused: kpass opens an input more than once (the reader registry sniffs
    it, then the reader reads it), which blocks on a pipe, and a device can be endless.

    Raises
    ------
    kpass.errors.UsageError
        One line naming the option, the path and what it is (the ``kpass`` command exits 2).
    """
    for item in _inputs(args):
        candidates = [item.path] if not item.directory else _files_inside(item)
        for path in candidates:
            kind = _special_kind(path)
            if kind is not None:
                where = "" if path == item.path else f" ({path})"
                raise UsageError(f"{item.describe()}{where} is a {kind}, not a regular file: kpass opens an input "
                                 "more than once and reads it whole; save it to a file first")
