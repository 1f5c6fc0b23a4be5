"""Which Inspect logs a directory, a glob or a list of files stands for (Inspect's listing rules).

:meth:`kpass.adapters.inspect_reader.InspectLogReader.expand` calls :func:`select_logs` with every
input :func:`kpass.read_samples` chose the Inspect reader for (log files, the files a quoted glob
matched, log directories), so that ``kpass report logs/`` reads the logs ``inspect view --log-dir
logs`` lists, and no sample twice. The rules are Inspect 0.3.285's own, restated here so that a
listing costs no ``inspect_ai`` import (``tests/adapters/test_inspect_log_dirs.py`` checks them
against Inspect's functions):

- **Listed logs** (``inspect_ai.log.list_eval_logs``, ``is_log_file``): every file below a
  directory, recursively, hidden directories included, whose name ends in ``.eval``, or ends in
  ``.json`` and starts with a timestamp (``2025-01-31T12-00-00...``). A ``.json`` with a log name
  that is not an Inspect log by its content is left out too. Every file left out is counted and
  named in a note.
- **Shard sets** (``inspect_ai._util.log_layout``, ``inspect_ai.log._shards._walk``): a log
  ``<dir>/<name>.eval`` may have a companion ``<dir>/<name>.shards/`` with one directory per shard,
  ``<k>/``, holding that shard's attempts (``.eval`` files; the current attempt is the last by
  ``attempt_sort_key``: the timestamp of the name, a ``-recovered`` copy after its original, then
  the modification time). The merged log holds every shard's samples, so a set is read once:
  its merged log (the newest of ``<name>.eval`` and ``<name>-recovered.eval``) when every merged
  log given has status ``success`` and was written after every shard's current attempt (the
  condition under which ``inspect view`` hides the shards), else the current attempt of every
  shard, as one run (the set's directory, read by the reader as one log). A note says which was
  read and why. Superseded attempts, ``.json`` logs in a shard directory, logs directly in
  ``<name>.shards/`` and logs in its hidden directories are not shard attempts (Inspect's
  ``StrayFile``): left out and named.

Explicit files are read as given; the shard rule applies to every input kind alike (a glob
``'logs/**/*.eval'`` matches merged logs and shard attempts, and reads what ``logs/`` reads).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone

__all__ = ["LogSelection", "SHARDS_SUFFIX", "is_listed_log_name", "is_shard_set", "select_logs",
           "shard_set_members"]

SHARDS_SUFFIX = ".shards"
_EVAL_SUFFIX = ".eval"
_RECOVERED_SUFFIX = "-recovered"
#: ``inspect_ai.log._file._timestamp_prefix_re``: native Inspect log names start with a full ISO time.
_TIMESTAMP_PREFIX = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}")
#: Names shown in a note before "and N more".
_NAMES_SHOWN = 10


def is_listed_log_name(name: str) -> bool:
    """Whether Inspect's log listing shows a file of this name (``is_log_file`` with both formats)."""
    return name.endswith(_EVAL_SUFFIX) or (name.endswith(".json") and _TIMESTAMP_PREFIX.match(name) is not None)


def is_shard_set(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a ``<name>.shards`` directory."""
    name = os.path.basename(os.path.normpath(os.fspath(path)))
    return os.path.isdir(path) and name.endswith(SHARDS_SUFFIX) and name != SHARDS_SUFFIX


@dataclasses.dataclass(frozen=True)
class LogSelection:
    """What to read for some inputs: ``paths`` (log files and ``<name>.shards`` directories, each
    read as one run) and ``notes`` (every file left out, and which of a merged log and its shards
    was read)."""

    paths: list[str]
    notes: list[str]


@dataclasses.dataclass
class _ShardSet:
    directory: str
    attempts: dict[str, list[str]] = dataclasses.field(default_factory=dict)  # <k> -> given attempts
    merged: list[str] = dataclasses.field(default_factory=list)


def _attempt_key(path: str) -> tuple[bool, datetime, bool, float]:
    """``inspect_ai.log._shards._walk.attempt_sort_key`` on a local file."""
    name = os.path.basename(path)
    mtime = _mtime(path)
    match = _TIMESTAMP_PREFIX.match(name)
    created = None
    if match is not None:
        try:
            created = datetime.strptime(re.sub("[:-]", "", match.group(0)) + "+0000", "%Y%m%dT%H%M%S%z")
        except ValueError:
            created = None
    if created is None:
        return False, datetime.min.replace(tzinfo=timezone.utc), False, mtime
    return True, created, name.removesuffix(_EVAL_SUFFIX).endswith(_RECOVERED_SUFFIX), mtime


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def shard_set_members(directory: str) -> tuple[list[str], list[tuple[str, str]]]:
    """``(current attempts, left out)`` of a ``<name>.shards`` directory on disk.

    The current attempt of every shard directory ``<k>`` (not hidden) that holds an ``.eval``,
    in shard order (all-digit names numerically, then by name); ``left out`` pairs each other log
    file found (superseded attempts and stray logs) with the reason.
    """
    members: list[tuple[tuple[bool, int, str], str]] = []
    left_out: list[tuple[str, str]] = []
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        if entry.is_file():
            if is_listed_log_name(entry.name):
                left_out.append((entry.path, "a log directly in the shards directory, not in a shard directory"))
            continue
        if not entry.is_dir():
            continue
        files = sorted((child for child in os.scandir(entry.path) if child.is_file()), key=lambda child: child.name)
        if entry.name.startswith("."):
            left_out += [(child.path, "a log in a hidden directory of the shards directory, not a shard")
                         for child in files if is_listed_log_name(child.name)]
            continue
        attempts = sorted((child.path for child in files if child.name.endswith(_EVAL_SUFFIX)), key=_attempt_key)
        left_out += [(child.path, "a .json log in a shard directory; shards are .eval logs")
                     for child in files if child.name.endswith(".json") and is_listed_log_name(child.name)]
        if attempts:
            left_out += [(older, "earlier attempts, superseded by the last attempt of their shard")
                         for older in attempts[:-1]]
            numeric = entry.name.isascii() and entry.name.isdigit()
            members.append(((not numeric, int(entry.name) if numeric else 0, entry.name), attempts[-1]))
    return [path for _, path in sorted(members)], left_out


def _shard_of(path: str) -> tuple[str, str] | None:
    """``(<name>.shards directory, <k>)`` when ``path`` is an ``.eval`` in a shard directory."""
    shard_dir = os.path.dirname(path)
    companion = os.path.dirname(shard_dir)
    name = os.path.basename(companion)
    if (path.endswith(_EVAL_SUFFIX) and name.endswith(SHARDS_SUFFIX) and name != SHARDS_SUFFIX
            and not os.path.basename(shard_dir).startswith(".")):
        return companion, os.path.basename(shard_dir)
    return None


def _merged_candidates(companion: str) -> tuple[str, str]:
    """``<dir>/<name>.eval`` and ``<dir>/<name>-recovered.eval`` of ``<dir>/<name>.shards``."""
    base = companion[: -len(SHARDS_SUFFIX)]
    return base + _EVAL_SUFFIX, base + _RECOVERED_SUFFIX + _EVAL_SUFFIX


def _names(paths: Sequence[str], root: str | None = None) -> str:
    shown = [os.path.relpath(p, root) if root else p for p in paths[:_NAMES_SHOWN]]
    more = f" and {len(paths) - _NAMES_SHOWN} more" if len(paths) > _NAMES_SHOWN else ""
    return ", ".join(shown) + more


def _walk(directory: str, is_log: Callable[[str], bool], notes: list[str]) -> list[str]:
    """The listed logs below ``directory`` (sorted), noting every other file."""
    logs: list[str] = []
    not_named: list[str] = []
    not_inspect: list[str] = []
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            if not is_listed_log_name(name):
                not_named.append(path)
            elif name.endswith(".json") and not is_log(path):
                not_inspect.append(path)
            else:
                logs.append(path)
    if not_named:
        notes.append(f"{directory}: left out {len(not_named)} file(s) that Inspect's log listing does not show "
                     f"(only .eval files and .json files named <timestamp>_...; give a file by name to read it): "
                     f"{_names(not_named, directory)}")
    if not_inspect:
        notes.append(f"{directory}: left out {len(not_inspect)} .json file(s) named like Inspect logs that are not "
                     f"Inspect logs: {_names(not_inspect, directory)}")
    return logs


def select_logs(inputs: Iterable[str], *, is_log: Callable[[str], bool],
                status_of: Callable[[str], str | None]) -> LogSelection:
    """The logs to read for ``inputs`` (files and directories), by the rules of the module docstring.

    Parameters
    ----------
    inputs : iterable of str
        Log files and directories, in the order given.
    is_log : callable ``(path) -> bool``
        Whether a ``.json`` file found in a directory is an Inspect log (by its content).
    status_of : callable ``(path) -> str or None``
        A log's status from its header (``"success"``, ``"started"``...; None if unreadable).

    Returns
    -------
    LogSelection
    """
    notes: list[str] = []
    given: dict[str, str] = {}  # real path -> the path as given or found (first occurrence)
    reached: set[str] = set()  # real paths of every log the inputs reach, read or not
    repeated: list[str] = []
    for item in inputs:
        text = os.fspath(item)
        if is_shard_set(text):  # the set itself: its current attempts (the rest is noted below)
            found, left_out = shard_set_members(text)
            reached.update(os.path.realpath(path) for path, _ in left_out)
        elif os.path.isdir(text):
            found = _walk(text, is_log, notes)
        else:
            found = [text]
        for path in found:
            key = os.path.realpath(path)
            reached.add(key)
            if key in given:
                repeated.append(path)
            else:
                given[key] = path
    if repeated:
        notes.append(f"{len(repeated)} log(s) given twice (by name, a glob or a directory) read once: "
                     f"{_names(repeated)}")
    sets: dict[str, _ShardSet] = {}
    for path in given.values():
        shard = _shard_of(path)
        if shard is not None:
            companion, k = shard
            sets.setdefault(os.path.realpath(companion), _ShardSet(companion)).attempts.setdefault(k, []).append(path)
    merged_of = {os.path.realpath(candidate): key for key in sets for candidate in _merged_candidates(key)}
    for key, path in given.items():
        if key in merged_of:
            sets[merged_of[key]].merged.append(path)
    dropped = {key for key, path in given.items() if _stray_companion(path) in sets}
    replaced: dict[str, str] = {}  # real path of a set's first attempt -> the set's directory
    for shard_set in sets.values():
        _choose(shard_set, status_of, notes, reached, dropped, replaced)
    paths = [replaced.get(key, path) for key, path in given.items() if key not in dropped]
    return LogSelection(paths=paths, notes=notes)


def _stray_companion(path: str) -> str | None:
    """The real path of the ``.shards`` directory in which ``path`` is a log but not a shard
    attempt (directly in it, in a hidden directory of it, a ``.json`` in a shard directory)."""
    parent = os.path.dirname(path)
    if os.path.basename(parent).endswith(SHARDS_SUFFIX) and os.path.basename(parent) != SHARDS_SUFFIX:
        return os.path.realpath(parent)
    grandparent = os.path.dirname(parent)
    name = os.path.basename(grandparent)
    if name.endswith(SHARDS_SUFFIX) and name != SHARDS_SUFFIX and (
            os.path.basename(parent).startswith(".") or not path.endswith(_EVAL_SUFFIX)):
        return os.path.realpath(grandparent)
    return None


def _choose(shard_set: _ShardSet, status_of: Callable[[str], str | None], notes: list[str], reached: set[str],
            dropped: set[str], replaced: dict[str, str]) -> None:
    """Keep the merged log or the shards of one set (see the module docstring), noting which."""
    companion = shard_set.directory
    current, left_out = shard_set_members(companion)
    given_attempts = [path for attempts in shard_set.attempts.values() for path in attempts]
    attempt_keys = [os.path.realpath(path) for path in given_attempts]
    by_reason: dict[str, list[str]] = {}
    for path, reason in left_out:
        if os.path.realpath(path) in reached:
            by_reason.setdefault(reason, []).append(path)
    for reason, paths in by_reason.items():
        notes.append(f"{companion}: left out {len(paths)} file(s) that are not shard logs to read ({reason}): "
                     f"{_names(paths, companion)}")
    merged = sorted(shard_set.merged, key=_attempt_key)
    if merged:
        statuses = {path: status_of(path) for path in merged}
        newest_shard = max((_mtime(path) for path in current), default=0.0)
        unfinished = [path for path, status in statuses.items() if status != "success"]
        older = [path for path in merged if _mtime(path) <= newest_shard]
        if not unfinished and not older:
            dropped.update(attempt_keys)
            notes.append(f"{merged[-1]}: read this merged log, not the {len(current)} shard log(s) in {companion} "
                         "(it was finished after every shard and holds their samples)")
            if len(merged) > 1:
                dropped.update(os.path.realpath(path) for path in merged[:-1])
                notes.append(f"{_names(merged[:-1])}: left out, an older merged log of the shards in {companion} "
                             f"than {merged[-1]}")
            return
        dropped.update(os.path.realpath(path) for path in merged)
        why = f"its status is {statuses[unfinished[0]]!r}" if unfinished else "a shard was written after it"
        notes.append(f"{companion}: read its {len(current)} shard log(s) as one run, not the merged log "
                     f"{_names(merged)} ({why}), so that no sample counts twice")
    current_keys = [os.path.realpath(path) for path in current]
    dropped.update(key for key in attempt_keys if key not in current_keys)
    if current_keys and set(current_keys) <= set(attempt_keys):  # the whole set: one run, read as its directory
        dropped.update(current_keys[1:])
        replaced[current_keys[0]] = companion
