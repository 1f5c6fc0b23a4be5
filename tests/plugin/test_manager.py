"""The pluggy host: hooks, built-ins through the same hooks, duplicates, KPASS_LOAD_PLUGINS,
plugins that fail to import. Each test builds its own PluginManager (no shared state)."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import types

import numpy as np
import pytest

import kpass
from kpass import cli
from kpass.host import manager


def small_table():
    records = [
        {"model": "m", "task": "t", "problem_id": f"p{j}", "sample_index": s, "correct": (j + s) % 3 == 0}
        for j in range(6) for s in range(4)
    ]
    return kpass.SampleTable.from_records(records, source="inline")


class AlwaysHalf(kpass.MetricFamily):
    symbol = "half@"
    example = "half@2"
    description = "test family: 0.5 for every problem"

    def compute(self, problems, spec):
        return np.full(len(problems), 0.5)


def test_builtins_are_registered_through_the_hooks():
    pm = kpass.make_plugin_manager(load_entry_points=False)
    registry = kpass.get_registry(pm)
    assert list(registry.metrics) == ["pass@k", "pass^k", "G-Pass@k", "mG-Pass@k", "cons@k", "CoT-Pass@k", "fin@k"]
    assert {"jsonl", "csv", "parquet"} <= set(registry.readers)
    assert {owner for owner in registry.owners.values()} >= {"kpass.builtin"}
    assert pm.get_plugin("kpass.builtin") is not None


def test_inline_plugin_metric_works_in_specs_and_reports():
    pm = kpass.make_plugin_manager(load_entry_points=False)

    class P:
        @kpass.hookimpl
        def register_metrics(self, register):
            register("half@k", AlwaysHalf())

    plugin = P()
    pm.register(plugin, name="half-plugin")
    try:
        (spec,) = kpass.parse_metric_specs("HALF@2", plugin_manager=pm)
        assert spec.name == "half@2" and spec.family == "half@k"
        report = kpass.compute_report(small_table(), "half@2 pass@1", plugin_manager=pm, method="t", rng=0)
        row = report.row("half@2", model="m", task="t")
        assert row.estimate == 0.5 and row.n_problems == 6 and row.standard_error == 0.0
        assert kpass.get_registry(pm).owners[("metric", "half@k")] == "half-plugin"
    finally:
        pm.unregister(plugin)
    with pytest.raises(kpass.UnknownMetricError):
        kpass.parse_metric_specs("half@2", plugin_manager=pm)


def test_duplicate_name_names_both_plugins():
    pm = kpass.make_plugin_manager(load_entry_points=False)

    class P:
        @kpass.hookimpl
        def register_metrics(self, register):
            register("pass@k", AlwaysHalf())

    plugin = P()
    pm.register(plugin, name="copycat")
    try:
        with pytest.raises(ValueError, match="'pass@k' is registered by two plugins: 'kpass.builtin' and 'copycat'"):
            kpass.get_registry(pm)
        with pytest.raises(kpass.PluginConflictError):
            kpass.parse_metric_specs("pass@1", plugin_manager=pm)
    finally:
        pm.unregister(plugin)
    assert "pass@k" in kpass.get_registry(pm).metrics


def test_duplicate_spec_prefix_names_both_plugins():
    pm = kpass.make_plugin_manager(load_entry_points=False)

    class Majority(AlwaysHalf):
        symbol = "MAJ@"  # collides with the alias of cons@k, case-insensitively

    class P:
        @kpass.hookimpl
        def register_metrics(self, register):
            register("my-majority@k", Majority())

    plugin = P()
    pm.register(plugin, name="voting")
    try:
        with pytest.raises(ValueError, match=r"prefix 'MAJ@'.*'kpass.builtin' \(family 'cons@k'\) and 'voting'"):
            kpass.get_registry(pm)
    finally:
        pm.unregister(plugin)


def test_duplicate_reader_and_bad_objects():
    pm = kpass.make_plugin_manager(load_entry_points=False)

    class P:
        @kpass.hookimpl
        def register_readers(self, register):
            register("csv", object())

    plugin = P()
    pm.register(plugin, name="csv-again")
    try:
        with pytest.raises(ValueError, match="reader name 'csv' is registered by two plugins: 'kpass.builtin' and 'csv-again'"):
            kpass.get_registry(pm)
    finally:
        pm.unregister(plugin)

    class Q:
        @kpass.hookimpl
        def register_metrics(self, register):
            register("nosymbol", kpass.MetricFamily())

    plugin = Q()
    pm.register(plugin, name="q")
    try:
        with pytest.raises(TypeError, match="family 'nosymbol' from plugin 'q' needs a `symbol`"):
            kpass.get_registry(pm)
    finally:
        pm.unregister(plugin)


# ------------------------------------------------------------------------------------------
# entry points (faked: EntryPoint objects pointing at modules placed in sys.modules)


def _module(name, *, metric_symbol=None):
    module = types.ModuleType(name)
    if metric_symbol is not None:
        family = type("F", (AlwaysHalf,), {"symbol": metric_symbol})

        @kpass.hookimpl
        def register_metrics(register):
            register(f"{metric_symbol}k", family())

        module.register_metrics = register_metrics
    return module


@pytest.fixture
def fake_entry_points(monkeypatch):
    monkeypatch.setitem(sys.modules, "fake_kpass_alpha", _module("fake_kpass_alpha", metric_symbol="alpha@"))
    monkeypatch.setitem(sys.modules, "fake_kpass_beta", _module("fake_kpass_beta", metric_symbol="beta@"))
    points = [
        importlib.metadata.EntryPoint(name="alpha", value="fake_kpass_alpha", group="kpass"),
        importlib.metadata.EntryPoint(name="beta", value="fake_kpass_beta", group="kpass"),
    ]

    def entry_points(**selection):
        assert selection == {"group": "kpass"}
        return list(points)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    return points


def test_entry_points_load_and_pinning(fake_entry_points, monkeypatch):
    monkeypatch.delenv("KPASS_LOAD_PLUGINS", raising=False)
    pm = kpass.make_plugin_manager()
    assert {"alpha@k", "beta@k"} <= set(kpass.get_registry(pm).metrics)

    monkeypatch.setenv("KPASS_LOAD_PLUGINS", "beta")
    pm = kpass.make_plugin_manager()
    metrics = kpass.get_registry(pm).metrics
    assert "beta@k" in metrics and "alpha@k" not in metrics and "pass@k" in metrics  # built-ins always load

    monkeypatch.setenv("KPASS_LOAD_PLUGINS", "")
    pm = kpass.make_plugin_manager()
    assert not {"alpha@k", "beta@k"} & set(kpass.get_registry(pm).metrics)

    monkeypatch.setenv("KPASS_LOAD_PLUGINS", "alpha, gamma")
    with pytest.raises(kpass.PluginLoadError, match="names 'gamma', which no installed kpass plugin provides; installed: alpha, beta"):
        kpass.make_plugin_manager()


def test_plugin_that_fails_to_import_is_named(fake_entry_points, monkeypatch):
    monkeypatch.delenv("KPASS_LOAD_PLUGINS", raising=False)
    fake_entry_points.append(
        importlib.metadata.EntryPoint(name="broken", value="kpass_no_such_module_xyz", group="kpass"))
    with pytest.raises(kpass.PluginLoadError,
                       match=r"plugin 'broken' \(entry point 'broken = kpass_no_such_module_xyz'\) failed to import: "
                             r"ModuleNotFoundError"):
        kpass.make_plugin_manager()
    monkeypatch.setenv("KPASS_LOAD_PLUGINS", "alpha")  # pinning around the broken one works
    assert "alpha@k" in kpass.get_registry(kpass.make_plugin_manager()).metrics


def test_cli_reports_a_broken_plugin_with_exit_code_1(fake_entry_points, monkeypatch, capsys):
    monkeypatch.delenv("KPASS_LOAD_PLUGINS", raising=False)
    fake_entry_points.append(
        importlib.metadata.EntryPoint(name="broken", value="kpass_no_such_module_xyz", group="kpass"))
    kpass.reset_plugin_manager()
    try:
        assert cli.main(["metrics"]) == 1
        assert "plugin 'broken'" in capsys.readouterr().err
    finally:
        kpass.reset_plugin_manager()


def test_cli_lists_plugin_metrics(fake_entry_points, monkeypatch, capsys):
    monkeypatch.setenv("KPASS_LOAD_PLUGINS", "alpha")
    kpass.reset_plugin_manager()
    try:
        assert cli.main(["metrics"]) == 0
        out = capsys.readouterr().out
        assert "alpha@k" in out and "[alpha]" in out and "cons@k" in out
        assert cli.main(["plugins"]) == 0
        out = capsys.readouterr().out
        assert "alpha: metric alpha@k" in out and "kpass.builtin:" in out
    finally:
        kpass.reset_plugin_manager()


def test_parsing_built_in_specs_imports_no_adapter_code():
    """Parsing specs loads the plugins (their entry-point modules, which import nothing else) and
    asks only for metric families: the adapters' readers load when a reader is asked for."""
    code = ("import sys, kpass\n"
            "kpass.parse_metric_specs(['pass@1,8', 'cons@16', 'pass^4', 'g-pass@16_0.5', 'fin@1'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('kpass.adapters.')))\n"
            "kpass.choose_reader('x.jsonl')\n"
            "print('kpass.adapters.lm_eval_reader' in sys.modules)\n")
    env = {key: value for key, value in os.environ.items() if key != "KPASS_LOAD_PLUGINS"}
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == [
        "['kpass.adapters.inspect_plugin', 'kpass.adapters.lm_eval_plugin']", "True"], completed.stdout


def test_a_plugin_claiming_a_built_in_prefix_is_refused_when_specs_parse(fake_entry_points, monkeypatch):
    """No file read: the Python API (and Inspect's and lm-eval's metrics) parse specs alone."""
    class Majority:
        symbol = "mymaj@"
        aliases = ("maj@",)

    class Conflicting:
        @kpass.hookimpl
        def register_metrics(self, register):
            register("mymaj", Majority())

    monkeypatch.delenv("KPASS_LOAD_PLUGINS", raising=False)
    kpass.reset_plugin_manager()
    try:
        kpass.get_plugin_manager().register(Conflicting(), name="conflicting")
        with pytest.raises(kpass.PluginConflictError, match="'maj@'.*two plugins"):
            kpass.parse_metric_specs("pass@1")
        table = kpass.SampleTable.from_columns({
            "model": ["m"] * 4, "task": ["t"] * 4, "problem_id": ["a", "a", "b", "b"],
            "sample_index": [0, 1, 0, 1], "correct": np.array([1, 0, 1, 1], dtype=bool)}, source="memory")
        with pytest.raises(kpass.PluginConflictError):
            kpass.compute_report(table, "pass@1", rng=0)
    finally:
        kpass.reset_plugin_manager()


def test_a_plugin_family_still_parses_with_the_default_manager(fake_entry_points, monkeypatch):
    monkeypatch.delenv("KPASS_LOAD_PLUGINS", raising=False)
    kpass.reset_plugin_manager()
    try:
        assert [spec.name for spec in kpass.parse_metric_specs("pass@2 alpha@3")] == ["pass@2", "alpha@3"]
        with pytest.raises(kpass.UnknownMetricError, match="alpha@"):  # the listing names the plugins' families
            kpass.parse_metric_specs("nope@2")
    finally:
        kpass.reset_plugin_manager()


def test_the_built_in_registry_loads_no_entry_point(fake_entry_points):
    registry = manager.builtin_registry()
    assert "alpha@k" not in registry.metrics and "pass@k" in registry.metrics
    assert set(registry.owners.values()) == {"kpass.builtin"}


def test_default_manager_is_cached_and_resettable(monkeypatch):
    monkeypatch.setenv("KPASS_LOAD_PLUGINS", "")
    kpass.reset_plugin_manager()
    try:
        first = kpass.get_plugin_manager()
        assert kpass.get_plugin_manager() is first
        assert kpass.get_registry() is kpass.get_registry()  # cached while the plugins are unchanged
        kpass.reset_plugin_manager()
        assert kpass.get_plugin_manager() is not first
    finally:
        kpass.reset_plugin_manager()


def test_manager_module_uses_the_kpass_group():
    assert manager.ENTRY_POINT_GROUP == "kpass"
    pm = kpass.make_plugin_manager(load_entry_points=False, builtins=False)
    assert pm.project_name == "kpass"
    assert set(kpass.get_registry(pm).metrics) == set()


def test_public_api_reexports_the_core():
    import kpass.metrics

    assert set(kpass.metrics.__all__) <= set(kpass.__all__)
    for name in kpass.__all__:
        assert hasattr(kpass, name), name
    assert kpass.pass_at_k is kpass.metrics.pass_at_k
    assert {"hookimpl", "SampleTable", "compute_report", "parse_metric_specs", "__version__"} <= set(kpass.__all__)
