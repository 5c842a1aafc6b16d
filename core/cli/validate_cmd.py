"""`mkbench validate`: the task suite checks itself (see mkbench.validate)."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from tabulate import tabulate

from ..errors import MkbenchError
from ..plugins import build_registry
from ..validate import validate_task
from .common import add_tasks_dir_option, use_tasks_dirs


class ValidationFailed(MkbenchError):
    exit_code = 1


def add_parser(sub) -> None:
    p = sub.add_parser("validate", help="check every task's reference and contract against negative controls (CPU)")
    p.add_argument("--task", action="append", default=[], dest="tasks")
    p.add_argument("--category", action="append", default=[], dest="categories")
    p.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1),
                   help="tasks validated in parallel, one process each (default: CPUs, at most 4)")
    add_tasks_dir_option(p)


def _one_thread() -> None:
    """Pool workers: one torch thread each, so parallel tasks do not fight over the cores."""
    import torch
    torch.set_num_threads(1)


_registry = None


def _validate_one(qualified_name: str) -> tuple:
    global _registry
    reg = _registry = _registry or build_registry()
    task = next(t for t in reg.tasks.values() if t.qualified_name == qualified_name)
    start = time.perf_counter()
    v = validate_task(task, reg.hardware["cpu"])
    return v, time.perf_counter() - start


def run(args) -> int:
    use_tasks_dirs(args)
    reg = build_registry()
    reg.raise_problems()
    tasks = reg.select_tasks(args.tasks, args.categories)
    names = [t.qualified_name for t in tasks]
    if args.jobs > 1 and len(names) > 1:
        with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn"), initializer=_one_thread) as pool:
            outcomes = list(pool.map(_validate_one, names))
    else:
        outcomes = [_validate_one(n) for n in names]
    rows, failed = [], []
    for task, (v, seconds) in zip(tasks, outcomes):
        rows.append([task.category, task.name, v.combos, f"{v.controls_rejected}/{v.controls_run}", f"{seconds:.1f}",
                     "ok" if v.ok else v.problems[0][:100]])
        if not v.ok:
            failed.append(v)
    print(tabulate(rows, headers=["category", "task", "shape x dtype", "controls rejected", "seconds", "result"]))
    total_run = sum(int(r[3].split("/")[1]) for r in rows)
    total_rejected = sum(int(r[3].split("/")[0]) for r in rows)
    print(f"\nvalidated {len(tasks)} tasks: {len(tasks) - len(failed)} ok, {len(failed)} with problems; "
          f"{total_rejected}/{total_run} negative controls rejected")
    for v in failed:
        for p in v.problems:
            print(f"problem: {v.task}: {p}")
    if failed:
        raise ValidationFailed(f"{len(failed)} task(s) failed validation")
    return 0
