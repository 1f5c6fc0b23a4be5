"""The unclosed-reasoning rule on Inspect (issue #33): a completion that ends inside an unclosed ``<think>``
block is unfinished, whatever its stop reason, live (``kpass_scorer`` + ``kpass_metrics``) and post hoc
(``kpass report`` on a ``kpass_scorer`` log and on a plain ``match(numeric=True)`` log), with the markers
an option of the reader (``--reasoning-markers``).

One real ``inspect eval`` run of ``inspect_fixtures/kpass_open_reasoning_task.py``; every completion has
``stop_reason="stop"``, so only the markers say which are unfinished. Expected numbers are counted by
hand from the fixture's script.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from kpass.adapters.inspect_reader import records_from_log

FIXTURES = Path(__file__).resolve().parent / "inspect_fixtures"
sys.path.insert(0, str(FIXTURES))
sys.path.insert(0, str(FIXTURES.parent))  # the shared helpers of the end-to-end modules
from inspect_runs import report_estimates, run_fixture_tasks
import kpass_open_reasoning_task as fx

#: fin@1: a draw finished unless it is wrong and ends inside an unclosed block.
FIN = float(sum(Fraction(sum(not (open_block and value == "W") for value, open_block in fx.draws(p)), fx.EPOCHS)
                for p in range(fx.N_PROBLEMS)) / fx.N_PROBLEMS)
UNFINISHED = sum(open_block and value == "W" for p in range(fx.N_PROBLEMS) for value, open_block in fx.draws(p))


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict:
    found = run_fixture_tasks(tmp_path_factory.mktemp("inspect_open_reasoning"),
                              "kpass_open_reasoning_task.py", ["think_kpass", "think_plain"])
    for path in found.values():
        assert read_eval_log(str(path), header_only=True).status == "success"
    return found


_report = report_estimates


def test_the_script_has_open_blocks_that_stop_on_their_own():
    assert UNFINISHED == 12 and FIN == 0.625


def test_live_metrics_call_a_completion_inside_an_unclosed_block_unfinished(logs):
    header = read_eval_log(str(logs["think_kpass"]), header_only=True)
    metrics = {name: metric for score in header.results.scores for name, metric in score.metrics.items()}
    assert metrics["fin@1"].value == pytest.approx(FIN, abs=1e-12)


@pytest.mark.parametrize("task", ["think_kpass", "think_plain"])
def test_post_hoc_report_applies_the_markers_option(logs, capsys, task):
    rows, _ = _report(capsys, str(logs[task]), "-m", "fin@1")
    assert rows["fin@1"] == pytest.approx(FIN, abs=1e-12)
    rows, _ = _report(capsys, str(logs[task]), "-m", "fin@1", "--reasoning-markers", "<think>,</think>")
    assert rows["fin@1"] == pytest.approx(FIN, abs=1e-12)
    # none: not looked for, and every completion stopped on its own
    rows, _ = _report(capsys, str(logs[task]), "-m", "fin@1", "--reasoning-markers", "none")
    assert rows["fin@1"] == 1.0
    # other markers, never in these completions: no block is open
    rows, _ = _report(capsys, str(logs[task]), "-m", "fin@1", "--reasoning-markers", "<reasoning>,</reasoning>")
    assert rows["fin@1"] == 1.0
    records = records_from_log(logs[task])
    assert sum(r["finished"] is False for r in records) == UNFINISHED
    assert all(r["finished"] for r in records_from_log(logs[task], reasoning_markers=None))
    with pytest.raises(ValueError, match="reasoning_markers"):
        records_from_log(logs[task], reasoning_markers=("<think>", "<think>"))
