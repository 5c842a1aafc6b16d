"""`mkbench validate`: the task suite checks itself (see mkbench.validate)."""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

from tabulate import tabulate

from ..contracts import use_ieee_float32
from ..errors import BadInput, MkbenchError
from ..inputs import seed_for
from ..plugins import build_registry
from ..validate import VALIDATION_SEED, input_digest, summary, validate_task
from .common import add_tasks_dir_option, use_tasks_dirs


class ValidationFailed(MkbenchError):
    exit_code = 1


ROLES = ("small", "awkward", "large", "standard")


def add_parser(sub) -> None:
    p = sub.add_parser("validate", help="check every task's reference and contract: positive controls (eager must "
                                        "pass), negative controls (must fail), inputs the same in every process")
    p.add_argument("--task", action="append", default=[], dest="tasks")
    p.add_argument("--category", action="append", default=[], dest="categories")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="where references, controls and inputs run (default cpu; on cuda every shape by default)")
    p.add_argument("--shape-role", action="append", choices=ROLES, dest="roles",
                   help="shape roles to validate (repeatable; default: small and awkward on cpu, every role on cuda)")
    p.add_argument("--seeds", type=int, help="seeds per positive control (default: 1 on cpu, 2 on cuda)")
    p.add_argument("--with-compile", action="store_true",
                   help="also require torch.compile's build of the reference to pass (an inductor build per task and "
                        "dtype: minutes over the whole suite)")
    p.add_argument("--jobs", type=int,
                   help="tasks validated in parallel, one process each (default: CPUs, at most 4; 1 on cuda)")
    p.add_argument("--gpus", metavar="N|all",
                   help="with --device cuda: spread the parallel tasks over this many GPUs ('all': every visible "
                        "one), each process pinned to one GPU in turn (--jobs defaults to 2 per GPU)")
    p.add_argument("--summary", type=Path, metavar="PATH",
                   help="write the counts as JSON (a report's summary.json): rewritten as each task finishes, "
                        "with \"complete\": false until the run is done, so a run cut short keeps what it did")
    add_tasks_dir_option(p)


def _one_thread() -> None:
    """Pool workers: one torch thread each, so parallel tasks do not fight over the cores."""
    import torch
    torch.set_num_threads(1)


_registry = None


def _validate_one(qualified_name: str, device: str, roles: tuple, seeds: int, compile_control: bool) -> tuple:
    global _registry
    reg = _registry = _registry or build_registry()
    task = next(t for t in reg.tasks.values() if t.qualified_name == qualified_name)
    hw = reg.hardware["cpu"] if device == "cpu" else next(h for h in reg.hardware.values() if h.device == device)
    if device == "cuda":
        use_ieee_float32()  # as the engine's worker and judge compute
    start = time.perf_counter()
    v = validate_task(task, hw, shape_roles=roles, seeds=seeds, compile_control=compile_control)
    return v, time.perf_counter() - start


def _check_inputs_here(task, v, device: str) -> None:
    """The worker processes' input digests, recomputed in this one: a generator that depends on
    process state (a global RNG, an environment variable, a device query) shows here."""
    for (shape_name, dtype), digest in v.input_digests.items():
        mine = input_digest(task, task.shape(shape_name), dtype, seed_for(VALIDATION_SEED, "validate"), device)
        if mine != digest:
            v.problems.append(f"{shape_name}/{dtype}: make_inputs gave different inputs in another process "
                              "for the same seed")


def _pool(jobs: int):
    return ProcessPoolExecutor(jobs, mp_context=get_context("spawn"), initializer=_one_thread)


def _gpu_pool(jobs: int, gpus: list[str]):
    """``--gpus``: the pool's processes pinned to the GPUs in turn."""
    ctx = get_context("spawn")
    turns = ctx.Queue()
    for k in range(jobs):  # each process takes one GPU, in turn: as many processes on each
        turns.put(gpus[k % len(gpus)])
    return ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_pin_gpu, initargs=(turns,))


def _pin_gpu(turns) -> None:
    """Pool workers on several GPUs: this process sees only the GPU it took (before CUDA starts)."""
    os.environ["CUDA_VISIBLE_DEVICES"] = turns.get()
    _one_thread()


def gpu_ids(asked: str, visible: str | None, count: int) -> list[str]:
    """The GPUs ``--gpus`` names, as CUDA_VISIBLE_DEVICES entries: 'all', or the first N of those visible."""
    ids = [x for x in visible.split(",") if x.strip()] if visible else [str(i) for i in range(count)]
    ids = ids[:count]
    if asked == "all":
        n = len(ids)
    elif asked.isdigit() and int(asked) >= 1:
        n = int(asked)
    else:
        raise BadInput(f"--gpus {asked!r}: 'all' or a number of GPUs")
    if n > len(ids) or not ids:
        raise BadInput(f"--gpus {asked}: {len(ids)} GPU(s) visible here")
    return ids[:n]


def _print_line(name: str, v, seconds: float, prefix: str = "validated") -> None:
    print(f"{prefix} {name} in {seconds:.1f} s: " + ("ok" if v.ok else "; ".join(v.problems)[:2000])
          + "".join(f" (note: {n})" for n in v.notes), file=sys.stderr, flush=True)


def _retry_out_of_memory(names: list[str], outcomes: list, task_args: tuple, done=lambda: None) -> list[str]:
    """Tasks a combination of which ran out of GPU memory while other tasks shared the GPU
    (``--jobs`` > 1 on cuda: six processes with large shapes did not fit in an H100's 80 GB),
    validated again after the parallel pool is done, one at a time in one process with the
    allocator's cache emptied: only what runs out of memory alone too stays a problem. Their
    outcomes are replaced in place; returns their names."""
    todo = [i for i, (v, _) in enumerate(outcomes) if v.out_of_memory]
    if not todo:
        return []
    print(f"retrying alone, one at a time, {len(todo)} task(s) that ran out of GPU memory in parallel: "
          + ", ".join(names[i] for i in todo), file=sys.stderr, flush=True)
    with _pool(1) as pool:
        for i in todo:
            v, seconds = pool.submit(_validate_alone, names[i], *task_args).result()
            v.notes.append("retried alone after running out of GPU memory in parallel ("
                           + ", ".join(outcomes[i][0].out_of_memory) + ")")
            _print_line(names[i], v, seconds, prefix="retried alone")
            outcomes[i] = (v, seconds)
            done()
    return [names[i] for i in todo]


def _validate_alone(qualified_name: str, device: str, roles: tuple, seeds: int, compile_control: bool) -> tuple:
    _free_gpu_cache()
    try:
        return _validate_one(qualified_name, device, roles, seeds, compile_control)
    finally:
        _free_gpu_cache()


def _free_gpu_cache() -> None:
    import gc

    import torch
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def device_name(device: str) -> str:
    """The device a summary names: the GPU's name on cuda, else the host's processor."""
    if device == "cuda":
        import torch
        return torch.cuda.get_device_name()
    return f"cpu: {platform.processor() or platform.machine()}"


class _Summary:
    """``--summary PATH``: rewritten whole after each task finishes (a temporary file in the same
    folder, then os.replace: a reader, or a run killed mid-write, never sees half a file)."""

    def __init__(self, path: Path | None, tasks: list, outcomes: list, **settings):
        self.path, self.tasks, self.outcomes, self.settings = path, tasks, outcomes, settings

    def write(self, complete: bool = False) -> None:
        if self.path is None:
            return
        done = [(t.name, t.category, *o) for t, o in zip(self.tasks, self.outcomes) if o is not None]
        text = json.dumps(summary(done, complete=complete, **self.settings), indent=2) + "\n"
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def run(args) -> int:
    use_tasks_dirs(args)
    reg = build_registry()
    reg.raise_problems()
    if args.device == "cuda":
        import torch
        if not torch.cuda.is_available():
            raise BadInput("--device cuda: no CUDA device is visible here")
    tasks = reg.select_tasks(args.tasks, args.categories)
    names = [t.qualified_name for t in tasks]
    roles = tuple(args.roles or (("small", "awkward") if args.device == "cpu" else ROLES))
    seeds = args.seeds or (1 if args.device == "cpu" else 2)
    gpus = None
    if getattr(args, "gpus", None):
        if args.device != "cuda":
            raise BadInput("--gpus needs --device cuda")
        import torch
        gpus = gpu_ids(args.gpus, os.environ.get("CUDA_VISIBLE_DEVICES"), torch.cuda.device_count())
    jobs = args.jobs or (min(4, os.cpu_count() or 1) if args.device == "cpu" else 2 * len(gpus) if gpus else 1)
    # Always in other processes (spawned), so that the inputs can be compared with this one's.
    task_args = (args.device, roles, seeds, args.with_compile)
    outcomes: list = [None] * len(names)  # (TaskValidation, seconds) per task, as each finishes
    report = _Summary(getattr(args, "summary", None), tasks, outcomes, device=device_name(args.device),
                      device_kind=args.device, gpus=len(gpus) if gpus else (1 if args.device == "cuda" else 0),
                      shape_roles=list(roles), seeds=seeds, with_compile=args.with_compile)
    with (_gpu_pool(max(1, jobs), gpus) if gpus else _pool(max(1, jobs))) as pool:
        futures = {pool.submit(_validate_one, name, *task_args): i for i, name in enumerate(names)}
        for future in as_completed(futures):
            i = futures[future]
            v, seconds = future.result()
            # one line per task as it is done: a long run on a GPU that is cut short keeps what it found
            _print_line(names[i], v, seconds)
            outcomes[i] = (v, seconds)
            report.write()
    retried = _retry_out_of_memory(names, outcomes, task_args, report.write)
    # With the workers' one thread: CPU elementwise kernels split their work by thread, and the
    # vectorized and scalar paths may round the last bit differently at the split points (exp2 on
    # awkward sizes did). The engine's worker and judge run with equal thread counts.
    _one_thread()
    rows, failed = [], []
    for task, (v, seconds) in zip(tasks, outcomes):
        _check_inputs_here(task, v, args.device)
        rows.append([task.category, task.name, v.combos, f"{v.positives_passed}/{v.positives_run}",
                     f"{v.controls_rejected}/{v.controls_run}", f"{seconds:.1f}",
                     "ok" if v.ok else v.problems[0][:100]])
        if not v.ok:
            failed.append(v)
    print(tabulate(rows, headers=["category", "task", "shape x dtype", "positive controls passed",
                                  "negative controls rejected", "seconds", "result"]))
    total_run = sum(v.controls_run for v, _ in outcomes)
    total_rejected = sum(v.controls_rejected for v, _ in outcomes)
    positives = sum(v.positives_passed for v, _ in outcomes), sum(v.positives_run for v, _ in outcomes)
    print(f"\nvalidated {len(tasks)} tasks on {args.device} ({', '.join(roles)} shapes): "
          f"{len(tasks) - len(failed)} ok, {len(failed)} with problems; "
          f"{positives[0]}/{positives[1]} positive controls passed, "
          f"{total_rejected}/{total_run} negative controls rejected")
    if retried:
        print(f"retried alone after running out of GPU memory in parallel: {', '.join(retried)}")
    report.write(complete=True)  # with the problems the input check in this process added
    for v, _ in outcomes:
        for n in v.notes:
            print(f"note: {v.task}: {n}")
    for v in failed:
        for p in v.problems:
            print(f"problem: {v.task}: {p}")
    if failed:
        raise ValidationFailed(f"{len(failed)} task(s) failed validation")
    return 0
