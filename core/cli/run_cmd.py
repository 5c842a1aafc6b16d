"""`mkbench run`: evaluate a backend's reference kernels or a directory of candidates."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import BadInput
from ..isolation import Limits
from ..pipeline import RunOptions, Runner
from ..summary import summarize_run
from ..plugins import build_registry
from ..store import Store
from ..timing import TimingSettings
from .common import DEFAULT_STORE, add_tasks_dir_option, export_json, print_summary, use_tasks_dirs


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="compile, check and time kernels of one backend")
    p.add_argument("--backend", default="triton", help="kernel backend (see `mkbench list backends`)")
    p.add_argument("--hw", default="auto", help="hardware profile; it must match the device present (default: auto-detect)")
    p.add_argument("--solutions", type=Path, help="directory of candidates laid out as <category>/<task>.<suffix>")
    p.add_argument("--method", help="name recorded for these candidates (default: 'reference', or the solutions folder name)")
    p.add_argument("--task", action="append", default=[], dest="tasks", help="only this task (repeatable)")
    p.add_argument("--category", action="append", default=[], dest="categories", help="only this category (repeatable)")
    p.add_argument("--shape-role", action="append", default=[], dest="shape_roles", choices=["small", "awkward", "large", "standard"],
                   help="only shapes of this role (repeatable; default: all)")
    p.add_argument("--seeds", type=int, default=2, help="input seeds per shape and dtype for correctness (default 2)")
    p.add_argument("--seed", type=int, help="base seed (default: a fresh secret seed, recorded with the run)")
    p.add_argument("--baselines", help="comma-separated baselines to time, or 'none' (default: the profile's list)")
    p.add_argument("--store", type=Path, default=Path(os.environ.get("MKBENCH_STORE", DEFAULT_STORE)), help=f"results store (default {DEFAULT_STORE})")
    p.add_argument("--resume", action="store_true", help="continue the last interrupted run with the same configuration")
    p.add_argument("--json", type=Path, help="also write this run's results as JSON")
    p.add_argument("--time-budget-ms", type=float, default=1000.0, help="timing budget per shape, dtype and method")
    p.add_argument("--no-timing", action="store_true",
                   help="compile and check correctness only (perf status 'not_timed'): for correctness sweeps, "
                        "which may then share a GPU, since no time is recorded")
    p.add_argument("--timer", choices=["events", "graph"], default="events",
                   help="GPU timing: an event pair per call (default), or CUDA-graph replays of each call")
    p.add_argument("--no-run-ahead", action="store_true",
                   help="CUDA events: no GPU spin before each timed call, so host time spent launching counts "
                        "(what a caller waits per call, not the kernel's device time)")
    p.add_argument("--timeout-compile", type=float, default=300.0, help="seconds allowed to compile a candidate")
    p.add_argument("--timeout-step", type=float, default=180.0, help="seconds allowed for one correctness check or timing")
    p.add_argument("--no-progress", action="store_true", help="plain log lines instead of a progress bar")
    add_tasks_dir_option(p)


def _names(items: list[str]) -> list[str]:
    return sorted({n.strip() for item in items for n in item.split(",") if n.strip()})


def run(args) -> int:
    if args.seeds < 1:
        raise BadInput("--seeds must be at least 1")
    if args.method and args.solutions is None:
        raise BadInput("--method names candidates from --solutions; the shipped references are always 'reference'")
    baselines = None
    if args.baselines is not None:
        baselines = [] if args.baselines == "none" else [b.strip() for b in args.baselines.split(",") if b.strip()]
    use_tasks_dirs(args)
    registry = build_registry()
    registry.raise_problems()
    options = RunOptions(
        backend=args.backend, hw=args.hw, solutions=args.solutions, method=args.method,
        # split and sorted here, so that '--task a,b' and '--task b --task a' are one run configuration (and resume)
        tasks=_names(args.tasks), categories=_names(args.categories),
        shape_roles=args.shape_roles, seeds=args.seeds, seed=args.seed, baselines=baselines,
        timing=TimingSettings(budget_ms=args.time_budget_ms, mode=args.timer, run_ahead=not args.no_run_ahead),
        limits=Limits(compile=args.timeout_compile, correctness=args.timeout_step, timing=args.timeout_step),
        resume=args.resume, timed=not args.no_timing,
    )
    registry.backend(options.backend)  # fail on an unknown name before probing the device
    store = Store(args.store)
    try:
        result = _run_with_progress(registry, store, options, plain=args.no_progress or not sys.stdout.isatty())
        run_id = result["run_id"]
        hw = result["hw"]
        print(f"\nrun {run_id} on {hw.display_name} (profile {hw.name}); results in {args.store}")
        print_summary(summarize_run(store, run_id))
        if args.json:
            export_json(store, [run_id], args.json)
            print(f"JSON written to {args.json}")
        if result["invalid"]:
            for unit in result["invalid"]:
                print(f"invalid candidate: {unit.invalid}", file=sys.stderr)
            print(f"error: {len(result['invalid'])} candidate file(s) were invalid (recorded as compile errors)", file=sys.stderr)
            return 3
        return 0
    finally:
        store.close()


def _run_with_progress(registry, store, options, plain: bool):
    if plain:
        def progress(desc, done, total):
            if desc != "done":
                print(f"[{done + 1}/{total}] {desc}", flush=True)
        return Runner(registry, store, options, progress=progress).run()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()) as bar:
        handle = bar.add_task("starting", total=None)

        def progress(desc, done, total):
            bar.update(handle, description=desc, completed=done, total=total)
        return Runner(registry, store, options, progress=progress, log=bar.console.print).run()
