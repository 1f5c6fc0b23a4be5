"""One vocabulary across the public API (issue #35, point 6), read from the signatures.

The public callables are those of ``kpass.__all__`` and ``kpass.metrics.__all__`` (read with
:mod:`inspect`, methods of public classes included) and the module-level functions of the adapters
(read with :mod:`ast`, so that no framework is imported). The rules:

- counts first: ``n_samples`` before ``n_correct`` (``n_samples_a`` before ``n_correct_a``, ...);
- one ``rng`` default: ``None`` in the Python API (fresh entropy, SciPy SPEC 7); what prints numbers
  (the commands' ``--seed``, the adapters' metric factories) pins ``DEFAULT_SEED`` instead;
- ``confidence_level``, never ``significance_level``, ``alpha`` or ``level``;
- ``as_dict``, never ``to_dict``;
- the commands say ``--baseline`` and ``--confidence``; an old spelling (``--base``, ``--alpha``) is a
  hidden alias, never a visible flag;
- ``kpass.__all__`` is a literal list: the host's names, then exactly ``kpass.metrics.__all__``.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import pathlib
import re

import pytest

import kpass
import kpass.metrics
from kpass.cli.main import build_parser
from kpass.reports.report import DEFAULT_SEED

REPO = pathlib.Path(__file__).resolve().parents[2]
ADAPTERS = sorted((REPO / "adapters").glob("*.py"))
#: Names of a significance or confidence level that are not the one word (``alpha`` stays free for a
#: Beta distribution's parameter, as in ``DifficultyFit``; power's ``significance_level`` became
#: ``confidence_level``).
OTHER_LEVEL_NAMES = {"significance_level", "level", "confidence", "ci_level", "conf_level", "coverage_level"}


def _public_callables():
    """``(qualified name, callable)`` for every public function, class and public method."""
    seen = set()
    for module in (kpass.metrics, kpass):
        for name in module.__all__:
            value = getattr(module, name)
            if not callable(value) or id(value) in seen:
                continue
            seen.add(id(value))
            yield f"{module.__name__}.{name}", value
            if inspect.isclass(value):
                for attribute, member in vars(value).items():
                    if not attribute.startswith("_") and inspect.isfunction(member):
                        yield f"{module.__name__}.{name}.{attribute}", member


def _signature(value) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(value).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature
        return []


PUBLIC = dict(_public_callables())


def _adapter_functions():
    """``(module:function, ast arguments)`` of every public module-level function of the adapters."""
    for path in ADAPTERS:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                yield f"adapters/{path.name}:{node.name}", node.args


ADAPTER_FUNCTIONS = dict(_adapter_functions())


def _ast_parameters(args: ast.arguments) -> list[tuple[str, ast.expr | None]]:
    """``(name, default node or None)`` in signature order."""
    positional = args.posonlyargs + args.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    named = list(zip([a.arg for a in positional], defaults))
    return named + list(zip([a.arg for a in args.kwonlyargs], args.kw_defaults))


def _count_order_violations(names: list[str]) -> list[str]:
    wrong = []
    for position, name in enumerate(names):
        if "n_correct" in name:
            samples = name.replace("n_correct", "n_samples")
            if samples in names and names.index(samples) > position:
                wrong.append(f"{name} before {samples}")
    return wrong


def test_the_rules_see_the_whole_api():
    # a rule that reads nothing cannot fail: the API is found, with the functions each rule is about
    assert {"kpass.metrics.pass_at_k", "kpass.metrics.power_inputs_from_pilot", "kpass.metrics.icc",
            "kpass.compute_report", "kpass.metrics.required_problems"} <= set(PUBLIC)
    assert any(name.endswith(":kpass_metrics") for name in ADAPTER_FUNCTIONS)
    assert _count_order_violations(["n_correct_a", "n_samples_a"]) == ["n_correct_a before n_samples_a"]
    assert _count_order_violations(["base_n_samples", "base_n_correct", "n_samples", "k"]) == []


def test_counts_come_first_as_n_samples_then_n_correct():
    wrong = {name: bad for name, value in PUBLIC.items()
             if (bad := _count_order_violations([p.name for p in _signature(value)]))}
    wrong |= {name: bad for name, args in ADAPTER_FUNCTIONS.items()
              if (bad := _count_order_violations([n for n, _ in _ast_parameters(args)]))}
    assert not wrong, f"counts first as (n_samples, n_correct): {wrong}"


def test_a_reordered_count_is_keyword_only():
    # power_inputs_from_pilot took (n_correct_a, n_samples_a, ...): keyword-only, an old call cannot swap them
    for name in ("power_inputs_from_pilot", "icc"):
        parameters = {p.name: p for p in _signature(getattr(kpass.metrics, name))}
        counts = [p for n, p in parameters.items() if n.startswith(("n_samples", "n_correct"))]
        assert counts and all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in counts), name


def test_rng_defaults_to_none_in_the_python_api():
    with_rng = {name: p.default for name, value in PUBLIC.items() for p in _signature(value) if p.name == "rng"}
    assert len(with_rng) >= 10, sorted(with_rng)  # mean_ci, paired_difference, rank_intervals, compute_report, ...
    wrong = {name: default for name, default in with_rng.items() if default is not None}
    assert not wrong, f"rng must default to None (fresh entropy, SciPy SPEC 7): {wrong}"
    # results record the ``seed`` used; a function takes ``rng``
    assert not [name for name, value in PUBLIC.items() if inspect.isfunction(value) for p in _signature(value)
                if p.name in {"seed", "random_state", "random_seed"}], "the parameter is called rng"


def test_front_ends_pin_the_commands_seed():
    # the adapters' metric factories print numbers (in Inspect's and lm-eval's output): like --seed
    defaults = {name: default for name, args in ADAPTER_FUNCTIONS.items()
                for parameter, default in _ast_parameters(args) if parameter == "rng" and default is not None}
    assert defaults, "no adapter function with an rng default found"
    wrong = {name: ast.unparse(default) for name, default in defaults.items()
             if not (isinstance(default, ast.Constant) and default.value == DEFAULT_SEED)}
    assert not wrong, f"front ends default to rng={DEFAULT_SEED}, as kpass --seed: {wrong}"
    seeds = {action.default for parser in _subparsers().values() for action in parser._actions
             if "--seed" in action.option_strings}
    assert seeds == {DEFAULT_SEED}


def test_one_word_for_the_level():
    wrong = [f"{name}({p.name})" for name, value in PUBLIC.items() for p in _signature(value)
             if p.name in OTHER_LEVEL_NAMES]
    wrong += [f"{name}({parameter})" for name, args in ADAPTER_FUNCTIONS.items()
              for parameter, _ in _ast_parameters(args) if parameter in OTHER_LEVEL_NAMES]
    assert not wrong, f"say confidence_level: {wrong}"
    assert "confidence_level" in {p.name for p in _signature(kpass.metrics.required_problems)}


def test_as_dict_never_to_dict():
    sources = [p for folder in ("metrics", "plugin", "adapters") for p in (REPO / folder).rglob("*.py")]
    wrong = [f"{path.relative_to(REPO)}:{node.lineno}" for path in sources
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.FunctionDef) and node.name == "to_dict"]
    assert not wrong, f"result classes say as_dict: {wrong}"
    assert any(hasattr(value, "as_dict") for value in PUBLIC.values())


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


def _visible_flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """flag -> destination, for the flags ``--help`` shows."""
    return {flag: action.dest for action in parser._actions if action.help is not argparse.SUPPRESS
            for flag in action.option_strings}


def test_the_commands_say_baseline_and_confidence():
    subparsers = _subparsers()
    assert {"compare", "crossover", "decompose", "power", "leaderboard"} <= set(subparsers)
    for command, parser in subparsers.items():
        flags = _visible_flags(parser)
        assert not {"--base", "--alpha", "--significance-level"} & set(flags), command
        for flag, dest in flags.items():
            if dest in {"baseline", "base"}:
                assert flag in {"--baseline", "-b"} and dest == "baseline", (command, flag)
            if re.fullmatch(r"--(confidence.*|level|ci)", flag):
                assert flag == "--confidence", (command, flag)
    for command in ("compare", "crossover", "decompose", "power"):
        assert "--baseline" in _visible_flags(subparsers[command]), command
    assert "--confidence" in _visible_flags(subparsers["power"])


@pytest.mark.parametrize("command, old, new", [("crossover", "--base", "--baseline"),
                                               ("decompose", "--base", "--baseline"),
                                               ("power", "--alpha", "--confidence")])
def test_an_old_flag_is_a_hidden_alias_of_the_new_one(command, old, new):
    parser = _subparsers()[command]
    (alias,) = [a for a in parser._actions if old in a.option_strings]
    (current,) = [a for a in parser._actions if new in a.option_strings]
    assert alias.help is argparse.SUPPRESS and alias.dest == current.dest


def _literal_all() -> ast.List:
    tree = ast.parse((REPO / "plugin" / "__init__.py").read_text(encoding="utf-8"))
    (node,) = [n for n in tree.body if isinstance(n, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)]
    assert isinstance(node.value, ast.List), "kpass.__all__ must be a literal list"
    return node.value


def test_kpass_all_is_a_literal_list_of_the_host_then_the_core():
    names = [element.value for element in _literal_all().elts]
    assert all(isinstance(name, str) for name in names)
    assert names == list(kpass.__all__) and len(names) == len(set(names)), "duplicates in kpass.__all__"
    assert not [name for name in names if name.startswith("_") and name != "__version__"]
    core = set(kpass.metrics.__all__)
    missing, extra = core - set(names), {n for n in names if n not in core and n not in kpass._HOST_NAMES}
    assert not missing, f"kpass.metrics.__all__ names missing from kpass.__all__: {sorted(missing)}"
    assert extra <= {"__version__"}, f"names in kpass.__all__ that neither the host nor the core defines: {extra}"
    assert set(kpass._HOST_NAMES) <= set(names), sorted(set(kpass._HOST_NAMES) - set(names))
    for name in names:
        assert getattr(kpass, name) is not None, name


#: Helpers the host shares with the adapters only, and the module that owns each (#35 moved them out
#: of the top-level namespace): users never call them, so ``kpass.__all__`` does not list them.
ADAPTER_HELPERS = {
    "loads_json_strict": "kpass.data.validation", "parse_byte_size": "kpass.data.validation",
    "BoundedPattern": "kpass.data.patterns", "bounded_filter_factory": "kpass.data.patterns",
    "check_pattern": "kpass.data.patterns", "parse_reasoning_markers": "kpass.data.tokenizers",
    "IdenticalSamples": "kpass.reports.sample_checks", "identical_sample_groups": "kpass.reports.sample_checks",
    "ANSWER_EXTRACTOR_OPTIONS": "kpass.host.extractors", "write_atomically": "kpass.cli.output",
}


def test_helpers_for_the_adapters_are_public_where_they_live_not_at_the_top():
    import importlib

    assert not set(ADAPTER_HELPERS) & set(kpass.__all__)
    for name, owner in ADAPTER_HELPERS.items():
        assert name in importlib.import_module(owner).__all__, (name, owner)
        with pytest.raises(AttributeError):
            getattr(kpass, name)
    imported = {alias.name: node.module for path in ADAPTERS
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kpass")
                for alias in node.names if alias.name in ADAPTER_HELPERS}
    assert imported == {name: owner for name, owner in ADAPTER_HELPERS.items() if name in imported}
    assert len(imported) >= 8, sorted(imported)  # the adapters do use them
