"""The one typed registry the core talks to: backends, hardware profiles and tasks, each tagged
with the plugin that registered it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .backend import Backend
from .errors import BadInput
from .hardware import HardwareProfile, load_profile, load_profile_dir
from .task import Task, load_task_dir, load_task_file


@dataclass
class Registry:
    backends: dict[str, Backend] = field(default_factory=dict)
    hardware: dict[str, HardwareProfile] = field(default_factory=dict)
    tasks: dict[str, Task] = field(default_factory=dict)
    origin: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, name) -> plugin
    problems: list[str] = field(default_factory=list)  # one line per item a plugin failed to register

    def _add(self, kind: str, table: dict, name: str, item, plugin: str) -> None:
        if name in table:
            raise BadInput(f"{kind} {name!r} registered twice: by plugin {self.origin[(kind, name)]!r} and by "
                           f"{plugin!r}")
        table[name] = item
        self.origin[(kind, name)] = plugin

    def add_backend(self, backend: Backend, plugin: str) -> None:
        if not isinstance(backend, Backend) or not backend.name:
            raise BadInput(f"plugin {plugin!r} registered {backend!r}, which is not a named mkbench Backend")
        self._add("backend", self.backends, backend.name, backend, plugin)

    def add_hardware(self, item: HardwareProfile | str | Path, plugin: str) -> None:
        if isinstance(item, HardwareProfile):
            profiles = [item]
        elif Path(item).is_dir():
            profiles = load_profile_dir(item)
        else:
            profiles = [load_profile(item)]
        for p in profiles:
            self._add("hardware profile", self.hardware, p.name, p, plugin)

    def add_task(self, item: Task | str | Path, plugin: str) -> None:
        if isinstance(item, Task):
            if item.source is None:
                raise BadInput(f"plugin {plugin!r} registered task {item.name!r} from memory: register its file "
                               "(workers re-import tasks by path)")
            tasks = [item]
        elif Path(item).is_dir():
            tasks = load_task_dir(item)
        else:
            tasks = [load_task_file(item)]
        for t in tasks:
            self._add("task", self.tasks, t.name, t, plugin)

    def raise_problems(self) -> None:
        """Commands that act on the registry refuse to run over a malformed plugin contribution."""
        if self.problems:
            extra = f" (and {len(self.problems) - 1} more; see `mkbench plugins`)" if len(self.problems) > 1 else ""
            raise BadInput(self.problems[0] + extra)

    # --- lookups with one-line errors ------------------------------------------------
    def backend(self, name: str) -> Backend:
        try:
            return self.backends[name]
        except KeyError:
            raise BadInput(f"unknown backend {name!r} (known: {', '.join(sorted(self.backends))})") from None

    def task(self, name: str) -> Task:
        key = name.split("/")[-1]
        task = self.tasks.get(key)
        if task is None or ("/" in name and task.qualified_name != name):
            raise BadInput(f"unknown task {name!r} (see `mkbench list tasks`)")
        return task

    def select_tasks(self, names: Iterable[str] = (), categories: Iterable[str] = ()) -> list[Task]:
        # --task a,b and --task a --task b mean the same
        names = [n for item in names for n in item.split(",") if n]
        categories = [c for item in categories for c in item.split(",") if c]
        from .task import CATEGORIES
        for c in categories:
            if c not in CATEGORIES:
                raise BadInput(f"unknown category {c!r} (known: {', '.join(CATEGORIES)})")
        chosen = [self.task(n) for n in names] if names else list(self.tasks.values())
        if categories:
            chosen = [t for t in chosen if t.category in categories]
        return sorted(chosen, key=lambda t: (t.category, t.name))
