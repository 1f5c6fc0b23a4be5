"""Checks ``kpass-lm-eval`` makes on lm-eval's tasks before the first request: greedy decoding with K > 1.

K samples of a problem decoded greedily are K copies of one generation (pass@k = pass@1, cons@k is the
one answer): the run would pay for K x N requests and learn what N requests tell. lm-eval's own
``aime24`` and ``minerva_math`` YAMLs decode greedily (``do_sample: false``, ``temperature: 0``), so
asking them for ``--kpass-samples 8`` without sampling settings is the common way into this trap.
:func:`greedy_refusal` is the one-line refusal :mod:`kpass.adapters.lm_eval_cli` stops with;
``--kpass-allow-greedy`` skips it.

Framework-free (plain dicts and the tasks' ``config.generation_kwargs``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ALLOW_GREEDY_FLAG", "greedy_refusal", "greedy_setting"]

#: The ``kpass-lm-eval`` flag that sends K greedy samples anyway.
ALLOW_GREEDY_FLAG = "--kpass-allow-greedy"


def greedy_setting(generation_kwargs: Mapping[str, Any] | None, *, api_model: bool) -> str | None:
    """The setting that makes a task decode greedily, as lm-eval sends it; None when it samples.

    Parameters
    ----------
    generation_kwargs : mapping or None
        The task's ``generation_kwargs`` after lm-eval merged ``--gen_kwargs`` into its YAML's
        (``simple_evaluate`` does so before ``evaluate``).
    api_model : bool
        lm-eval's API models (``TemplateAPI``: ``local-completions``, ``local-chat-completions``,
        ``openai-*``) send ``temperature`` (0 when absent) and drop ``do_sample``. The other
        backends follow ``lm_eval.models.utils.normalize_gen_kwargs``: ``do_sample: false`` decodes
        greedily whatever the temperature, and an absent temperature is 0.

    Returns
    -------
    str or None
        The setting in words (``"do_sample false, temperature 0.0"``, ``"no temperature (0)"``), or
        None when the task samples (temperature > 0, and ``do_sample`` not false off the API models).

    Examples
    --------
    >>> greedy_setting({"do_sample": False, "temperature": 0.7}, api_model=True) is None
    True
    >>> greedy_setting({"do_sample": False, "temperature": 0.7}, api_model=False)
    'do_sample false, temperature 0.7'
    >>> greedy_setting({"until": ["\\n"]}, api_model=True)
    'no temperature (0)'
    """
    kwargs = dict(generation_kwargs or {})
    try:
        temperature = float(kwargs.get("temperature", 0) or 0)
    except (TypeError, ValueError):
        return None  # not a number: lm-eval itself says so
    given = f"temperature {kwargs['temperature']}" if "temperature" in kwargs else "no temperature (0)"
    if not api_model and kwargs.get("do_sample") is False:
        return f"do_sample false, {given}"
    return None if temperature > 0 else given


def greedy_refusal(tasks: Mapping[str, Any], repeats: Mapping[str, int], *, api_model: bool) -> str | None:
    """The one-line refusal for tasks that would get K > 1 greedy samples per problem, or None.

    Parameters
    ----------
    tasks : mapping of str to lm-eval Task
        The tasks kpass samples K times (their ``config.generation_kwargs`` are read).
    repeats : mapping of str to int
        Samples per problem each task would get (``--kpass-samples``, or the task's own ``repeats``).
    api_model : bool
        See :func:`greedy_setting`.
    """
    greedy = {name: greedy_setting(task.config.generation_kwargs, api_model=api_model)
              for name, task in tasks.items() if repeats[name] > 1}
    named = "; ".join(f"{name} ({setting}; K={repeats[name]})" for name, setting in greedy.items() if setting)
    if not named:
        return None
    sampling = "temperature=0.6" if api_model else "do_sample=True,temperature=0.6"
    return (f"task {named} decodes greedily, so the K samples of a problem would be K copies of one generation, "
            f"each sent and paid for; sample with --gen_kwargs {sampling} (or your model's own sampling "
            f"settings), or pass {ALLOW_GREEDY_FLAG} to send them anyway")
