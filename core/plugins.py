"""Plugin loading. Built-in plugins and third-party ones (entry-point group ``mkbench``) are
loaded by the same function and contribute through the same ``register_*`` hooks.

Environment:
  MKBENCH_LOAD_PLUGINS   comma-separated third-party plugin names to load ("" loads none);
                         unset loads all installed ones. Built-ins are always loaded.
  MKBENCH_TRACE_PLUGINS  when set, every hook call and result is printed to stderr.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
from dataclasses import dataclass, field

import pluggy

from . import hookspecs
from .errors import BadInput
from .registry import Registry

ENTRY_POINT_GROUP = "mkbench"
BUILTIN_PLUGINS = {
    "triton": "mkbench.backends.triton",
    "cuda": "mkbench.backends.cuda",
    "hip": "mkbench.backends.hip",
    "pallas": "mkbench.backends.pallas",
    "sycl": "mkbench.backends.sycl",
    "baselines": "mkbench.backends.baselines",
    "builtin_tasks": "mkbench.tasks",
    "builtin_hardware": "mkbench.hardware_profiles",
}
HOOKS = ("register_backends", "register_hardware_profiles", "register_tasks")


@dataclass
class PluginInfo:
    name: str
    module: str
    source: str  # "built-in", "entry point <dist> <version>", "registered in-process"
    hooks: list[str] = field(default_factory=list)
    error: str | None = None


_pm: pluggy.PluginManager | None = None
_infos: dict[str, PluginInfo] = {}


def _load(pm: pluggy.PluginManager, name: str, module_path: str, source: str) -> None:
    try:
        module = importlib.import_module(module_path)
        pm.register(module, name=name)
    except Exception as exc:  # a broken plugin is reported by `mkbench plugins`, never a crash
        _infos[name] = PluginInfo(name, module_path, source, error=f"{type(exc).__name__}: {exc}")
        return
    _infos[name] = PluginInfo(name, module_path, source)


def get_plugin_manager() -> pluggy.PluginManager:
    global _pm
    if _pm is not None:
        return _pm
    pm = pluggy.PluginManager("mkbench")
    pm.add_hookspecs(hookspecs)
    if os.environ.get("MKBENCH_TRACE_PLUGINS"):
        pm.trace.root.setwriter(lambda msg: sys.stderr.write(msg))
        pm.enable_tracing()
    for name, module_path in BUILTIN_PLUGINS.items():
        _load(pm, name, module_path, "built-in")
    wanted = os.environ.get("MKBENCH_LOAD_PLUGINS")
    allow = None if wanted is None else {n.strip() for n in wanted.split(",") if n.strip()}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist else "unknown distribution"
        if ep.name in BUILTIN_PLUGINS:
            if ep.dist is None or ep.dist.name != "mkbench":
                _infos[f"{ep.name} ({dist})"] = PluginInfo(ep.name, ep.value, f"entry point ({dist})",
                                                           error=f"not loaded: the name {ep.name!r} belongs to a "
                                                                 "built-in plugin")
            continue
        if allow is not None and ep.name not in allow:
            continue
        _load(pm, ep.name, ep.value, f"entry point ({dist})")
    _pm = pm
    return pm


def register_plugin(module_or_obj, name: str) -> None:
    """Register an in-process plugin (tests, notebooks). Undo with :func:`unregister_plugin`."""
    get_plugin_manager().register(module_or_obj, name=name)
    _infos[name] = PluginInfo(name, getattr(module_or_obj, "__name__", type(module_or_obj).__name__),
                              "registered in-process")


def unregister_plugin(name: str) -> None:
    pm = get_plugin_manager()
    plugin = pm.get_plugin(name)
    if plugin is not None:
        pm.unregister(plugin)
    _infos.pop(name, None)


def plugin_infos() -> list[PluginInfo]:
    pm = get_plugin_manager()
    out = []
    for name, info in _infos.items():
        plugin = pm.get_plugin(name)
        if plugin is not None:
            info.hooks = [h for h in HOOKS
                          if any(impl.plugin_name == name for impl in getattr(pm.hook, h).get_hookimpls())]
        out.append(info)
    return out


def build_registry() -> Registry:
    """Ask every plugin, one at a time, so each registered item is tagged with its plugin and a
    plugin that raises is reported without hiding the others' contributions."""
    pm = get_plugin_manager()
    reg = Registry()
    adders = {"register_backends": reg.add_backend, "register_hardware_profiles": reg.add_hardware,
              "register_tasks": reg.add_task}
    for hook_name, add in adders.items():
        hook = getattr(pm.hook, hook_name)
        for impl in hook.get_hookimpls():
            others = [p for n, p in pm.list_name_plugin() if n != impl.plugin_name]
            caller = pm.subset_hook_caller(hook_name, remove_plugins=others)
            if os.environ.get("MKBENCH_TRACE_PLUGINS"):
                sys.stderr.write(f"mkbench: {hook_name} -> plugin {impl.plugin_name!r}\n")
            try:
                caller(register=lambda item, _p=impl.plugin_name, _add=add: _add(item, _p))
            except BadInput as exc:
                reg.problems.append(f"plugin {impl.plugin_name!r}: {exc}")
            except Exception as exc:
                reg.problems.append(f"plugin {impl.plugin_name!r}: {hook_name} failed: {type(exc).__name__}: {exc}")
    return reg
