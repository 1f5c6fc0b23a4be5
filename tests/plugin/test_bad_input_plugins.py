"""A failing plugin is named (issue #15, item 5): a hook that raises, a reader that raises or
returns the wrong type; the CLI prints one line and exits 1."""

from __future__ import annotations

import json

import pytest

import kpass
from kpass.cli import main
from kpass.host.lookups import read_samples
from kpass.errors import PluginHookError
from kpass.host import manager


class BrokenHook:
    @kpass.hookimpl
    def register_metrics(self, register):
        raise ZeroDivisionError("division by zero in the plugin")


class _Reader:
    name = "weird"
    suffixes = (".weird",)

    def can_read(self, path):
        return str(path).endswith(".weird")


class RaisingReader(_Reader):
    def read(self, path):
        raise RuntimeError("the plugin's own bug")


class WrongTypeReader(_Reader):
    def read(self, path):
        return [{"model": "m"}]


def manager_with(plugin, name):
    pm = kpass.make_plugin_manager(load_entry_points=False)
    pm.register(plugin, name=name)
    return pm


def reader_plugin(reader):
    class Plugin:
        @kpass.hookimpl
        def register_readers(self, register):
            register("weird", reader)

    return Plugin()


def test_a_hook_that_raises_names_plugin_and_hook():
    pm = manager_with(BrokenHook(), "kpass-broken")
    with pytest.raises(PluginHookError, match=r"kpass plugin 'kpass-broken' failed in its register_metrics hook: "
                                              r"ZeroDivisionError: division by zero in the plugin"):
        kpass.get_registry(pm)


@pytest.mark.parametrize("reader, error, message", [
    (RaisingReader(), kpass.DataError,
     r"reader 'weird' \(plugin 'kpass-weird'\) failed in read\(\): RuntimeError: the plugin's own bug"),
    (WrongTypeReader(), PluginHookError,
     r"reader 'weird' \(plugin 'kpass-weird'\) returned list from read\(.*\), not a kpass.SampleTable"),
])
def test_a_failing_reader_names_plugin_and_method(tmp_path, reader, error, message):
    path = tmp_path / "x.weird"
    path.write_text("anything")
    pm = manager_with(reader_plugin(reader), "kpass-weird")
    with pytest.raises(error, match=message):
        read_samples(path, plugin_manager=pm)


@pytest.mark.parametrize("reader", [RaisingReader(), WrongTypeReader()])
def test_the_cli_prints_one_line_for_a_failing_reader(tmp_path, capsys, monkeypatch, reader):
    path = tmp_path / "x.weird"
    path.write_text("anything")
    pm = manager_with(reader_plugin(reader), "kpass-weird")
    monkeypatch.setattr(manager, "_default_manager", pm)
    monkeypatch.setattr(manager, "_registry_cache", {})
    code = main(["report", str(path)])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "kpass-weird" in err and "read(" in err


def test_the_cli_prints_one_line_for_a_failing_hook(tmp_path, capsys, monkeypatch):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"model": "m", "task": "t", "problem_id": "p", "sample_index": 0,
                                "correct": True}) + "\n")
    monkeypatch.setattr(manager, "_default_manager", manager_with(BrokenHook(), "kpass-broken"))
    monkeypatch.setattr(manager, "_registry_cache", {})
    code = main(["report", str(path)])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert "kpass-broken" in err and "register_metrics" in err
