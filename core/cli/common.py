"""Helpers shared by subcommands: the summary table and JSON export."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tabulate import tabulate

from ..metrics import geomean
from ..verdicts import Verdict

DEFAULT_STORE = "mkbench.sqlite"


def add_tasks_dir_option(parser) -> None:
    parser.add_argument("--tasks-dir", action="append", default=[], type=Path,
                        help="extra folder of <category>/<task>.py task files (also: MKBENCH_TASK_DIRS)")


def use_tasks_dirs(args) -> None:
    """--tasks-dir reaches the built-in task plugin through MKBENCH_TASK_DIRS, so spawned
    workers and plugins see the same task set."""
    if args.tasks_dir:
        current = [p for p in os.environ.get("MKBENCH_TASK_DIRS", "").split(os.pathsep) if p]
        added = [str(d.resolve()) for d in args.tasks_dir]
        os.environ["MKBENCH_TASK_DIRS"] = os.pathsep.join(dict.fromkeys(current + added))  # no folder twice


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


SPEEDUP_HEADERS = ["vs eager", "vs compile", "vs eager (large)", "vs compile (large)"]


def speedup_cells(s: dict[str, Any], fmt) -> list[str]:
    """Speedup cells of a summary line: blank for baselines, 'interpreted' under an emulator."""
    keys = ("speedup_eager", "speedup_compile", "speedup_eager_large", "speedup_compile_large")
    if s["is_baseline"]:
        return [""] * len(keys)
    if s["interpreted"]:
        return ["interpreted"] * len(keys)
    return [fmt(s[k]) for k in keys]


SCREEN_LINES = 30  # more candidates than this: a per-category summary instead of one line each


def print_summary(summary: list[dict[str, Any]]) -> None:
    cands = [s for s in summary if not s["is_baseline"]]
    if len(summary) <= SCREEN_LINES:
        rows = []
        for s in summary:
            note = s["error"][:70].replace("\n", " ") if s["verdict"] != Verdict.CORRECT else ""
            rows.append([s["category"], s["task"], s["method"], s["verdict"], s["correct"], *speedup_cells(s, _fmt),
                         note])
        print(tabulate(rows, headers=["category", "task", "method", "verdict", "correct", *SPEEDUP_HEADERS, "note"]))
    else:
        _print_by_category(cands)
    ok = sum(s["verdict"] == Verdict.CORRECT for s in cands)
    print(f"\n{ok}/{len(cands)} candidates correct on every evaluated shape and dtype (speedup = baseline median / "
          "candidate median; geometric mean over all shapes and dtypes, and over the large shapes; only for candidates "
          "correct on every one)")
    built = sum(s["verdict"] == Verdict.COMPILED for s in cands)
    if built:
        print(f"{built}/{len(cands)} candidates compiled only: this machine can build them but not run them")


def _print_by_category(cands: list[dict[str, Any]]) -> None:
    """One screen for a whole corpus: verdict counts per category, the geometric-mean speedup of the
    correct ones on the large shapes, and the first candidates that are not correct."""
    shown = [Verdict.CORRECT, Verdict.FRAMEWORK, Verdict.INCORRECT, Verdict.HACK, Verdict.MISSING]
    rows = []
    for category in sorted({s["category"] for s in cands}):
        group = [s for s in cands if s["category"] == category]
        counts = [sum(s["verdict"] == v for s in group) for v in shown]
        other = len(group) - sum(counts)
        interpreted = any(s["interpreted"] for s in group)
        speed = "interpreted" if interpreted else _fmt(geomean(s["speedup_eager_large"] for s in group
                                                               if s["verdict"] == Verdict.CORRECT))
        rows.append([category, len(group), *counts, other, speed])
    print(tabulate(rows, headers=["category", "tasks", *[str(v) for v in shown], "other", "vs eager (large)"]))
    failing = [s for s in cands if s["verdict"] not in (Verdict.CORRECT, Verdict.MISSING, Verdict.COMPILED)]
    if failing:
        print(f"\nnot correct ({len(failing)}; the first 10):")
        for s in failing[:10]:
            print(f"  {s['category']}/{s['task']} [{s['method']}]: {s['verdict']}: "
                  f"{(s['error'] or '')[:100]}".replace("\n", " "))
    missing = [s["task"] for s in cands if s["verdict"] == Verdict.MISSING]
    if missing:
        print(f"\nmissing ({len(missing)}): {', '.join(missing[:20])}{' ...' if len(missing) > 20 else ''}")
