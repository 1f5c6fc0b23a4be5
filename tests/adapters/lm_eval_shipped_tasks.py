"""Copies of lm-eval's own ``aime24`` and ``minerva_math_algebra`` YAMLs over local data, for end-to-end tests.

Only the dataset is pointed at local JSONL files (``dataset_path: json`` + ``dataset_kwargs``; ``dataset_name:
null`` where the original names a Hub config); every other line, the greedy ``generation_kwargs`` included
(``do_sample: false``, ``temperature: 0``), is lm-eval's. Each replacement checks that the line it replaces is
there, so a changed lm-eval fails loudly rather than testing something else. The ``utils.py`` files their
``!function`` tags name are copied too. A group YAML :data:`GROUP` of both is written as lm-eval writes its
``minerva_math`` group. Loaded by file path or from the tests' folder on ``sys.path`` (not a test module).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

PROBLEMS = [(22, "+", 11), (40, "-", 13), (7, "*", 6), (91, "+", 9), (15, "*", 4), (63, "-", 27), (18, "+", 49),
            (12, "*", 12)]
TASKS = ("aime24", "minerva_math_algebra")
GROUP = "kpass_reasoning"


def solve(a: int, op: str, b: int) -> int:
    return {"+": a + b, "-": a - b, "*": a * b}[op]


def copy_task(source: Path, target: Path, replacements: list[tuple[str, str]]) -> None:
    """``source`` written to ``target`` with each ``(old, new)`` replaced; ``old`` must be there."""
    text = source.read_text(encoding="utf-8")
    for old, new in replacements:
        assert old in text, f"lm-eval's {source.name} no longer has {old!r}"
        text = text.replace(old, new)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def write_shipped_tasks(root: Path) -> Path:
    """Write the task copies and their data under ``root``; returns the include path (``root / "tasks"``)."""
    import lm_eval

    shipped = Path(lm_eval.__file__).parent / "tasks"
    tasks = root / "tasks"
    with open(root / "aime.jsonl", "w", encoding="utf-8") as handle:
        for i, (a, op, b) in enumerate(PROBLEMS):
            handle.write(json.dumps({"ID": f"2024-I-{i + 1}", "Problem": f"What is {a} {op} {b}? Put the final "
                                     "answer in \\boxed{}.", "Solution": "-", "Answer": solve(a, op, b)}) + "\n")
    with open(root / "math.jsonl", "w", encoding="utf-8") as handle:
        for i, (a, op, b) in enumerate(PROBLEMS):
            handle.write(json.dumps({"problem": f"What is {a} {op} {b}? Put the final answer in \\boxed{{}}.",
                                     "solution": f"We compute: $\\boxed{{{solve(a, op, b)}}}$.",
                                     "level": f"Level {1 + i % 5}", "type": "Algebra"}) + "\n")
    copy_task(shipped / "aime/aime24.yaml", tasks / "aime/aime24.yaml", [
        ("dataset_path: Maxwell-Jia/AIME_2024\n",
         f"dataset_path: json\ndataset_kwargs:\n  data_files:\n    train: {root / 'aime.jsonl'}\n"),
        ("  do_sample: false\n  temperature: 0.0\n", "  do_sample: false\n  temperature: 0.0\n")])
    copy_task(shipped / "minerva_math/minerva_math_algebra.yaml", tasks / "minerva_math/minerva_math_algebra.yaml", [
        ("dataset_path: EleutherAI/hendrycks_math\n",
         f"dataset_path: json\ndataset_kwargs:\n  data_files:\n    train: {root / 'math.jsonl'}\n"
         f"    test: {root / 'math.jsonl'}\n"),
        ("dataset_name: algebra\n", "dataset_name: null\n"),
        ("  do_sample: false\n  temperature: 0\n", "  do_sample: false\n  temperature: 0\n")])
    for folder in ("aime", "minerva_math"):
        shutil.copy(shipped / folder / "utils.py", tasks / folder / "utils.py")
    (tasks / f"{GROUP}.yaml").write_text(
        f"group: {GROUP}\ntask:\n" + "".join(f"  - {task}\n" for task in TASKS)
        + "aggregate_metric_list:\n  - metric: exact_match\n    aggregation: mean\n    weight_by_size: true\n"
        "metadata:\n  version: 1.0\n", encoding="utf-8")
    return tasks
