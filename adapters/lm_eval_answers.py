r"""Answer classes and scoring functions of lm-eval's reasoning tasks, from the installed lm-eval.

cons@k votes over the answer a task's scoring compares, normalised as the task normalises it, never
over raw generations (:mod:`kpass.host.extractors`). This module knows lm-eval's families:

==========================  ==========================================  ===============================
extractor                   tasks (their ``process_results`` / filter)   answer class
==========================  ==========================================  ===============================
``lm_eval_aime``            ``aime``, ``aime24``, ``aime25``             last ``\boxed{}`` (else the
                                                                         ``$...$`` span) through aime's
                                                                         ``strip_string``
``lm_eval_math``            ``hendrycks_math_*``                         the ``$...$`` span through
                                                                         hendrycks_math's ``strip_string``
``lm_eval_minerva_math``    ``minerva_math_*``                           "Final Answer: The final answer
                                                                         is X" through minerva's
                                                                         ``normalize_final_answer``
``lm_eval_gsm8k``           ``gsm8k*`` (regex filter + ``exact_match``)  "The answer is N" with gsm8k's
                                                                         ``exact_match`` options
==========================  ==========================================  ===============================

Each calls the installed lm-eval's own functions (imported when first used), so the classes are
what that lm-eval version compares. A task is recognised by its ``process_results`` *source text*
(the results file keeps it; a live task has the function): it must equal the installed family
function's source. Tasks scored by ``metric_list`` metrics through a filter pipeline that extracts
(``regex``...) vote over the pipeline's answers, normalised with the ``exact_match`` options of the
task (``regexes_to_ignore``, ``ignore_case``, ...), as lm-eval's ``exact_match`` compares them.
Anything else has no known extractor: cons@k is refused until one is named
(``--answer-extractor`` / ``--kpass-answer``).

Post-hoc scoring (:func:`resolve_process_results`): the logged ``process_results`` source is never
executed. It is resolved to installed code, in this order: a known family above; the task's YAML
(``metadata.config_source`` when it lies in the installed lm-eval or under an ``include_path``);
a YAML of that task name under the ``include_path`` directories or the installed lm-eval's tasks
(the files lm-eval's ``TaskManager`` would index, found by a text scan). The function found
must have exactly the logged source, else the error says which code differs and how to point kpass
at the right one.
"""

from __future__ import annotations

import functools
import inspect
import re
import string
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "LM_EVAL_EXTRACTORS",
    "ProcessResultsError",
    "exact_match_normaliser",
    "family_of_source",
    "pipeline_answer_extractor",
    "register_answer_extractors",
    "resolve_process_results",
]

#: Extractor name -> the lm-eval module whose ``process_results`` defines the family.
_FAMILY_MODULES = {
    "lm_eval_aime": "lm_eval.tasks.aime.utils",
    "lm_eval_math": "lm_eval.tasks.hendrycks_math.utils",
    "lm_eval_minerva_math": "lm_eval.tasks.minerva_math.utils",
}
#: gsm8k's strict answer pattern (``gsm8k-cot-self-consistency.yaml``) and ``exact_match`` options.
_GSM8K_PATTERN = r"The answer is (\-?[0-9\.\,]*[0-9]+)"
_GSM8K_OPTIONS = {"ignore_case": True, "ignore_punctuation": False,
                  "regexes_to_ignore": [",", "\\$", "(?s).*#### ", "\\.$"]}
_MINERVA_INVALID = "[invalidanswer]"


class ProcessResultsError(ValueError):
    """A task's ``process_results`` cannot be resolved to installed code (message says how to)."""


@functools.lru_cache(maxsize=None)
def _module(name: str) -> Any:
    """The installed lm-eval task-utils module ``name`` (imported on first use: minerva's needs lm-eval[math])."""
    if name == "lm_eval.tasks.aime.utils":
        import lm_eval.tasks.aime.utils as module
    elif name == "lm_eval.tasks.hendrycks_math.utils":
        import lm_eval.tasks.hendrycks_math.utils as module
    elif name == "lm_eval.tasks.minerva_math.utils":
        import lm_eval.tasks.minerva_math.utils as module
    else:
        raise ImportError(f"no lm-eval task family module {name!r}")
    return module


def _dollar_span(text: str) -> str | None:
    """Text between the first and the last ``$`` (aime's and hendrycks_math's rule); None without two."""
    first, last = text.find("$"), text.rfind("$")
    return text[first + 1:last] if first >= 0 and last > first else None


def _aime_answer(text: str) -> str | None:
    """aime's ``process_results`` answer: the last ``\\boxed{}``, else the ``$...$`` span, through
    its ``strip_string``. A generation with neither has no extractable answer (aime would compare
    the whole text)."""
    utils = _module(_FAMILY_MODULES["lm_eval_aime"])
    answer = _dollar_span(text)
    boxed = utils.last_boxed_only_string(text)
    if boxed is not None:
        try:
            content = utils.remove_boxed(boxed)
        except (AssertionError, IndexError):
            content = None
        if content is not None:
            answer = content
    if answer is None:
        return None
    try:
        answer = utils.strip_string(answer)
    except Exception:  # noqa: BLE001 - aime's is_equiv falls back to the raw string the same way
        pass
    return answer or None


def _math_answer(text: str) -> str | None:
    """hendrycks_math's ``process_results`` answer: the ``$...$`` span through its ``strip_string``."""
    utils = _module(_FAMILY_MODULES["lm_eval_math"])
    answer = _dollar_span(text)
    if answer is None:
        return None
    try:
        answer = utils.strip_string(answer)
    except Exception:  # noqa: BLE001 - hendrycks_math's is_equiv falls back to the raw string
        pass
    return answer or None


def _minerva_answer(text: str) -> str | None:
    """minerva_math's ``exact_match`` answer: ``get_unnormalized_answer`` then ``normalize_final_answer``."""
    utils = _module(_FAMILY_MODULES["lm_eval_minerva_math"])
    raw = utils.get_unnormalized_answer(text)
    if raw == _MINERVA_INVALID:
        return None
    return utils.normalize_final_answer(raw) or None


def exact_match_normaliser(options: Mapping[str, Any], *, source: str | None = None) -> Callable[[str], str]:
    """The preprocessing lm-eval's ``exact_match`` applies to a prediction, for ``options``.

    Mirrors ``lm_eval.api.metrics.exact_match_hf_evaluate`` (0.4.13), which keeps the step inside
    the metric: each of ``regexes_to_ignore`` removed in order, then ``ignore_case`` (lower case),
    ``ignore_punctuation`` and ``ignore_numbers`` (characters deleted). Two answers it maps to one
    string are equal for ``exact_match``, so they are one answer class. With ``source`` (the
    results file the options come from) the patterns are untrusted: each runs as a
    :class:`kpass.data.patterns.BoundedPattern` (timed, charged to the run's regular-expression budget).
    """
    from kpass.data.patterns import BoundedPattern

    regexes = [BoundedPattern(pattern, source=source, field="exact_match, regexes_to_ignore") if source is not None
               else re.compile(pattern) for pattern in options.get("regexes_to_ignore") or ()]
    deleted = ((string.punctuation if options.get("ignore_punctuation") else "")
               + (string.digits if options.get("ignore_numbers") else ""))
    table = str.maketrans("", "", deleted) if deleted else None
    lower = bool(options.get("ignore_case"))

    def normalise(answer: str) -> str:
        for pattern in regexes:
            answer = pattern.sub("", answer)
        if lower:
            answer = answer.lower()
        return answer.translate(table) if table is not None else answer

    return normalise


def _gsm8k_answer(text: str) -> str | None:
    """gsm8k's answer: the first "The answer is N" (its regex filter), with its exact_match options."""
    match = re.search(_GSM8K_PATTERN, text)
    if match is None:
        return None
    return exact_match_normaliser(_GSM8K_OPTIONS)(match.group(1)) or None


LM_EVAL_EXTRACTORS: dict[str, Callable[[str], str | None]] = {
    "lm_eval_aime": _aime_answer,
    "lm_eval_math": _math_answer,
    "lm_eval_minerva_math": _minerva_answer,
    "lm_eval_gsm8k": _gsm8k_answer,
}


def _text_extractor(name: str) -> Callable[[str | None], Callable[[str], str | None]]:
    function = LM_EVAL_EXTRACTORS[name]

    def factory(argument: str | None) -> Callable[[str], str | None]:
        if argument:
            from kpass import UsageError

            raise UsageError(f"answer extractor {name!r} takes no argument; got '{name}:{argument}'.")
        return lambda text: function(text) if isinstance(text, str) else None

    return factory


def register_answer_extractors(register: Callable[..., None]) -> None:
    """Register the lm-eval families (target of the ``lm_eval`` kpass entry point's hook)."""
    for name in LM_EVAL_EXTRACTORS:
        register(name, _text_extractor(name))


# ----------------------------------------------------------------------------- task families


def _normalised_source(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _source_of(function: Any) -> str | None:
    try:
        return _normalised_source(inspect.getsource(function))
    except (OSError, TypeError):
        return None


@functools.lru_cache(maxsize=None)
def _family_sources() -> dict[str, tuple[str, Any]]:
    """Normalised source of each installed family's ``process_results`` -> (extractor, function)."""
    out = {}
    for name, module_name in _FAMILY_MODULES.items():
        try:
            function = _module(module_name).process_results
        except (ImportError, AttributeError):  # e.g. minerva_math without lm-eval[math]
            continue
        source = _source_of(function)
        if source is not None:
            out[source] = (name, function)
    return out


def family_of_source(source: str | None) -> tuple[str, Any] | None:
    """``(extractor name, installed process_results)`` of the family whose installed
    ``process_results`` has exactly this source text; None for any other source."""
    if not isinstance(source, str):
        return None
    return _family_sources().get(_normalised_source(source))


def family_of_function(function: Any) -> str | None:
    """Extractor name of a live task's ``process_results`` function (None: no family)."""
    source = _source_of(function)
    found = family_of_source(source) if source is not None else None
    return found[0] if found else None


def _installed_tasks_dir() -> Path:
    import lm_eval.tasks

    return Path(lm_eval.tasks.__file__).resolve().parent


def _within(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _process_results_of_yaml(path: Path) -> Any:
    from lm_eval.tasks._yaml_loader import load_yaml

    return load_yaml(path, resolve_func=True).get("process_results")


def _task_yamls(task: str, roots: Sequence[Path]) -> list[Path]:
    """YAML files under ``roots`` that define ``task: <task>``, found by reading their text (lm-eval's
    ``TaskManager`` parses every YAML it ships, ~20 s; a text scan finds the same files in about one)."""
    pattern = re.compile(rf"^task:\s*['\"]?{re.escape(task)}['\"]?\s*$", re.MULTILINE)
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.yaml")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if pattern.search(text):
                found.append(path.resolve())
    return found


def resolve_process_results(task: str, config: Mapping[str, Any], *,
                            include_path: Sequence[str | Path] = ()) -> tuple[Any, str | None, str]:
    """The installed ``process_results`` of a logged task, never the logged source itself.

    Parameters
    ----------
    task : str
        The task's name in the results file.
    config : Mapping
        Its config from ``results["configs"]`` (``process_results`` holds the source text).
    include_path : sequence of path
        Directories of local task YAMLs (``--include-path``), searched before the installed tasks.

    Returns
    -------
    function : callable
        ``process_results(doc, [response]) -> {metric: value}``, from installed code.
    extractor : str or None
        The answer extractor of its family (None: no known family).
    where : str
        Where the function was found, for notes.

    Raises
    ------
    ProcessResultsError
        Not found, or found with a different source (the message names the task and the option).
    """
    logged = config.get("process_results")
    known = family_of_source(logged)
    if known is not None:
        name, function = known
        return function, name, f"{function.__module__}.process_results"
    roots = [Path(p).expanduser().resolve() for p in include_path]
    candidates: list[Path] = []
    source_path = (config.get("metadata") or {}).get("config_source") if isinstance(config.get("metadata"),
                                                                                      Mapping) else None
    if isinstance(source_path, str) and source_path not in ("inline", ""):
        path = Path(source_path).expanduser()
        if path.is_file() and _within(path.resolve(), [_installed_tasks_dir(), *roots]):
            candidates.append(path.resolve())
    hint = ("point kpass at the directory of the task's YAML with --include-path DIR (kpass report) or "
            "read_lm_eval_output(..., include_path=[DIR])")
    differing: list[str] = []
    candidates.extend(_task_yamls(task, [*roots, _installed_tasks_dir()]))
    for path in dict.fromkeys(candidates):
        try:
            function = _process_results_of_yaml(path)
        except Exception as error:  # noqa: BLE001 - e.g. missing lm-eval[math]; named below
            differing.append(f"{path} (cannot load: {type(error).__name__}: {error})")
            continue
        if not callable(function):
            differing.append(f"{path} (no process_results)")
            continue
        if isinstance(logged, str) and _source_of(function) == _normalised_source(logged):
            return function, family_of_function(function), str(path)
        differing.append(f"{path} (its process_results differs from the logged one)")
    if differing:
        raise ProcessResultsError(
            f"task {task!r} scores with its own process_results and the installed code does not match the run's: "
            f"{'; '.join(differing)}. Install the lm-eval version that made the run, or {hint}")
    raise ProcessResultsError(
        f"task {task!r} scores with its own process_results, and no installed lm-eval task of that name was found "
        f"(kpass never runs the source text kept in the log); {hint}")


def pipeline_answer_extractor(*, pipeline: Any, family: str | None, custom_scoring: bool,
                              metric_options: Mapping[str, Any] | None,
                              override: Any = None) -> tuple[str | None, Callable[[Any, Any], str | None] | None]:
    """How one filter pipeline of a task gets each sample's answer class.

    Parameters
    ----------
    pipeline : kpass.adapters.lm_eval_samples.SamplePipeline
        The pipeline (its kept steps and fallbacks).
    family : str or None
        Extractor of the task's ``process_results`` family (:func:`family_of_source`).
    custom_scoring : bool
        The task scores with its own ``process_results``.
    metric_options : mapping or None
        Options of the task's ``exact_match`` entry (None: not scored by exact_match).
    override : kpass.host.extractors.AnswerExtractor, optional
        A user's extractor (``--kpass-answer``): applied to the raw generation.

    Returns
    -------
    (name, extract) or (None, None)
        ``extract(raw_generation, filtered_answer) -> answer or None``; ``(None, None)`` when no
        extractor is known (cons@k is then refused).
    """
    if override is not None:
        return override.spec, lambda raw, filtered: override.extract(raw) if isinstance(raw, str) else None

    def usable(filtered: Any) -> str | None:
        if filtered is None:
            return None
        text = filtered if isinstance(filtered, str) else str(filtered)
        return None if not text.strip() or text in pipeline.fallbacks else text

    if custom_scoring:
        if family is None:
            return None, None
        function = LM_EVAL_EXTRACTORS[family]
        return family, lambda raw, filtered: (function(text) if (text := usable(filtered)) is not None else None)
    if not pipeline.components:  # the raw generation: not an answer
        return None, None
    if metric_options is None:
        return f"filter:{pipeline.name}", lambda raw, filtered: usable(filtered)
    normalise = exact_match_normaliser(metric_options, source=pipeline.source)
    return (f"filter:{pipeline.name}+exact_match",
            lambda raw, filtered: (normalise(text) or None) if (text := usable(filtered)) is not None else None)
