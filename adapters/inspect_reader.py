"""Read Inspect AI logs (``.eval`` and ``.json``) into a kpass sample table.

Registered through the kpass plugin hook (:mod:`kpass.adapters.inspect_plugin`), so that
``kpass report logs/*.eval`` and ``kpass compare`` work on any Inspect log, including logs of
runs made without kpass. Inspect is imported only when a log is actually read.

One row per scored (sample, epoch); the columns are described in
:mod:`kpass.adapters.inspect_records`. In addition:

- ``model`` is the log's ``eval.model`` and ``task`` its ``eval.task``; when a log holds several
  scorers, the scorers written by :func:`~kpass.adapters.inspect_scorers.kpass_scorer` /
  :func:`~kpass.adapters.inspect_scorers.cot_verifier` are used if present, otherwise every scorer
  gives its own task ``<task>/<scorer>``.
- ``cluster``: the ``cluster=`` key of a kpass metric declared in the log header, else the sample
  metadata key ``"cluster"`` when every sample has one; no cluster column otherwise.
- every scalar sample-metadata field also becomes a column of its own (so ``--cluster-by subject``
  and ``--by subject`` work), except fields named like a schema column, which stay in ``metadata``.
- ``metadata["output"]``: the completion text of the epoch's final generation, where
  ``kpass budget --tokenizer`` finds it; ``finished`` from its stop reason where no kpass scorer
  recorded it (conservative: a wrong answer cut off by the token limit is not finished, see
  :mod:`kpass.adapters.inspect_records`); ``output_tokens`` from its usage.
- Inputs as Inspect users give them (:meth:`InspectLogReader.expand`, called by
  :func:`kpass.read_samples` with every input it chose this reader for, after expanding quoted
  globs such as ``'logs/**/*.eval'``): a directory stands for the logs ``inspect view --log-dir``
  lists below it, and of a merged log and its ``<name>.shards/`` one is read (a shard set is
  read as one run); the rules, and the notes naming every file left out, are in
  :mod:`kpass.adapters.inspect_listing`.
- Both sample shapes of an ``.eval`` archive: one member per sample
  (``samples/{id}_epoch_{n}.json``), and the chunked shape (``samples/{id}_epoch_{n}/sample.json``
  with ``metadata.json`` and message, event, call and attachment chunks), which Inspect 0.3.285
  writes only with ``inspect log convert-chunked`` and whose samples its own
  ``read_eval_log``/``read_eval_log_sample`` cannot read (only the summaries): kpass reads the
  shell and the metadata, every field it needs. A member under ``samples/`` in neither shape is
  refused in one line naming the file and the members.
- Fast reads: an ``.eval`` archive is streamed one sample member at a time (its zstd, deflate or
  stored members, in any mix, decompressed by the module Inspect itself depends on,
  ``zipfile_zstd`` over ``zstandard``, on Python < 3.14), parsed as JSON, and only the fields
  kpass needs are kept (id, epoch, target, metadata, scores, the final generation's stop
  reason, completion and usage); no pydantic model is built, so a 4,800-sample log reads many
  times faster than with ``read_eval_log`` (``make bench``, ``bench_inspect_reader``), and
  memory is bounded by one sample plus the records. A ``.json`` log is parsed whole.
- Hostile logs (each one line naming the file and the member, sample or header field): every
  JSON the reader parses (``.json`` log, header, journal, sample and metadata members) refuses a
  key twice in one object (:func:`kpass.data.validation.loads_json_strict`); a member whose decompressed size
  passes :data:`DEFAULT_MAX_MEMBER_BYTES` (1 GiB; ``KPASS_MAX_MEMBER_SIZE``, ``--max-member-size``,
  ``max_member_size=``) is refused before it is decompressed, and none is read past it; header
  fields (``eval.model``, ``eval.task``, ``eval.config.epochs``...) and sample fields (``id``,
  ``epoch``, ``scores``, ``output.usage.output_tokens``...) of the wrong type are refused naming
  the sample and the field (token counts are integers: ``2.7`` and ``true`` are refused); the
  counts the header declares (epochs, samples) are compared with what the log holds without
  enumerating them, so a header claiming 10**12 epochs costs nothing.
- Integrity (each a :class:`kpass.DataError` naming the file and the samples, or a note):

  - the same (sample id, epoch) twice is an error naming both members;
  - ids ``1`` (int) and ``"1"`` (str) in one log are an error: kpass's problem ids are strings,
    so they could only be merged or renamed, and either would be a guess;
  - the samples read are checked against the header (``eval.dataset.sample_ids`` x epochs):
    missing (id, epoch) pairs are named in a note;
  - a score strictly between incorrect and correct (``0.65``, ``"P"``) is an error naming the
    sample, unless a threshold is given (``score_threshold=``, or the environment variable
    ``KPASS_INSPECT_SCORE_THRESHOLD`` for ``kpass report``): then ``correct = value >= threshold``
    for every score, and a note says how many scores were fractional;
- Unscored epochs (NaN) and errored samples without a score are left out, with a note that
  counts them; a log whose status is not "success" is read with a note.
- ``run`` (a column of its own): the log's file name; see :func:`kpass.read_samples` for two
  logs of one model and task (their ``model`` is then qualified with the run). Notes go to the table's
  :attr:`~kpass.SampleTable.notes` (so ``kpass report`` prints them and ``--format json`` keeps
  them) and are also issued as ``UserWarning``.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import os
import re
import sys
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .inspect_records import LoggedGeneration, sample_record
from .lm_eval_finishing import DEFAULT_REASONING_MARKERS

__all__ = ["DEFAULT_MAX_MEMBER_BYTES", "MAX_MEMBER_VARIABLE", "InspectLogReader", "records_from_log"]

#: Largest decompressed size of one member of an ``.eval`` archive that kpass reads (1 GiB):
#: a real log's largest member is one sample with its messages and events, megabytes at most.
DEFAULT_MAX_MEMBER_BYTES = 1 << 30
#: Environment variable that sets the limit (bytes, or with a unit: ``2GiB``, ``1500MiB``).
MAX_MEMBER_VARIABLE = "KPASS_MAX_MEMBER_SIZE"

_JSON_HEAD = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')


class InspectLogReader:
    """kpass reader for Inspect logs: ``can_read(path)`` and ``read(path) -> SampleTable``."""

    name = "inspect"
    description = "Inspect AI eval logs (.eval, .json)"

    def can_read(self, path: str | Path) -> bool:
        """True for an Inspect ``.eval`` archive or ``.json`` log (checked by content), and for a
        directory holding a log Inspect's listing shows (``inspect view --log-dir``)."""
        path = Path(path)
        if path.is_dir():
            from .inspect_listing import is_listed_log_name

            return any(is_listed_log_name(name) for _, _, files in os.walk(path) for name in files)
        if not path.is_file():
            return False
        suffix = path.suffix.lower()
        if suffix == ".eval":
            try:
                with zipfile.ZipFile(path) as archive:
                    names = set(archive.namelist())
            except (zipfile.BadZipFile, OSError):
                # a damaged .eval is still ours: read() reports what is wrong with it
                return True
            return "header.json" in names or "_journal/start.json" in names
        if suffix == ".json":
            try:
                with path.open("rb") as handle:
                    head = handle.read(4096)
            except OSError:
                return False
            return bool(_JSON_HEAD.match(head))
        return False

    def __init__(self, score_threshold: float | None = None) -> None:
        self.score_threshold = score_threshold

    def identity(self, path: str | Path) -> dict[str, Any] | None:
        """``{"model", "task", "eval_id", "run"}`` from the log header alone (cheap), for
        :func:`kpass.read_samples` to see two logs of one model and task before reading them
        (a shard set: its first shard's model and task, the eval ids of all its shards)."""
        try:
            members = _log_members(Path(path))
            headers = [_read_header(member)[0] for member in members]
        except Exception:  # noqa: BLE001 - read() reports what is wrong
            return None
        spec = headers[0].get("eval") or {}
        eval_id = spec.get("eval_id") if len(headers) == 1 else tuple(
            (header.get("eval") or {}).get("eval_id") for header in headers)
        return {"model": spec.get("model"), "task": spec.get("task"), "eval_id": eval_id, "run": Path(path).name}

    def expand(self, paths: Sequence[str | os.PathLike]) -> tuple[list[str], list[str]]:
        """``(logs to read, notes)`` for the inputs :func:`kpass.read_samples` gave this reader.

        A directory becomes the logs below it that ``inspect view --log-dir`` lists, and of a
        merged log and its ``<name>.shards/`` one is read, by the rules of
        :mod:`kpass.adapters.inspect_listing`; every file left out is counted and named in a note.

        Raises
        ------
        kpass.DataError
            The inputs hold no Inspect log.
        """
        from .inspect_listing import select_logs

        selection = select_logs([os.fspath(path) for path in paths], is_log=self.can_read, status_of=_status_of)
        if not selection.paths:
            shown = ", ".join(os.fspath(path) for path in paths)
            raise _data_error("holds no Inspect log to read (" + "; ".join(selection.notes) + ")", shown)
        return selection.paths, selection.notes

    def read(self, path: str | Path, run_label: str | None = None, reasoning_markers: Any = DEFAULT_REASONING_MARKERS,
             max_member_size: int | str | None = None):
        """Read one Inspect log into a :class:`kpass.SampleTable`.

        Parameters
        ----------
        path : str or Path
        run_label : str, optional
            Appended to the model as ``"<model> [<run_label>]"`` (two runs of one model and
            task read together, see :func:`kpass.read_samples`).
        reasoning_markers : (str, str) or None, default ``("<think>", "</think>")``
            Markers of a reasoning block (``--reasoning-markers``); None: not looked for.
        max_member_size : int or str, optional
            Largest decompressed ``.eval`` member to read (``--max-member-size``; bytes or
            ``"2GiB"``); default ``KPASS_MAX_MEMBER_SIZE``, else 1 GiB.

        Raises
        ------
        kpass.DataError
            Unreadable or truncated log, or a score kpass cannot interpret, naming the file
            (and the sample).
        """
        from kpass import SampleTable

        notes: list[str] = []
        details: dict[str, Any] = {}
        records = records_from_log(path, notes=notes, score_threshold=self.score_threshold,
                                   run_label=run_label, details=details, reasoning_markers=reasoning_markers,
                                   max_member_size=max_member_size)
        table = SampleTable.from_records(records, source=str(path), notes=notes)
        key = details.get("recorded_cluster")
        if key:
            # the log's kpass metrics clustered by this sample-metadata key: its own column when
            # it has one (`subject`), else the `cluster` column holding the same values
            table.recorded_cluster_by = key if table.has_column(key) else "cluster"
        return table


def _data_error(message: str, path: str, field: str | None = None):
    from kpass import DataError

    return DataError(message, source=path, field=field)


def _schema_columns() -> tuple[str, ...]:
    from kpass import SCHEMA_COLUMNS

    return tuple(SCHEMA_COLUMNS)


#: Columns the reader adds itself (never taken from sample metadata).
_RUN_COLUMNS = ("run",)


def _metadata_columns(samples: Sequence[Mapping[str, Any]], reserved: set[str]) -> list[str]:
    schema = _schema_columns()
    names: dict[str, None] = {}
    for sample in samples:
        for key, value in (sample.get("metadata") or {}).items():
            if isinstance(value, (str, int, bool)) or (isinstance(value, float) and math.isfinite(value)):
                names.setdefault(key, None)
    out = []
    for key in names:
        if not isinstance(key, str) or not key or key in reserved:
            continue
        lowered = key.lower()
        if lowered in schema or difflib.get_close_matches(lowered, schema, n=1, cutoff=0.8):
            continue
        out.append(key)
    return out


# --------------------------------------------------------------------------------------------
# reading the log's JSON without Inspect's models


class _LogError(ValueError):
    """A rule of the log broken at a known place (a member, a header field): one line, with the
    field when known, never "is it complete?"."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def _member_limit(value: Any = None) -> int:
    """The member size limit in bytes: ``value`` (an integer, or text such as ``2GiB``, see
    :func:`kpass.data.validation.parse_byte_size`), else ``KPASS_MAX_MEMBER_SIZE``, else
    :data:`DEFAULT_MAX_MEMBER_BYTES`; a bad value is a :class:`kpass.UsageError` naming the option."""
    from kpass import UsageError
    from kpass.data.validation import parse_byte_size

    name = "--max-member-size"
    if value is None:
        value, name = os.environ.get(MAX_MEMBER_VARIABLE, "").strip() or None, MAX_MEMBER_VARIABLE
        if value is None:
            return DEFAULT_MAX_MEMBER_BYTES
    try:
        return parse_byte_size(value)
    except ValueError as error:
        raise UsageError(f"{name}: the largest member of an Inspect .eval log to read: {error}") from None


def _size_text(size: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor:
            return f"{size / factor:.3g} {unit}"
    return f"{size} bytes"


def _open_archive(path: Path) -> zipfile.ZipFile:
    archive = zipfile.ZipFile(path)
    methods = {info.compress_type for info in archive.infolist()}
    if 93 in methods and sys.version_info < (3, 14):
        # Inspect writes zstd members (zip method 93), in any mix with deflated or stored ones; the
        # stdlib reads them from Python 3.14 on, before that through zipfile_zstd (a dependency of
        # inspect-ai, over `zstandard`)
        try:
            import zipfile_zstd  # noqa: F401
        except ImportError:
            archive.close()
            raise _LogError("has zstd-compressed members, which Python < 3.14 reads through the zipfile-zstd "
                            "package (a dependency of inspect-ai); pip install zipfile-zstd") from None
    unknown = sorted(methods - {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA, 93})
    if unknown:
        archive.close()
        member = next(info.filename for info in archive.infolist() if info.compress_type == unknown[0])
        raise _LogError(f"member {member} is compressed with zip method {unknown[0]}, which no zip reader kpass "
                        "knows reads (Inspect writes zstd, 93, or deflate, 8)")
    return archive


def _member_json(archive: zipfile.ZipFile, info: zipfile.ZipInfo | str, limit: int) -> Any:
    """A member's JSON, decompressed as a stream and never past ``limit`` bytes, parsed by
    :func:`kpass.data.validation.loads_json_strict`; any failure a :class:`_LogError` naming the member."""
    from kpass.data.validation import loads_json_strict

    if isinstance(info, str):
        info = archive.getinfo(info)
    name = info.filename
    too_large = (f"member {name} holds more than {_size_text(limit)} once decompressed, the largest member kpass "
                 f"reads; if the log is trusted, raise the limit: --max-member-size SIZE or "
                 f"{MAX_MEMBER_VARIABLE}=SIZE (e.g. 4GiB)")
    if info.file_size > limit:  # declared in the archive's directory: refused before decompressing
        raise _LogError(too_large)
    try:
        with archive.open(info) as stream:
            data = stream.read(limit + 1)  # zipfile stops at the declared size and checks the CRC
    except (zipfile.BadZipFile, EOFError, OSError, NotImplementedError, RuntimeError) as error:
        raise _LogError(f"member {name} cannot be decompressed ({type(error).__name__}: {error}); is the log "
                        "complete?") from None
    if len(data) > limit:
        raise _LogError(too_large)
    return _parsed(data, f"member {name}", loads_json_strict)


def _parsed(data: bytes, what: str, loads: Any) -> Any:
    try:
        return loads(data)
    except UnicodeDecodeError as error:
        before = error.object[:error.start]
        line, column = before.count(b"\n") + 1, error.start - before.rfind(b"\n")
        raise _LogError(f"{what}: not UTF-8 text: byte 0x{error.object[error.start]:02x} at line {line}, column "
                        f"{column} ({error.reason})") from None
    except json.JSONDecodeError as error:
        raise _LogError(f"{what}: invalid or truncated JSON: {error.msg} (line {error.lineno}, column "
                        f"{error.colno})") from None
    except ValueError as error:  # a duplicate key, nesting too deep
        raise _LogError(f"{what}: invalid JSON: {error}", field=getattr(error, "key", None)) from None


def _read_header(path: Path, limit: int | None = None) -> tuple[dict[str, Any], list[Any] | None]:
    """``(header, samples)``: the header dict (``eval``, ``status``, ...) of a log, and for a
    ``.json`` log its samples (an ``.eval`` archive's are streamed by :func:`_iter_samples`);
    header fields of the wrong type are a :class:`_LogError` naming the field."""
    from kpass.data.validation import loads_json_strict

    from .inspect_records import LogFieldError, check_header_fields

    limit = _member_limit() if limit is None else limit
    if path.suffix.lower() == ".json":
        data = _parsed(path.read_bytes(), "the log", loads_json_strict)
        if not isinstance(data, dict) or "eval" not in data:
            raise ValueError("not an Inspect log (no 'eval' field)")
        samples = data.get("samples")
        if samples is not None and not isinstance(samples, list):
            raise _LogError(f"'samples' is {type(samples).__name__}, not an array of samples", field="samples")
        header, where, samples = data, "the log", list(samples or [])
    else:
        with _open_archive(path) as archive:
            names = set(archive.namelist())
            if "header.json" in names:
                header, where, samples = _member_json(archive, "header.json", limit), "header.json", None
            elif "_journal/start.json" in names:
                start = _member_json(archive, "_journal/start.json", limit)
                if not isinstance(start, dict):
                    raise _LogError(f"member _journal/start.json holds {type(start).__name__}, not an object")
                header, where, samples = {"status": "started", **start}, "_journal/start.json", None
            else:
                raise ValueError("the archive has neither header.json nor _journal/start.json")
    try:
        check_header_fields(header)
    except LogFieldError as error:
        raise _LogError(f"{where}: {error}", field=error.field) from None
    return header, samples


def _log_members(path: Path) -> list[Path]:
    """The log files of ``path``: itself, or the current attempt of every shard of a
    ``<name>.shards`` directory (:func:`kpass.adapters.inspect_listing.shard_set_members`)."""
    if not path.is_dir():
        return [path]
    from .inspect_listing import is_shard_set, shard_set_members

    if not is_shard_set(path):
        raise ValueError("a log directory is read with kpass.read_samples, which lists its logs first")
    members, _ = shard_set_members(str(path))
    if not members:
        raise ValueError("a shards directory without any shard log (<k>/<log>.eval)")
    return [Path(member) for member in members]


def _status_of(path: str) -> str | None:
    """A log's status from its header (None when the header cannot be read)."""
    try:
        return _read_header(Path(path))[0].get("status")
    except Exception:  # noqa: BLE001 - reading the log reports what is wrong with it
        return None


#: The two shapes of a sample in an ``.eval`` archive (``inspect_ai/log/_recorders/chunked/format.py``):
#: one member ``samples/{id}_epoch_{n}.json`` (monolith), or the chunked shape, a directory
#: ``samples/{id}_epoch_{n}/`` whose ``sample.json`` ("shell") holds every field but messages,
#: events, attachments and metadata; metadata is ``metadata.json`` beside it (when not empty),
#: messages, events, calls and attachments are chunk members kpass does not need.
_MONOLITH = re.compile(r"^samples/[^/]+\.json$")
_CHUNKED_SHELL = re.compile(r"^(samples/[^/]+)/sample\.json$")
_CHUNKED_PARTS = re.compile(r"^samples/[^/]+/(metadata\.json|skeleton\.json|(messages|events|calls|attachments)/"
                            r"(\d+|stats|uuids)\.json)$")


def _iter_samples(path: Path, samples: list[Any] | None, limit: int):
    """``(where, sample dict)`` per sample: the member name of an ``.eval`` archive (read one at
    a time, so memory holds one sample; monolith and chunked samples alike), or the position in
    a ``.json`` log.

    Raises
    ------
    ValueError
        A member under ``samples/`` in neither shape (a layout kpass does not know).
    """
    if samples is not None:
        for position, sample in enumerate(samples):
            yield f"samples[{position}]", sample
        return
    with _open_archive(path) as archive:
        infos = archive.infolist()
        names = {info.filename for info in infos}
        shells = {match.group(1) for name in names if (match := _CHUNKED_SHELL.match(name))}
        unknown = [name for name in names if name.startswith("samples/") and not name.endswith("/")
                   and not _MONOLITH.match(name) and not _CHUNKED_SHELL.match(name)
                   and not (_CHUNKED_PARTS.match(name) and "/".join(name.split("/", 2)[:2]) in shells)]
        if unknown:  # the members in no known shape first (chunk parts without a shell after them)
            raise _UnknownLayout(sorted(unknown, key=lambda name: (_CHUNKED_PARTS.match(name) is not None, name)))
        for info in infos:
            name = info.filename
            if _MONOLITH.match(name):
                yield name, _member_json(archive, info, limit)
            elif (shell := _CHUNKED_SHELL.match(name)) is not None:
                sample = _member_json(archive, info, limit)
                metadata = f"{shell.group(1)}/metadata.json"
                if metadata in names and isinstance(sample, dict):
                    sample["metadata"] = _member_json(archive, metadata, limit)
                yield shell.group(1) + "/", sample


class _UnknownLayout(_LogError):
    """Sample members of an ``.eval`` archive in a layout kpass does not know."""

    def __init__(self, members: list[str]) -> None:
        shown = ", ".join(members[:3]) + (f" and {len(members) - 3} more" if len(members) > 3 else "")
        super().__init__(
            f"holds sample members in a layout kpass does not know ({shown}); kpass reads samples/{{id}}_epoch_{{n}}"
            ".json (monolith) and samples/{id}_epoch_{n}/sample.json with its chunks (chunked, as Inspect 0.3.285's "
            "`inspect log convert-chunked` writes); is the log from a newer Inspect? Try kpass with the Inspect "
            "version that wrote it, or report the layout to kpass")


class _Score:
    """The three fields of an Inspect ``Score`` that kpass reads, from the log's JSON."""

    __slots__ = ("value", "answer", "metadata")

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.value = data.get("value")
        self.answer = data.get("answer")
        self.metadata = data.get("metadata")


def _has_hidden_reasoning(output: Mapping[str, Any]) -> bool:
    """True when the final generation produced tokens that its completion text does not show."""
    usage = output.get("usage") or {}
    if (usage.get("reasoning_tokens") or 0) > 0:
        return True
    for choice in output.get("choices") or []:
        content = (choice.get("message") or {}).get("content")
        if isinstance(content, list) and any(isinstance(part, Mapping) and part.get("type") == "reasoning"
                                             for part in content):
            return True
    return False


def _generation(sample: Mapping[str, Any], model: str) -> tuple[str | None, Mapping[str, str] | None, int | None]:
    """``(stop_reason, output text, output tokens)`` of a sample's final generation.

    The text goes under ``"output"`` (or ``"completion"`` when reasoning is hidden from it, see
    :mod:`kpass.adapters.inspect_records`); output tokens are the final generation's usage, else
    the sample's usage of the evaluated model.
    """
    output = sample.get("output") or {}  # every field's type checked by check_sample_fields
    tokens = None
    usage = output.get("usage") or {}
    if usage.get("output_tokens") is not None:
        tokens = int(usage["output_tokens"])  # an integer (3.0 included), never 2.7 or true
    else:
        total = (sample.get("model_usage") or {}).get(model) or {}
        if total.get("output_tokens") is not None:
            tokens = int(total["output_tokens"])
    choices = output.get("choices") or []
    if not choices:
        return None, None, tokens
    text = output.get("completion")
    if text is None:
        content = (choices[0].get("message") or {}).get("content")
        text = content if isinstance(content, str) else "".join(
            part.get("text", "") for part in content or [] if isinstance(part, Mapping) and part.get("type") == "text")
    key = "completion" if _has_hidden_reasoning(output) else "output"
    return choices[0].get("stop_reason"), {key: text}, tokens


def _kpass_cluster_key(spec: Any) -> str | None:
    """The ``cluster=`` option of the first kpass metric the log's eval spec declares, if any."""
    from .inspect_records import field_of, kpass_metric_definitions

    for definition in kpass_metric_definitions(spec):
        cluster = (field_of(definition, "options") or {}).get("cluster")
        if isinstance(cluster, str) and cluster:
            return cluster
    return None


def _threshold_from_environment() -> float | None:
    text = os.environ.get("KPASS_INSPECT_SCORE_THRESHOLD", "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"KPASS_INSPECT_SCORE_THRESHOLD must be a number; got {text!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"KPASS_INSPECT_SCORE_THRESHOLD must be finite; got {text!r}")
    return value


def _read_member(member: Path, label: str, location: str, kept: list[dict[str, Any]],
                 seen: dict[tuple[type, Any, int], str], id_types: dict[tuple[str, int], tuple[Any, str]],
                 note, limit: int) -> dict[str, Any]:
    """Append what kpass needs of every sample of one log file to ``kept``; return its eval spec.

    ``label`` prefixes the sample locations of a shard (``"0/<log>.eval:"``); ``seen`` and
    ``id_types`` span every shard of a set, so a sample in two shards is an error too. ``limit``:
    the largest decompressed member read (bytes).
    """
    from .inspect_records import LogFieldError, check_sample_fields

    shown = f"{location}/{label[:-1]}" if label else location
    try:
        header, inline_samples = _read_header(member, limit)
        spec = header["eval"]
        model = spec["model"]
    except _LogError as exc:
        raise _data_error(f"{label}{exc}", location, field=exc.field) from None
    except Exception as exc:
        raise _data_error(f"{label}cannot read this Inspect log ({type(exc).__name__}: {exc}); is it complete?",
                          location) from exc
    before = len(kept)
    try:
        for position, sample in _iter_samples(member, inline_samples, limit):
            where = label + position
            try:
                check_sample_fields(sample, model)
            except LogFieldError as exc:
                named = (f"sample id {sample['id']!r} epoch {sample.get('epoch')!r} ({where})"
                         if exc.field not in ("sample", "id") else f"sample {where}")
                raise _data_error(f"{named}: {exc}", location, field=exc.field) from None
            sample_id, epoch = sample.get("id"), sample.get("epoch")
            key = (type(sample_id), sample_id, epoch)
            if key in seen:
                raise _data_error(f"sample id {sample_id!r} epoch {epoch} appears twice: in {seen[key]} and in "
                                  f"{where}; each (sample, epoch) must appear once", location, field="problem_id")
            seen[key] = where
            text_key = (str(sample_id), epoch)
            other = id_types.get(text_key)
            if other is not None and type(other[0]) is not type(sample_id):
                raise _data_error(
                    f"sample ids {other[0]!r} ({type(other[0]).__name__}, {other[1]}) and {sample_id!r} "
                    f"({type(sample_id).__name__}, {where}) are different Inspect ids that kpass would read as "
                    "one problem (its problem ids are strings); give the samples distinct ids",
                    location, field="problem_id")
            id_types[text_key] = (sample_id, where)
            stop_reason, output_text, tokens = _generation(sample, model)
            kept.append({"id": sample_id, "epoch": epoch, "target": sample.get("target"),
                         "metadata": sample.get("metadata") or {}, "scores": sample.get("scores") or {},
                         "stop_reason": stop_reason, "output_text": output_text, "tokens": tokens,
                         "where": where})
    except Exception as exc:
        from kpass import DataError

        if isinstance(exc, DataError):
            raise
        if isinstance(exc, _LogError):
            raise _data_error(f"{label}{exc}", location, field=exc.field) from None
        raise _data_error(f"{label}cannot read this Inspect log ({type(exc).__name__}: {exc}); is it complete?",
                          location) from exc
    status = header.get("status")
    if status != "success":
        note(f"{shown}: Inspect log status is {status!r}; reading the {len(kept) - before} sample(s) it holds")
    _check_against_header(spec, kept[before:], shown, note)
    return spec


def records_from_log(path: str | Path, *, notes: list[str] | None = None,
                     score_threshold: float | None = None,
                     run_label: str | None = None,
                     details: dict[str, Any] | None = None,
                     reasoning_markers: Any = DEFAULT_REASONING_MARKERS,
                     max_member_size: int | str | None = None) -> list[dict[str, Any]]:
    """Sample-table records (one per scored sample and epoch) of one Inspect log.

    The log's JSON is read directly (see the module docstring): an ``.eval`` archive one sample
    member at a time, keeping only the fields kpass needs. Each record carries its epoch's final
    generation: the completion text in ``metadata["output"]``, ``finished`` by the rule of
    :func:`kpass.adapters.inspect_records.finished_flag`, and the output tokens of its usage.

    Parameters
    ----------
    path : str or Path
        An Inspect ``.eval`` or ``.json`` log, or a ``<name>.shards`` directory (the current
        attempt of every shard, read as one run; a sample in two shards is an error).
    notes : list of str, optional
        Receives what was left out or is doubtful (unscored epochs, missing members, binarised
        scores, a log whose status is not "success"), one sentence each naming the file, for
        :attr:`kpass.SampleTable.notes`; each is also issued as a ``UserWarning``.
    score_threshold : float, optional
        Binarise scores: ``correct = value >= score_threshold`` (Inspect's ``value_to_float``
        scale: C = 1, P = 0.5, I = 0). Default: the environment variable
        ``KPASS_INSPECT_SCORE_THRESHOLD``, else none, and a fractional score is an error.
    run_label : str, optional
        Appended to the model as ``"<model> [<run_label>]"``.
    details : dict, optional
        Receives ``"recorded_cluster"``: the ``cluster=`` key of the log's kpass metrics (None
        when they recorded none).
    reasoning_markers : (str, str) or None, default ``("<think>", "</think>")``
        Markers of a reasoning block: a completion that ends inside an unclosed one is unfinished
        (:func:`kpass.adapters.inspect_records.finished_flag`); None: not looked for.
    max_member_size : int or str, optional
        Largest decompressed member of an ``.eval`` archive to read: bytes, or text such as
        ``"2GiB"``. Default: ``KPASS_MAX_MEMBER_SIZE``, else :data:`DEFAULT_MAX_MEMBER_BYTES`.

    Returns
    -------
    list of dict
        Records for :meth:`kpass.SampleTable.from_records`.

    Raises
    ------
    kpass.DataError
        The log cannot be read, holds no scored sample, holds the same (id, epoch) twice, mixes
        int and str ids that print alike, or holds a score kpass cannot read (a fractional one
        without a threshold), naming the file and the sample.
    """
    from .inspect_records import assign_sample_indices
    from .lm_eval_finishing import check_reasoning_markers

    markers = check_reasoning_markers(reasoning_markers)
    limit = _member_limit(max_member_size)
    location = str(path)
    path = Path(path)
    if score_threshold is None:
        try:
            score_threshold = _threshold_from_environment()
        except ValueError as exc:
            raise _data_error(str(exc), location, field="correct") from None
    try:
        members = _log_members(path)
    except Exception as exc:
        raise _data_error(f"cannot read this Inspect log ({type(exc).__name__}: {exc}); is it complete?",
                          location) from exc
    collected = notes if notes is not None else []

    def note(message: str) -> None:
        collected.append(message)
        warnings.warn(message, stacklevel=3)

    kept, spec = _kept_samples(path, members, location, note, limit)
    shown_model = f"{spec['model']} [{run_label}]" if run_label else spec["model"]
    cluster = _kpass_cluster_key(spec)
    if details is not None:
        details["recorded_cluster"] = cluster
    if cluster is None and kept and all("cluster" in s["metadata"] for s in kept):
        cluster = "cluster"
    run = _RunOfLog(path=path, location=location, model=shown_model, task=spec["task"], scorers=_scorers(kept, location),
                    cluster=cluster, score_threshold=score_threshold, markers=markers,
                    metadata_columns=_metadata_columns(kept, reserved=set(_RUN_COLUMNS)))
    records, epochs, unscored, fractional = run.records(kept)
    if fractional:
        note(f"{location}: {fractional} fractional score(s) binarised at the threshold {score_threshold:g} "
             "(correct = value >= threshold)")
    elif score_threshold is not None:
        note(f"{location}: scores binarised at the threshold {score_threshold:g} (correct = value >= threshold)")
    if unscored:
        note(f"{location}: left out {unscored} unscored epoch(s) (NaN score or no score); the remaining "
             "epochs of those samples are kept")
    if not records:
        raise _data_error("the log holds no scored sample", location, field="correct")
    assign_sample_indices(records, epochs)
    return records


def _kept_samples(path: Path, members: list[Path], location: str, note: Any,
                  limit: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One pass over the samples of each log (a shard set: of each shard), keeping what kpass needs;
    with the first member's header (every shard must hold the same model and task)."""
    kept: list[dict[str, Any]] = []
    seen: dict[tuple[type, Any, int], str] = {}
    id_types: dict[tuple[str, int], tuple[Any, str]] = {}
    first_spec: dict[str, Any] | None = None
    for member in members:
        label = "" if member == path else f"{member.relative_to(path)}:"
        spec = _read_member(member, label, location, kept, seen, id_types, note, limit)
        if first_spec is None:
            first_spec = spec
        elif (spec.get("model"), spec.get("task")) != (first_spec.get("model"), first_spec.get("task")):
            raise _data_error(f"shard {label[:-1]} holds model {spec.get('model')!r} on task {spec.get('task')!r}, "
                              f"shard {members[0].relative_to(path)} model {first_spec.get('model')!r} on task "
                              f"{first_spec.get('task')!r}; the shards of one set are one run", location)
    assert first_spec is not None
    return kept, first_spec


def _scorers(kept: list[dict[str, Any]], location: str) -> list[str]:
    """The scorers whose scores become samples: the kpass scorers when the log has any, else every scorer."""
    scorer_names: dict[str, None] = {}
    kpass_scorers: dict[str, None] = {}
    for sample in kept:
        for name, score in sample["scores"].items():
            scorer_names.setdefault(name, None)
            if isinstance(score, Mapping) and "kpass" in (score.get("metadata") or {}):
                kpass_scorers.setdefault(name, None)
    chosen = list(kpass_scorers) or list(scorer_names)
    if not chosen:
        raise _data_error("the log holds no scored sample (were the samples scored? "
                          "try `inspect score` first)", location, field="correct")
    return chosen


@dataclasses.dataclass(frozen=True)
class _RunOfLog:
    """What every record of one log shares: where it comes from, its model and task as shown, the
    scorers read, the cluster key, the score threshold, the reasoning markers and the metadata columns."""

    path: Path
    location: str
    model: str
    task: str
    scorers: list[str]
    cluster: str | None
    score_threshold: float | None
    markers: Any
    metadata_columns: list[str]

    def records(self, kept: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[int | None], int, int]:
        """``(records, epochs, unscored, fractional)``: a record per scored sample, epoch and scorer."""
        records: list[dict[str, Any]] = []
        epochs: list[int | None] = []
        unscored = fractional = 0
        for sample in kept:
            for scorer in self.scorers:
                data = sample["scores"].get(scorer)
                if data is None:
                    unscored += 1
                    continue
                record, was_fractional = self._record(sample, scorer, _Score(data))
                fractional += was_fractional
                if record is None:
                    unscored += 1
                    continue
                records.append(record)
                epochs.append(sample["epoch"])
        return records, epochs, unscored, fractional

    def _record(self, sample: dict[str, Any], scorer: str, score: Any) -> tuple[dict[str, Any] | None, bool]:
        """One sample-table record (None: unscored) and whether its score was fractional."""
        location, score_threshold = self.location, self.score_threshold
        where = f"sample {sample['id']!r}, epoch {sample['epoch']}, scorer {scorer!r} ({sample['where']})"
        fractional = _is_fractional(score.value)
        if fractional and score_threshold is None:
            raise _data_error(
                f"{where}: score value {score.value!r} is between incorrect and correct; kpass metrics "
                "need correct/incorrect. Say how to binarise it: kpass report with "
                "KPASS_INSPECT_SCORE_THRESHOLD=0.5 (correct = value >= 0.5), or "
                "InspectLogReader(score_threshold=0.5) in Python", location, field="correct")
        if score_threshold is not None:
            score.value = _binarised(score.value, score_threshold)
        try:
            record = sample_record(
                sample_id=sample["id"], epoch=sample["epoch"], score=score,
                sample_metadata=sample["metadata"], cluster=self.cluster, where=where,
                generation=LoggedGeneration(output_tokens=sample["tokens"], stop_reason=sample["stop_reason"],
                                            output_text=sample["output_text"], reasoning_markers=self.markers),
            )
        except (TypeError, ValueError) as exc:
            raise _data_error(str(exc), location, field="cluster" if "cluster key" in str(exc) else "correct") from exc
        if record is None:
            return None, fractional
        record["model"] = self.model
        record["task"] = self.task if len(self.scorers) == 1 else f"{self.task}/{scorer}"
        target = sample["target"]
        record["gold"] = (target if isinstance(target, str) or target is None
                          else target[0] if len(target) == 1 else json.dumps(list(target)))
        sample_metadata = dict(sample["metadata"])
        for column in self.metadata_columns:
            value = sample_metadata.get(column)
            record[column] = None if value is None else str(value)
        record["run"] = self.path.name
        record["metadata"]["sample_metadata"] = sample_metadata
        return record, fractional


def _check_against_header(spec: Mapping[str, Any], kept: list[dict[str, Any]], location: str, note) -> None:
    """Note the (id, epoch) pairs the header announces and the log does not hold.

    The declared counts (``dataset.samples`` or ``sample_ids``, times ``config.epochs``; their
    types checked by :func:`kpass.adapters.inspect_records.check_header_fields`) are compared
    with the samples held without enumerating them: the work is in proportion to the log, never to
    what its header claims (10**12 epochs cost nothing).
    """
    dataset = spec.get("dataset") or {}
    ids = dataset.get("sample_ids")
    epochs = int((spec.get("config") or {}).get("epochs") or 1)
    if not ids:
        expected = dataset.get("samples")
        if expected is not None and len(kept) < int(expected) * epochs:
            note(f"{location}: the header announces {int(expected) * epochs} sample(s) ({int(expected)} x {epochs} "
                 f"epochs) and the log holds {len(kept)}; the missing ones are left out")
        return
    declared = {(type(sample_id), sample_id) for sample_id in ids}
    present = {(type(s["id"]), s["id"], s["epoch"]) for s in kept}
    held = sum(1 for kind, sample_id, epoch in present if (kind, sample_id) in declared and 1 <= epoch <= epochs)
    if held == len(declared) * epochs:
        return
    missing: list[tuple[Any, int]] = []  # the first few, found after at most len(kept) + 5 steps
    for epoch in range(1, epochs + 1):
        missing += [(sample_id, epoch) for sample_id in ids if (type(sample_id), sample_id, epoch) not in present][:6]
        if len(missing) > 5:
            break
    count = len(declared) * epochs - held
    shown = ", ".join(f"id {sample_id!r} epoch {epoch}" for sample_id, epoch in missing[:5])
    more = f" and {count - 5} more" if count > 5 else ""
    note(f"{location}: the header announces {len(declared) * epochs} sample(s) ({len(declared)} x {epochs} epochs) "
         f"and the log holds {len(kept)}; missing: {shown}{more} (left out)")


def _is_fractional(value: Any) -> bool:
    """A score strictly between incorrect (0) and correct (1) on Inspect's ``value_to_float``
    scale: a number in (0, 1), or ``"P"`` (partial credit, 0.5)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return 0.0 < float(value) < 1.0
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "p":
            return True
        try:
            number = float(text)
        except ValueError:
            return False
        return 0.0 < number < 1.0
    return False


def _binarised(value: Any, threshold: float) -> Any:
    """``value >= threshold`` on Inspect's scale (C/yes/true = 1, P = 0.5, I/N/no/false = 0);
    NaN and values kpass cannot read are handed on unchanged (unscored, or an error)."""
    if isinstance(value, bool):
        number = float(value)
    elif isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip().lower()
        letters = {"c": 1.0, "yes": 1.0, "true": 1.0, "p": 0.5, "i": 0.0, "n": 0.0, "no": 0.0, "false": 0.0}
        if text in letters:
            number = letters[text]
        else:
            try:
                number = float(text)
            except ValueError:
                return value
    else:
        return value
    if math.isnan(number):
        return value
    return number >= threshold
