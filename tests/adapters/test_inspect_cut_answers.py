"""One rule for cut answers on Inspect (issue #33 point 2): answers that ``match(numeric=True)`` pulls out
of generations stopped at ``max_tokens`` abstain from cons@k, live and post hoc.

One real ``inspect eval`` run (module fixture) of ``inspect_fixtures/kpass_cut_answers_task.py``: 12
problems x 8 epochs, some generations cut with a number in the cut text. cons@8 over 8 epochs is the
plain majority vote of every problem's 8 answers (ties split evenly), counted here by hand from the
fixture's script, once with the cut answers abstaining and once with them voting. Expected: kpass's live
metrics (``kpass_metrics`` on ``kpass_scorer``), its ``kpass/cons_at`` epoch reducer, and ``kpass
report`` on the logs (``kpass_scorer``'s log and a plain ``match(numeric=True)`` log, whose stop reasons
the reader reads) all give the abstaining number by default, the voting one with ``cons@8[cut=vote]``
or ``--cut-answers vote``, and say how many answers abstained.
"""

from __future__ import annotations

import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log


def _texts(notes):
    """Notes (``kpass.Note`` or their JSON records) as ``rows: text`` lines, to search in."""
    from kpass.notes import as_note

    return [str(as_note(note)) for note in notes]



FIXTURES = Path(__file__).resolve().parent / "inspect_fixtures"
sys.path.insert(0, str(FIXTURES))
sys.path.insert(0, str(FIXTURES.parent))  # the shared helpers of the end-to-end modules
from inspect_runs import report_estimates, run_fixture_tasks
import kpass_cut_answers_task as fx



def _vote(problem: int, abstain: bool) -> Fraction:
    """cons@8 of one problem: its 8 answers' majority vote (ties split), cut wrong answers abstaining."""
    votes = Counter()
    for value, cut in fx.draws(problem):
        if cut and value != "G" and abstain:   # a cut draw holding the gold answer is correct: it votes
            continue
        votes[value] += 1
    top = max(votes.values())
    winners = [value for value, count in votes.items() if count == top]
    return Fraction(1, len(winners)) if "G" in winners else Fraction(0)


def _mean(values) -> float:
    values = list(values)
    return float(sum(values) / len(values))


CONS_ABSTAIN = _mean(_vote(p, True) for p in range(fx.N_PROBLEMS))
CONS_VOTE = _mean(_vote(p, False) for p in range(fx.N_PROBLEMS))
ABSTAINED = sum(cut and value != "G" for p in range(fx.N_PROBLEMS) for value, cut in fx.draws(p))
FIN = _mean(Fraction(sum(not cut or value == "G" for value, cut in fx.draws(p)), fx.EPOCHS)
            for p in range(fx.N_PROBLEMS))


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict:
    found = run_fixture_tasks(tmp_path_factory.mktemp("inspect_cut_answers"),
                              "kpass_cut_answers_task.py", ["cut_kpass", "cut_plain"])
    for path in found.values():
        assert read_eval_log(str(path), header_only=True).status == "success"
    return found


_report = report_estimates


def test_the_script_makes_the_two_rules_differ():
    assert ABSTAINED == 33   # 11 cut wrong answers in every 4 problems; the cut gold answers vote
    assert (CONS_ABSTAIN, CONS_VOTE) == (0.75, 0.375)


def test_live_metrics_and_the_reducer_abstain_by_default(logs):
    header = read_eval_log(str(logs["cut_kpass"]), header_only=True)
    metrics = {name: metric for score in header.results.scores for name, metric in score.metrics.items()}
    assert metrics["cons@8"].value == pytest.approx(CONS_ABSTAIN, abs=1e-12)
    assert metrics["cons@8[cut=vote]"].value == pytest.approx(CONS_VOTE, abs=1e-12)
    assert metrics["fin@1"].value == pytest.approx(FIN, abs=1e-12)
    notes = _texts(metrics["cons@8"].params["kpass"]["notes"])
    assert any(f"cons@8: {ABSTAINED} of {fx.N_PROBLEMS * fx.EPOCHS} answers come from unfinished generations (cut "
               "at the token limit) and abstain" in note for note in notes), notes
    # the kpass/cons_at epoch reducer, then Inspect's own mean of the per-sample values: the same number
    assert metrics["mean"].value == pytest.approx(CONS_ABSTAIN, abs=1e-12)


@pytest.mark.parametrize("task", ["cut_kpass", "cut_plain"])
def test_post_hoc_report_on_the_log_abstains_by_default(logs, capsys, task):
    rows, notes = _report(capsys, str(logs[task]), "-m", "cons@8", "cons@8[cut=vote]", "fin@1")
    assert rows["cons@8"] == pytest.approx(CONS_ABSTAIN, abs=1e-12)
    assert rows["cons@8[cut=vote]"] == pytest.approx(CONS_VOTE, abs=1e-12)
    assert rows["fin@1"] == pytest.approx(FIN, abs=1e-12)
    assert any(f"cons@8: {ABSTAINED} of {fx.N_PROBLEMS * fx.EPOCHS} answers come from unfinished generations"
               in note for note in notes), notes
    # --cut-answers vote: every cons@k spec that does not say otherwise votes
    rows, notes = _report(capsys, str(logs[task]), "-m", "cons@8", "--cut-answers", "vote")
    assert rows == {"cons@8[cut=vote]": pytest.approx(CONS_VOTE, abs=1e-12)}
    assert any("and vote (cut=vote)" in note for note in notes)
