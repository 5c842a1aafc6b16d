"""`mkbench validate`: the task suite checks itself (see mkbench.validate)."""

from __future__ import annotations

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
    add_tasks_dir_option(p)


def run(args) -> int:
    use_tasks_dirs(args)
    reg = build_registry()
    reg.raise_problems()
    tasks = reg.select_tasks(args.tasks, args.categories)
    rows, failed = [], []
    for task in tasks:
        v = validate_task(task, reg.hardware["cpu"])
        rows.append([task.category, task.name, v.combos, f"{v.controls_rejected}/{v.controls_run}",
                     "ok" if v.ok else v.problems[0][:100]])
        if not v.ok:
            failed.append(v)
    print(tabulate(rows, headers=["category", "task", "shape x dtype", "controls rejected", "result"]))
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
