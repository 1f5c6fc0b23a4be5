"""A command flows one way: what ``kpass report`` prints is what :func:`kpass.compute_report`
returns, rendered; the CLI adds nothing to the result after the computation."""

from __future__ import annotations

import json
import pathlib

import pytest

import kpass
from kpass.render.formatting import format_report
from kpass.reports.options import DEFAULT_SEED
from kpass.reports.selection import SelectedModel, SelectionBiasColumn

CHECKPOINTS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "sample_tables" / "checkpoints.jsonl"


@pytest.fixture(scope="module")
def table():
    return kpass.read_samples(CHECKPOINTS)


@pytest.mark.parametrize("selected", [(), ("step-1500",)])
def test_the_python_api_gives_what_kpass_report_prints(run_cli, table, selected):
    flags = [flag for model in selected for flag in ("--selected-on-this-set", model)]
    code, out, err = run_cli("report", CHECKPOINTS, "-m", "pass@1,4", "--format", "json", "--no-progress", *flags)
    assert code == 0, err
    report = kpass.compute_report(table, "pass@1,4", selected_on_this_set=selected, rng=DEFAULT_SEED)
    assert json.loads(out) == json.loads(format_report(report, "json"))
    assert report.selection_bias and all(isinstance(entry, SelectionBiasColumn) for entry in report.selection_bias)
    assert any(note.kind == "selection-bias" for note in report.notes)
    chosen = [model for entry in report.selection_bias for model in entry.selected]
    assert [model.model for model in chosen] == list(selected) * len(report.selection_bias)
    for model in chosen:
        assert isinstance(model, SelectedModel) and model.corrected < model.estimate


def test_the_selection_bias_can_be_left_out(table):
    with_bias = kpass.compute_report(table, "pass@1")
    without = kpass.compute_report(table, "pass@1", selection_bias=False)
    assert without.selection_bias == [] and "selection_bias" not in without.as_dict()
    assert [note for note in with_bias.notes if note not in without.notes] == \
        [note for note in with_bias.notes if note.kind == "selection-bias"]
    assert [row.estimate for row in with_bias.rows] == [row.estimate for row in without.rows]


def test_a_selected_model_must_be_in_the_input(table):
    with pytest.raises(kpass.UsageError, match="--selected-on-this-set 'nobody' is not a model in the input"):
        kpass.compute_report(table, "pass@1", selected_on_this_set=["nobody"])


def test_an_entry_says_itself_as_the_json_it_was():
    entry = SelectionBiasColumn(column="pass@1", task="math", metric="pass@1", models=("a", "b", "c"), n_models=3,
                                n_problems=40, best="c", inflation=0.02, sigma=0.03, inflation_in_sigma=0.7,
                                independent_in_sigma=0.85, mean_correlation=None,
                                selected=(SelectedModel("b", 0.5, 0.48),))
    assert entry.as_dict() == {
        "column": "pass@1", "task": "math", "metric": "pass@1", "models": ["a", "b", "c"], "n_models": 3,
        "n_problems": 40, "best": "c", "inflation": 0.02, "sigma": 0.03, "inflation_in_sigma": 0.7,
        "independent_in_sigma": 0.85, "mean_correlation": None,
        "selected": [{"model": "b", "estimate": 0.5, "corrected": 0.48}]}
    assert list(entry.as_dict()) == ["column", "task", "metric", "models", "n_models", "n_problems", "best",
                                     "inflation", "sigma", "inflation_in_sigma", "independent_in_sigma",
                                     "mean_correlation", "selected"]  # the JSON's order, as before
