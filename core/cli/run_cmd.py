"""`mkbench run`: evaluate a backend's reference kernels or a directory of candidates."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..engine import compile_ahead
from ..engine.lane import Limits
from ..engine.runner import Runner, RunOptions
from ..engine.settings import Sharing
from ..errors import BadInput
from ..exporter import write_json
from ..integrity import DEFAULT_FRAMEWORK_THRESHOLD, FRAMEWORK_POLICIES, Policy
from ..plugins import build_registry
from ..store import Store
from ..summary import summarize_run
from ..task import DTYPES
from ..timing import TimingSettings
from . import args as check
from .common import DEFAULT_STORE, add_tasks_dir_option, print_summary, use_tasks_dirs
from .progress import make_progress


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="compile, check and time kernels of one backend")
    p.add_argument("--backend", default="triton", type=check.name, help="kernel backend (see `mkbench list backends`)")
    p.add_argument("--hw", default="auto", type=check.name,
                   help="hardware profile; it must match the device present (default: auto-detect)")
    p.add_argument("--solutions", type=check.existing_dir,
                   help="directory of candidates laid out as <category>/<task>.<suffix>")
    p.add_argument("--method", type=check.method,
                   help="name recorded for these candidates (default: 'reference', or the solutions folder name)")
    p.add_argument("--task", action="append", default=[], dest="tasks", type=check.name_list,
                   help="only this task (repeatable, or comma-separated)")
    p.add_argument("--category", action="append", default=[], dest="categories", type=check.name_list,
                   help="only this category (repeatable)")
    p.add_argument("--shuffle-tasks", type=check.seed, metavar="SEED",
                   help="evaluate the tasks in an order shuffled with SEED, so that a run cut short holds a sample "
                        "of every category (the same SEED on --resume goes on in the same order)")
    p.add_argument("--shape-role", action="append", default=[], dest="shape_roles",
                   choices=["small", "awkward", "large", "standard"],
                   help="only shapes of this role (repeatable; default: all)")
    p.add_argument("--dtype", action="append", default=[], dest="dtypes", choices=sorted(DTYPES),
                   help="only this dtype (repeatable; default: every dtype of each task)")
    p.add_argument("--time-role", action="append", default=[], dest="time_roles",
                   choices=["small", "awkward", "large", "standard"],
                   help="time only shapes of this role (repeatable; default: every checked shape); the others are "
                        "checked for correctness and recorded 'not_timed'")
    p.add_argument("--seeds", type=check.count(1, 1000), default=2,
                   help="input seeds per shape and dtype for correctness (default 2)")
    p.add_argument("--seed", type=check.seed, help="base seed (default: a fresh secret seed, recorded with the run)")
    p.add_argument("--baselines", type=check.baselines,
                   help="comma-separated baselines to time, or 'none' (default: the profile's list)")
    p.add_argument("--store", type=check.file_path, default=Path(os.environ.get("MKBENCH_STORE", DEFAULT_STORE)),
                   help=f"results store (default {DEFAULT_STORE})")
    p.add_argument("--resume", action="store_true",
                   help="continue the last interrupted run with the same configuration")
    p.add_argument("--adopt-store", action="store_true",
                   help="write to a store whose digest key is not on this machine (carried from another one): a new "
                        "key, the rows already there sealed as unverified (mkbench.store_digest)")
    p.add_argument("--json", type=check.file_path, help="also write this run's results as JSON")
    p.add_argument("--time-budget-ms", type=check.positive, default=1000.0,
                   help="timing budget per shape, dtype and method")
    p.add_argument("--no-timing", action="store_true",
                   help="compile and check correctness only (perf status 'not_timed'): for correctness sweeps, "
                        "which may then share a GPU, since no time is recorded")
    p.add_argument("--timer", choices=["events", "graph"], default="events",
                   help="GPU timing: an event pair per call (default), or CUDA-graph replays of each call")
    p.add_argument("--no-run-ahead", action="store_true",
                   help="CUDA events: no GPU spin before each timed call, so host time spent launching counts "
                        "(what a caller waits per call, not the kernel's device time)")
    p.add_argument("--timeout-compile", type=check.positive, default=300.0,
                   help="seconds allowed to compile a candidate")
    p.add_argument("--timeout-step", type=check.positive, default=180.0,
                   help="seconds allowed for one correctness check or timing")
    p.add_argument("--unit-limit", type=check.positive, default=Limits.unit, metavar="SECONDS",
                   help="seconds allowed for a whole unit (one candidate on one task: its compile, checks and "
                        "timing), not counting its waits for the device; past it the worker is killed and the step "
                        f"in flight is verdict 'timeout' (default {Limits.unit:g})")
    p.add_argument("--framework-ops", choices=FRAMEWORK_POLICIES, default="forbid",
                   help="forbid (default): a right answer with more than --framework-threshold of its work in "
                        "framework or vendor kernels is verdict 'framework'; report: it can be 'correct', its share "
                        "recorded")
    p.add_argument("--framework-threshold", type=check.fraction, default=DEFAULT_FRAMEWORK_THRESHOLD,
                   help="share of the work allowed in framework kernels under forbid (default "
                        f"{DEFAULT_FRAMEWORK_THRESHOLD})")
    p.add_argument("--workers", type=check.count(1, 1024),
                   help="processes preparing candidates on the CPU (default: the cores)")
    p.add_argument("--compile-workers", type=check.count(1, 256), metavar="N",
                   help="throwaway workers compiling candidates' JIT kernels ahead of the lanes "
                        "(default: a quarter of --workers, and up to half while the host's cores are under 85%% busy)")
    p.add_argument("--compile-ahead", choices=compile_ahead.MODES, default="backend",
                   help="where a candidate's kernels are compiled ahead of its first call, by a throwaway worker: "
                        "backend (default: the pool for Triton, nowhere for CUDA, where it has not yet paid), pool, "
                        "lane (before the unit holds memory or the device), or off (its first call compiles)")
    p.add_argument("--build-hold", choices=("keep", "release"), default="release",
                   help="while a candidate builds inside a checked call (a load_inline extension built in its first "
                        "forward: nvcc for seconds to a minute), its unit lets go of its shared hold on the device "
                        "until the build returns, so that timing phases need not wait, its worker stopped while a "
                        "phase holds the device (release, default), or keeps the hold (keep)")
    p.add_argument("--trace-call", choices=("auto", "warm", "first"), default="auto",
                   help="which call of each (shape, dtype) the correctness trace records: warm, the second, after "
                        "one untraced call on another seed's inputs (the calls the timer times, without the first "
                        "call's compile and autotuning under the profiler), or first; auto (default): warm on a GPU, "
                        "first on the CPU")
    p.add_argument("--lanes", type=check.count(1, 64),
                   help="correctness lanes per device "
                        "(default on GPUs: three quarters of the CPU cores, at most 16 for the host's GPUs together, "
                        "2 to 12 per GPU; the cores on a CPU)")
    p.add_argument("--timing-batch", type=check.count(1, 64), metavar="N",
                   help="units gathered per exclusive timing phase of a device (default: a third of its lanes; "
                        "1 drains the device for each unit as it asks)")
    p.add_argument("--timing-queue", type=check.count(0, 256), metavar="N",
                   help="units per device that may wait for their timing hold without holding a lane, the lane "
                        "starting other units meanwhile (default: as many as the lanes; 0: a unit keeps its lane)")
    p.add_argument("--timing-gather", type=check.positive, metavar="S",
                   help="seconds the first unit waiting to be timed waits for --timing-batch units before its "
                        "phase opens anyway (default: 2)")
    p.add_argument("--timing-defer", type=check.non_negative, metavar="S",
                   help="seconds a timing phase may defer for checks that have held the device over 2 s (a first "
                        "call's autotuning), other checks starting meanwhile: a ready phase opens once none is in "
                        "flight, and one still draining is given back when a check it waits for turns long "
                        "(default 30 on a GPU, 0 on the CPU: a ready phase opens and drains at once)")
    p.add_argument("--start-ahead", action=argparse.BooleanOptionalAction, default=False,
                   help="start each unit's worker (fork, confinement, CUDA context) while the unit waits for a lane, "
                        "at most one per lane, so that a lane's time goes to the unit's checks (default: off; "
                        "the worker starts once the unit has its lane)")
    p.add_argument("--memory-share", type=check.between(0.0, 2.0), metavar="F",
                   help="share of each GPU's memory the units' planned footprints may take together (default 0.75; "
                        "above 1 plans on peaks not coinciding: a unit that runs out of memory is run again alone)")
    p.add_argument("--untimed-wait", choices=["spin", "block"], default="spin",
                   help="how the processes that are never timed (judges, compile-ahead workers) wait for the GPU: "
                        "spin on a core, CUDA's default (default), or block, leaving the core to compiles")
    p.add_argument("--transfer", choices=["ipc", "area"], default="area",
                   help="how a worker hands its CUDA answers to the judge: one transfer area per worker, mapped by "
                        "the judge once per unit (default), or each tensor's own IPC handles, opened and closed per "
                        "check (on an H100 main job the area took the judge from 6.7 to 4.0 s per candidate unit)")
    p.add_argument("--memory-hold", choices=["unit", "staged"], default="unit",
                   help="how a unit holds its share of the GPU's memory budget: from its first check to its end "
                        "(default), or staged: its small combinations on a small share, the whole share from the "
                        "first combination that needs it (on an H200 main job: a quarter less waiting for memory, "
                        "no more units)")
    p.add_argument("--worker-memory-mb", type=check.count(64, 1 << 24), metavar="MIB",
                   help="cap each candidate worker's private writable memory (RLIMIT_DATA, MiB): a candidate's host "
                        "allocations beyond it fail in the candidate (an 'error' verdict) instead of exhausting the "
                        "machine (default: no cap; a worker with torch and Triton loaded starts near 250 MiB, and a "
                        "CUDA context adds to that)")
    p.add_argument("--no-confine", action="store_true",
                   help="run candidate workers unconfined (no Landlock rules, PID namespace or capability drop; "
                        "recorded in the run as 'none: --no-confine'); see README, Confinement")
    p.add_argument("--gpus", type=check.gpus, default="0",
                   help="'all' or GPU indices '0,1,...': one set of lanes per GPU")
    p.add_argument("--executor", choices=["local", "ray"], default="local", help="local processes, or a Ray cluster")
    p.add_argument("--address", type=check.name,
                   help="Ray: 'auto' or ray://host:port (default: start a local Ray instance)")
    p.add_argument("--no-baseline-cache", action="store_true",
                   help="time the baselines again even where this store holds them, measured in the same environment")
    p.add_argument("--no-progress", action="store_true", help="plain log lines instead of a progress display")
    add_tasks_dir_option(p)


def run(args) -> int:
    if args.method and args.solutions is None:
        raise BadInput("--method names candidates from --solutions; the shipped references are always 'reference'")
    if args.address and args.executor != "ray":
        raise BadInput("--address needs --executor ray")
    if args.executor == "ray":
        import importlib.util  # checked before a run is recorded: the executor imports it later
        if importlib.util.find_spec("ray") is None:
            raise BadInput("--executor ray needs the ray package, which is not installed here")
    use_tasks_dirs(args)
    registry = build_registry()
    registry.raise_problems()
    options = RunOptions(
        backend=args.backend, hw=args.hw, solutions=args.solutions, method=args.method, task_dirs=args.tasks_dir,
        # split and sorted, so that '--task a,b' and '--task b --task a' are one run configuration (and resume)
        tasks=sorted({n for item in args.tasks for n in item}),
        categories=sorted({n for item in args.categories for n in item}),
        shape_roles=args.shape_roles, dtypes=sorted(set(args.dtypes)), time_roles=sorted(set(args.time_roles)),
        seeds=args.seeds, seed=args.seed, baselines=args.baselines,
        timing=TimingSettings(budget_ms=args.time_budget_ms, mode=args.timer, run_ahead=not args.no_run_ahead),
        limits=Limits(compile=args.timeout_compile, correctness=args.timeout_step, timing=args.timeout_step,
                      unit=args.unit_limit),
        resume=args.resume, timed=not args.no_timing,
        policy=Policy(args.framework_ops, args.framework_threshold),
        workers=args.workers, compile_workers=args.compile_workers, lanes=args.lanes,
        gpus=args.gpus,
        sharing=Sharing(timing_batch=args.timing_batch, timing_queue=args.timing_queue,
                        timing_gather_s=args.timing_gather, timing_defer_s=args.timing_defer,
                        memory_share=args.memory_share, start_ahead=args.start_ahead),
        worker_memory_mb=args.worker_memory_mb,
        executor=args.executor, address=args.address,
        baseline_cache=not args.no_baseline_cache, confine=not args.no_confine, untimed_wait=args.untimed_wait,
        transfer=args.transfer, memory_hold=args.memory_hold, compile_ahead=args.compile_ahead,
        build_hold=args.build_hold, trace_call=args.trace_call, shuffle_seed=args.shuffle_tasks,
    )
    registry.backend(options.backend)  # fail on an unknown name before probing the device
    for name in options.tasks:
        registry.task(name)
    try:  # a run writes its store: where it goes is made, as for --json (a report only reads one)
        Path(args.store).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"results store {args.store}: cannot make its directory: {exc.strerror or exc}") from None
    store = Store(args.store, adopt=args.adopt_store)
    if store.adopted_now:
        print(store.adopted_now)
    try:
        progress = make_progress(plain=args.no_progress or not sys.stdout.isatty())
        with progress:
            result = Runner(registry, store, options, progress, own_process=getattr(args, "own_process", False)).run()
        run_id = result["run_id"]
        hw = result["hw"]
        print(f"\nrun {run_id} on {hw.display_name} (profile {hw.name}); results in {args.store}")
        print_summary(summarize_run(store, run_id))
        if result.get("engine_line"):
            print(result["engine_line"])
        if result.get("confinement"):
            print(f"confinement: {result['confinement']}")
        if args.json:
            write_json(store, [run_id], args.json)
            print(f"JSON written to {args.json}")
        if result["invalid"]:
            for unit in result["invalid"][:10]:
                print(f"invalid candidate: {unit.invalid}", file=sys.stderr)
            print(f"error: {len(result['invalid'])} candidate file(s) were invalid (recorded as compile errors)",
                  file=sys.stderr)
            return 3
        return 0
    finally:
        store.close()
