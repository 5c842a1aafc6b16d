"""Compile ahead: a candidate's JIT kernels built before a lane takes the unit, in a pool of its own.

A Triton candidate's first calls compile its kernels (seconds per (shape, dtype), CPU-bound: on an
H200 main job, 13.5 s of a candidate unit's 44.8 s). Made inside the lane, that compile kept the
lane from doing device work while lanes were the scarce resource. Here it is a stage of the
pipeline between prepare and evaluate: a throwaway worker per unit calls the candidate once per
(shape, dtype) on shape-only (``meta``) inputs inside the backend's compile-only context
(:meth:`mkbench.backend.Backend.prewarm`), the kernels land in the on-disk cache, and the evaluated
worker loads them. The throwaway worker is never evaluated: nothing it does is evidence, and a
failure here only means that the real first call compiles, as it would have.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
import time
from pathlib import Path
from typing import Callable

from .clock import CPU_COMPILE_AHEAD
from .procs import Child
from .session import WorkerSession


def default_workers(cores: int) -> int:
    """Throwaway workers compiling at once (``--compile-workers``; default a quarter of the cores).
    On an H100 host (16 cores, 12 lanes), as many as the cores made the lanes' own host work (the
    judge, worker start-up) several times slower while they compiled; on an H200 main job the 4
    workers had about 870 s of compile-ahead work in a 1117 s run (docs/engine.md): a flag to measure."""
    return max(1, cores // 4)


def wanted(unit) -> bool:
    """Whether a unit has anything to compile ahead."""
    return not (unit.backend.is_baseline or unit.source is None or unit.compile_only
                or unit.backend.prewarm(unit.hw) is None)


def prewarm(unit, settings, env: dict[str, str], modules: tuple[str, ...], log_path: Path | None,
            started: Callable[[Child | None], None] = lambda child: None) -> dict[str, float]:
    """Compile ``unit``'s kernels in a throwaway worker; the seconds it took (``compile_ahead``) and the
    CPU seconds the worker used (``cpu_compile_ahead``: near the seconds where the compile had a core
    to itself). ``started`` is told of the worker (and of None once it is gone), so that whoever stops
    the run can kill it."""
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
    t = time.monotonic()
    w = WorkerSession(dict(env), log_path, settings.worker_memory_mb, modules, settings.confine)
    started(w.child)
    cpu = None
    try:
        # never timed: it may wait for the device without spinning on a core (``untimed``)
        w.expect({"op": "setup", "job": job(unit), "untimed": True}, settings.limits.start, "ready")
        if w.expect({"op": "compile"}, settings.limits.compile, "compiled")["ok"]:
            w.request({"op": "prewarm", "combos": [list(c) for c in unit.combos]}, settings.limits.compile)
    except Exception:  # noqa: BLE001 - a hang, a crash, garbage: see the module docstring
        pass
    finally:
        cpu = w.cpu()
        w.stop()
        started(None)
    steps = {"compile_ahead": round(time.monotonic() - t, 3)}
    if cpu is not None:
        steps[CPU_COMPILE_AHEAD] = cpu
    return steps


def job(unit) -> dict:
    """What a worker needs to know about its unit."""
    return {"task": unit.task, "backend": unit.backend, "hw": unit.hw, "source": unit.source}


class CompileAhead:
    """The stage's pool: ``submit`` returns a future of :func:`prewarm`'s steps (None where the unit
    has nothing to compile ahead); ``close`` kills the workers in flight. Units are spread over the
    devices' environments in turn (each device's ``CUDA_VISIBLE_DEVICES``: a throwaway worker opens
    a context to learn the target, and one GPU would otherwise hold every such context)."""

    def __init__(self, envs: list[dict[str, str]], settings, modules: tuple[str, ...], workers: int):
        self.envs, self.settings, self.modules = envs, settings, modules
        self.pool = cf.ThreadPoolExecutor(max(workers, 1), thread_name_prefix="mkbench-compile-ahead")
        self._children: set[Child] = set()
        self._lock = threading.Lock()
        self._turn = 0
        self.closing = False

    def submit(self, unit, log_path: Path | None, env: dict[str, str]) -> cf.Future:
        device_env = self.envs[self._turn % len(self.envs)]
        self._turn += 1
        return self.pool.submit(self._run, unit, dict(device_env, **env), log_path, time.monotonic())

    def _run(self, unit, env: dict[str, str], log_path: Path | None, queued_at: float) -> dict[str, float] | None:
        # the wait for a free worker, apart from the work: whether this pool is what units wait on
        unit.compile_queued = round(time.monotonic() - queued_at, 3)
        if self.closing:
            return None
        current: list[Child] = []

        def started(child: Child | None) -> None:
            with self._lock:
                if child is None:
                    self._children.difference_update(current)
                else:
                    current.append(child)
                    self._children.add(child)
                    if self.closing:
                        child.kill()

        return prewarm(unit, self.settings, env, self.modules, log_path, started)

    def close(self) -> None:
        self.closing = True
        with self._lock:
            for child in list(self._children):
                child.kill()
        self.pool.shutdown(wait=False, cancel_futures=True)
