"""Checks ``kpass-lm-eval`` makes on lm-eval's tasks before the first request: greedy decoding with K > 1.

K samples of a problem decoded greedily are K copies of one generation (pass@k = pass@1, cons@k is the
one answer): the run would pay for K x N requests and learn what N requests tell. lm-eval's own
``aime24`` and ``minerva_math`` YAMLs decode greedily (``do_sample: false``, ``temperature: 0``), so
asking them for ``--kpass-samples 8`` without sampling settings is the common way into this trap.
:func:`greedy_refusal` is the one-line refusal :mod:`kpass.adapters.lm_eval_cli` stops with;
``--kpass-allow-greedy`` skips it.

Framework-side: lm-eval is imported lazily (:func:`backend_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ALLOW_GREEDY_FLAG", "backend_of", "greedy_refusal", "greedy_setting"]

#: The ``kpass-lm-eval`` flag that sends K greedy samples anyway.
ALLOW_GREEDY_FLAG = "--kpass-allow-greedy"


def backend_of(model: Any) -> str:
    """How an lm-eval model sends its sampling settings: ``"api"`` (``TemplateAPI``: ``local-completions``,
    ``local-chat-completions``, ``openai-*``), ``"hf"`` (``HFLM`` and its subclasses) or ``"other"``."""
    from lm_eval.models.api_models import TemplateAPI

    if isinstance(model, TemplateAPI):
        return "api"
    return "hf" if any(cls.__name__ == "HFLM" for cls in type(model).__mro__) else "other"


def greedy_setting(generation_kwargs: Mapping[str, Any] | None, *, backend: str) -> str | None:
    """The setting that makes a task decode greedily, as lm-eval sends it; None when it samples.

    Parameters
    ----------
    generation_kwargs : mapping or None
        The task's ``generation_kwargs`` after lm-eval merged ``--gen_kwargs`` into its YAML's
        (``simple_evaluate`` does so before ``evaluate``).
    backend : {"api", "hf", "other"}
        :func:`backend_of` the model. lm-eval's API models send ``temperature`` (0 when absent) and drop
        ``do_sample``. The other backends go through ``lm_eval.models.utils.normalize_gen_kwargs``:
        ``do_sample: false`` decodes greedily whatever the temperature, and a temperature of 0 too;
        without either, HF decodes greedily (its temperature defaults to 0) while vLLM and the others
        sample at their own default, which kpass does not call greedy.

    Returns
    -------
    str or None
        The setting in words (``"do_sample false, temperature 0.0"``, ``"no temperature (0)"``), or
        None when the task samples.

    Examples
    --------
    >>> greedy_setting({"do_sample": False, "temperature": 0.7}, backend="api") is None
    True
    >>> greedy_setting({"do_sample": False, "temperature": 0.7}, backend="hf")
    'do_sample false, temperature 0.7'
    >>> greedy_setting({"until": ["\\n"]}, backend="api")
    'no temperature (0)'
    """
    kwargs = dict(generation_kwargs or {})
    given = kwargs.get("temperature")
    try:
        temperature = None if given is None else float(given)
    except (TypeError, ValueError):
        return None  # not a number: lm-eval itself says so
    words = f"temperature {given}" if given is not None else "no temperature (0)"
    if backend != "api" and kwargs.get("do_sample") is False:
        return f"do_sample false, {words}"
    if temperature is None:
        return words if backend in ("api", "hf") else None
    return words if temperature == 0 else None


def greedy_refusal(tasks: Mapping[str, Any], repeats: Mapping[str, int], model: Any) -> str | None:
    """The one-line refusal for tasks that would get K > 1 greedy samples per problem, or None.

    Parameters
    ----------
    tasks : mapping of str to lm-eval Task
        The tasks kpass samples K times (their ``config.generation_kwargs`` are read).
    repeats : mapping of str to int
        Samples per problem each task would get (``--kpass-samples``, or the task's own ``repeats``).
    model : lm-eval LM
        The run's model (not its cache wrapper), for :func:`backend_of`.
    """
    backend = backend_of(model)
    greedy = {name: greedy_setting(task.config.generation_kwargs, backend=backend)
              for name, task in tasks.items() if repeats[name] > 1}
    named = "; ".join(f"{name} ({setting}; K={repeats[name]})" for name, setting in greedy.items() if setting)
    if not named:
        return None
    sampling = "temperature=0.6" if backend == "api" else "do_sample=True,temperature=0.6"
    return (f"task {named} decodes greedily, so the K samples of a problem would be K copies of one generation, "
            f"each sent and paid for; sample with --gen_kwargs {sampling} (or your model's own sampling "
            f"settings), or pass {ALLOW_GREEDY_FLAG} to send them anyway")
