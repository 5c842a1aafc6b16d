import importlib.metadata

from mkbench import plugins
from mkbench.store import Store


def test_builtins_register_through_hooks():
    reg = plugins.build_registry()
    assert reg.problems == []
    assert reg.origin[("backend", "triton")] == "triton"
    assert reg.origin[("backend", "eager")] == "baselines"
    assert reg.origin[("hardware profile", "h100")] == "builtin_hardware"
    assert reg.origin[("task", "gelu")] == "builtin_tasks"


def test_throwaway_plugin_is_listed_and_runs(throwaway_plugin, cli, store_path):
    code, out, _ = cli("plugins")
    assert code == 0
    line = next(l for l in out.splitlines() if l.startswith("throwaway"))
    assert "register_backends" in line and "registered in-process" in line

    code, out, _ = cli("list", "backends")
    assert any(l.split()[0] == "throwaway" for l in out.splitlines() if l.strip())

    code, out, err = cli("run", "--backend", "throwaway", "--task", "gelu", "--baselines", "none",
                         "--seeds", "1", "--store", store_path, "--no-progress")
    assert code == 0, err
    rows = Store(store_path).results()
    assert {r["verdict"] for r in rows if r["shape_role"] != "large"} == {"correct"}
    assert all(r["backend"] == "throwaway" for r in rows)


def test_unregistered_after_fixture():
    assert "throwaway" not in plugins.build_registry().backends


def test_plugin_that_fails_to_import_is_reported(monkeypatch, cli):
    bad = importlib.metadata.EntryPoint(name="broken", value="mkbench_no_such_module_xyz", group="mkbench")
    real = importlib.metadata.entry_points

    def fake(**kw):
        return [bad] if kw.get("group") == "mkbench" else real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", fake)
    monkeypatch.setattr(plugins, "_pm", None)
    monkeypatch.setattr(plugins, "_infos", {})
    code, out, _ = cli("plugins")
    assert code == 0
    assert "broken" in out and "FAILED: ModuleNotFoundError" in out
    # the rest still works
    code, out, _ = cli("list", "backends")
    assert code == 0 and "triton" in out


def test_load_plugins_allow_list(monkeypatch):
    ep = importlib.metadata.EntryPoint(name="extra", value="throwaway_plugin", group="mkbench")
    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **kw: [ep] if kw.get("group") == "mkbench"
                        else real(**kw))
    for setting, expected in (("", False), ("extra", True), ("other", False)):
        monkeypatch.setenv("MKBENCH_LOAD_PLUGINS", setting)
        monkeypatch.setattr(plugins, "_pm", None)
        monkeypatch.setattr(plugins, "_infos", {})
        assert ("throwaway" in plugins.build_registry().backends) is expected
    monkeypatch.setattr(plugins, "_pm", None)
    monkeypatch.setattr(plugins, "_infos", {})


def test_duplicate_name_is_a_problem(throwaway_plugin):
    import types
    dup = types.ModuleType("dup_plugin")
    from mkbench import hookimpl

    @hookimpl
    def register_backends(register):
        register(throwaway_plugin.ThrowawayBackend())
    dup.register_backends = register_backends
    plugins.register_plugin(dup, name="dup")
    try:
        reg = plugins.build_registry()
        assert any("registered twice" in p for p in reg.problems)
    finally:
        plugins.unregister_plugin("dup")
