"""``kpass budget`` and ``kpass decompose`` end to end (kpass.reports.budget through kpass.cli)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

from kpass.cli import main
from kpass.metrics import budget_counts, decompose_budget_counts, fin_at_k, pass_at_k

pytestmark = pytest.mark.filterwarnings("ignore::kpass.metrics.DegenerateIntervalWarning",
                                        "ignore::kpass.metrics._warnings.IntervalMethodWarning")


def prorl_like_records(n_problems: int = 1000, n: int = 10, seed: int = 0) -> list[dict]:
    """A base and an RL model run at max_tokens = 16384, built so that at B = 8192:
    fin@1 0.45 -> 0.99, F = +0.203, P = -0.026, delta pass@1 = +0.178 (Yang 2026, ProRL v2).

    Per problem, the first ``f`` samples finish within 8192 tokens (the first ``c`` of them
    correct); of the others half finish between 8193 and 16383 tokens (then correct 30% of the
    time), half stop unfinished at 16384 (stop reason "length").
    """
    rng = np.random.default_rng(seed)
    fb, cb, fm, cm = (np.zeros(n_problems, dtype=int) for _ in range(4))
    fb[:2], fm[:2], cm[:2] = n, n, n // 2       # two base-unreached problems the RL model reaches
    rest = np.arange(2, n_problems)
    fb[rest], fb[rest[:488]] = 4, 5
    cb[rest], cb[rest[:946]] = 1, 2
    fm[rest], fm[rest[-100:]] = 10, 9
    cm[rest], cm[rest[:720]] = 3, 4
    records = []
    for model, finished, correct in (("base", fb, cb), ("rl", fm, cm)):
        for j in range(n_problems):
            for i in range(n):
                if i < finished[j]:
                    tokens, done, right = int(rng.integers(300, 8193)), True, bool(i < correct[j])
                elif rng.random() < 0.5:
                    tokens, done, right = int(rng.integers(8193, 16384)), True, bool(rng.random() < 0.3)
                else:
                    tokens, done, right = 16384, False, False
                records.append({"model": model, "task": "math", "problem_id": f"p{j:04d}", "sample_index": i,
                                "correct": right, "finished": done, "output_tokens": tokens})
    return records


@pytest.fixture(scope="module")
def prorl_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("budget") / "prorl.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in prorl_like_records()))
    return path


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_decompose_reproduces_the_published_prorl_figures(prorl_file, capsys, tmp_path):
    code, out, err = _run(capsys, "decompose", prorl_file, "--baseline", "base", "--model", "rl",
                          "--budgets", "4096,8k,16384", "--format", "json", "--n-resamples", "400")
    assert code == 0, err
    rows = {row["budget"]: row for row in json.loads(out)["rows"]}
    assert set(rows) == {4096, 8192, 16384}
    at_8k = rows[8192]
    assert round(at_8k["base_fin"], 2) == 0.45 and round(at_8k["model_fin"], 2) == 0.99
    assert round(at_8k["finishing"], 3) == 0.203
    assert round(at_8k["reliability"], 3) == -0.026
    assert round(at_8k["delta"], 3) == 0.178
    for row in rows.values():
        for attribution in ("base", "reverse", "shapley"):
            total = row[f"finishing_{attribution}"] + row[f"reliability_{attribution}"] + row["reach"]
            assert total == pytest.approx(row["delta"], abs=1e-12)
    # the human-readable table shows the same figures
    code, out, _ = _run(capsys, "decompose", prorl_file, "--baseline", "base", "--model", "rl", "--budgets", "8192",
                        "--n-resamples", "200", "--plot", tmp_path / "decompose.png")
    assert code == 0
    assert "fin@1 base                 0.4500" in out and "fin@1 model                0.9900" in out
    assert "F finishing (base)         +0.2030" in out and "P reliability (base)       -0.0260" in out
    assert "delta pass@1               +0.1780" in out
    assert (tmp_path / "decompose.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_budget_numbers_equal_the_core(prorl_file, capsys, tmp_path):
    output = tmp_path / "curve.csv"
    code, _, err = _run(capsys, "budget", prorl_file, "--budgets", "4096,8192,16384,as-run", "-k", "1,4",
                        "--format", "csv", "--output", output, "--n-resamples", "300",
                        "--plot", tmp_path / "curve.svg")
    assert code == 0, err
    rows = list(csv.DictReader(output.open()))
    assert len(rows) == 2 * 4 * 2
    records = prorl_like_records()
    for model in ("base", "rl"):
        mine = [r for r in records if r["model"] == model]
        counts = budget_counts([r["problem_id"] for r in mine], [r["correct"] for r in mine],
                               [4096, 8192, 16384, None], finished=[r["finished"] for r in mine],
                               output_tokens=[r["output_tokens"] for r in mine])
        for row in (r for r in rows if r["model"] == model):
            budget = None if row["budget"] == "" else int(row["budget"])
            n, f, c = counts.at(budget)
            k = int(row["k"])
            assert float(row["fin"]) == pytest.approx(fin_at_k(n, f, k).mean(), abs=1e-12)
            assert float(row["pass"]) == pytest.approx(pass_at_k(n, c, k).mean(), abs=1e-12)
            assert float(row["pass_given_fin"]) == pytest.approx(float(row["pass"]) / float(row["fin"]), abs=1e-12)
    # a run with max_tokens = 16384 read as it is equals truncation at its own cap
    as_run = {(r["model"], r["k"]): r["pass"] for r in rows if r["budget"] == ""}
    at_cap = {(r["model"], r["k"]): r["pass"] for r in rows if r["budget"] == "16384"}
    assert as_run == at_cap
    assert (tmp_path / "curve.svg").read_text().lstrip().startswith("<?xml")


def test_table_format_and_the_console_script(prorl_file):
    result = subprocess.run([sys.executable, "-m", "kpass.cli", "budget", str(prorl_file), "--budgets", "8192",
                             "--n-resamples", "200"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("token budgets")
    base_line = next(line for line in lines if line.startswith("base"))
    assert "8192" in base_line and "0.4500" in base_line and "0.1944" in base_line


def test_native_max_tokens_runs_are_read_as_they_are(tmp_path, capsys):
    # two runs made with max_tokens = 1024 and 4096 (no token counts at all): stop reason "length"
    # means not finished; each is read as run
    records = []
    rng = np.random.default_rng(3)
    for model, _cap, p_finish in (("m@1024", 1024, 0.3), ("m@4096", 4096, 0.8)):
        for j in range(30):
            for i in range(4):
                done = bool(rng.random() < p_finish)
                records.append({"model": model, "task": "t", "problem_id": f"q{j}", "sample_index": i,
                                "correct": done and bool(rng.random() < 0.5), "finished": done})
    path = tmp_path / "native.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out, err = _run(capsys, "budget", path, "--format", "json", "--n-resamples", "200")
    assert code == 0, err
    rows = {row["model"]: row for row in json.loads(out)["rows"]}
    for model in ("m@1024", "m@4096"):
        mine = [r for r in records if r["model"] == model]
        assert rows[model]["fin"] == pytest.approx(np.mean([r["finished"] for r in mine]))
        assert rows[model]["budget"] is None
    # truncating a run without token counts is an error naming what is missing, not a silent 0
    code, _, err = _run(capsys, "budget", path, "--budgets", "512")
    assert code == 1 and "neither `answer_token` nor `output_tokens` is known" in err


def test_tokenizer_gives_answer_positions_from_text(tmp_path, capsys):
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = ["think", "so", "answer", "7", "9"]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(["[UNK]", *words])}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer_path = tmp_path / "tokenizer.json"
    tokenizer.save(str(tokenizer_path))
    # answers complete at token 3 + thinking length; the last sample never finished
    records = []
    for model, think in (("short", 2), ("long", 10)):
        for j in range(6):
            for i in range(2):
                text = " ".join(["think"] * (think + j) + ["so", "answer", "7", "so"])
                records.append({"model": model, "task": "t", "problem_id": f"q{j}", "sample_index": i,
                                "correct": i == 0, "finished": True, "answer": "7", "metadata": {"output": text}})
    records[-1].update(finished=False, answer=None, output_tokens=30, metadata={"output": " ".join(["think"] * 30)})
    path = tmp_path / "texts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out, err = _run(capsys, "budget", path, "--budgets", "8,12", "--tokenizer", f"hf:{tokenizer_path}",
                          "--format", "json", "--n-resamples", "100")
    assert code == 0, err
    rows = {(r["model"], r["budget"]): r for r in json.loads(out)["rows"]}
    # "short": answer at token think + j + 3 = 5 + j; within 8 for j <= 3, within 12 for all
    assert rows["short", 8]["fin"] == pytest.approx(4 / 6) and rows["short", 12]["fin"] == 1.0
    # "long": 13 + j > 12: nothing finished within 12 (pass | fin undefined, warned)
    assert rows["long", 12]["fin"] == 0.0 and rows["long", 12]["pass_given_fin"] is None or np.isnan(
        rows["long", 12]["pass_given_fin"])
    assert "no sample finished within budget 12" in err
    code, _, err = _run(capsys, "budget", path, "--budgets", "8", "--tokenizer", "tiktoken:no_such_encoding")
    assert code == 2 and "unknown encoding" in err


def test_decompose_errors(prorl_file, tmp_path, capsys):
    code, _, err = _run(capsys, "decompose", prorl_file, "--baseline", "base", "--model", "gpt")
    assert code == 2 and "no such model" in err and "base, rl" in err
    code, _, err = _run(capsys, "decompose", prorl_file, "--baseline", "base", "--model", "rl", "--budgets", "32768")
    assert code == 1 and "budget 32768 is beyond what was generated" in err and "16384 tokens" in err
    assert "prorl.jsonl line" in err and "'p0002'" in err
    code, _, err = _run(capsys, "decompose", prorl_file, "--baseline", "base", "--model", "rl", "--budgets", "4k,x")
    assert code == 2
    code, _, err = _run(capsys, "decompose", prorl_file, "--baseline", "base", "--model", "rl", "--plot", tmp_path / "a.pdf")
    assert code == 2 and ".png or .svg" in err
    # unmatched problems need --intersect
    lines = prorl_file.read_text().splitlines()
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(line for line in lines if '"p0999"' not in line or '"rl"' not in line) + "\n")
    code, _, err = _run(capsys, "decompose", partial, "--baseline", "base", "--model", "rl", "--budgets", "8192",
                        "--n-resamples", "50")
    assert code == 1 and "only in base (first: ['p0999'])" in err
    code, out, err = _run(capsys, "decompose", partial, "--baseline", "base", "--model", "rl", "--budgets", "8192",
                          "--n-resamples", "50", "--intersect", "--format", "csv")
    assert code == 0, err
    assert next(csv.DictReader(out.splitlines()))["n_problems"] == "999"


def test_cluster_bootstrap_through_the_cli(prorl_file, tmp_path, capsys):
    records = [dict(r, subject=f"s{int(r['problem_id'][1:]) % 20}") for r in prorl_like_records(200)]
    path = tmp_path / "clustered.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out, err = _run(capsys, "decompose", path, "--baseline", "base", "--model", "rl", "--budgets", "8192",
                          "--cluster-by", "subject", "--format", "json", "--n-resamples", "200")
    assert code == 0, err
    row = json.loads(out)["rows"][0]
    assert row["n_clusters"] == 20
    base = [r for r in records if r["model"] == "base"]
    rl = [r for r in records if r["model"] == "rl"]
    args = ([r["problem_id"] for r in base], [r["correct"] for r in base], [8192])
    counts_base = budget_counts(*args, finished=[r["finished"] for r in base],
                                output_tokens=[r["output_tokens"] for r in base])
    counts_rl = budget_counts([r["problem_id"] for r in rl], [r["correct"] for r in rl], [8192],
                              finished=[r["finished"] for r in rl], output_tokens=[r["output_tokens"] for r in rl])
    clusters = {f"p{j:04d}": f"s{j % 20}" for j in range(200)}
    (expected,) = decompose_budget_counts(counts_base, counts_rl, clusters=clusters, rng=0, n_resamples=200)
    assert row["finishing"] == pytest.approx(expected.finishing.estimate, abs=1e-12)
    assert row["finishing_low"] == pytest.approx(expected.finishing.low, abs=1e-12)
