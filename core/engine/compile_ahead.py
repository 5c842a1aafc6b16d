"""Compile ahead: a candidate's JIT kernels built before a lane takes the unit, in a pool of its own.

A Triton candidate's first calls compile its kernels (seconds per (shape, dtype), CPU-bound: on an
H200 main job, 13.5 s of a candidate unit's 44.8 s). Made inside the lane, that compile kept the
lane from doing device work while lanes were the scarce resource. Here it is a stage of the
pipeline between prepare and evaluate: a throwaway worker per unit calls the candidate once per
(shape, dtype) on shape-only (``meta``) inputs inside the backend's compile-only context
(:meth:`mkbench.backend.Backend.prewarm`), the kernels land in the on-disk cache, and the evaluated
worker loads them. The throwaway worker is never evaluated: nothing it does is evidence, and a
failure here only means that the real first call compiles, as it would have.

The pool keeps its workers between units whose environment is the same (one method's Triton
candidates share their compile cache, and so everything a confined worker may write): a worker's
start (fork, confinement, CUDA context) cost 7.6-9.4 s of a unit's 11.4-14 s of compile ahead on a
4-GPU H200 host, where units queued 12-40 s for a worker (reports/2026-11-28-calls, call 34). A kept
worker serves at most ``WORKER_UNITS`` units and is replaced after any unit that did not end cleanly.
A candidate in it can reach the next one's compile no further than through the shared cache, which
its own throwaway worker could write as well. What the worker printed for a unit is copied to that
unit's log. A worker is kept only while units wait for the pool: on one GPU of a 4-GPU host, 20 kept
workers' CUDA contexts stayed on that GPU after the pool's work was done, outside the memory budget,
when an eager baseline's worker found no memory for its own context (reports/2026-11-28-kept-workers,
call 40).
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from .clock import COMPILE_AHEAD_PARTS, CPU_COMPILE_AHEAD, cpu_sample
from .kept import PER_UNIT_DIRS, WORKER_UNITS, Kept, claim, env_key, own_place
from .procs import Child
from .session import WorkerSession


def default_workers(cores: int) -> int:
    """Throwaway workers that may always compile at once: a quarter of the cores. On an H100 host
    (16 cores, 12 lanes), as many as the cores made the lanes' own host work (the judge, worker
    start-up) several times slower while they compiled."""
    return max(1, cores // 4)


def default_ceiling(cores: int) -> int:
    """Throwaway workers compiling at once while the host has cores to spare: half of them. A
    reference's compile ahead used 20 CPU seconds in 13 s of wall on an H200 main job (ptxas runs
    beside its worker), and the host sat a third idle while references waited 47 s for a worker
    (``reports/2026-11-27-run-ahead``)."""
    return max(default_workers(cores), cores // 2)


#: above the floor a worker starts only while the host's cores were less busy than this over the
#: last ``HostLoad.window`` seconds, and at most one every ``Gate.ramp_s``: time for the last one to show
BUSY_LIMIT = 0.85


class HostLoad:
    """The host's CPU busy share (``/proc/stat``) over the last ``window`` seconds or a little more;
    None where it cannot be read."""

    def __init__(self, sample: Callable[[], dict | None] = cpu_sample, window: float = 1.0):
        self._sample, self.window = sample, window
        self._last = sample()
        self._busy: float | None = None
        self._lock = threading.Lock()

    def busy(self) -> float | None:
        with self._lock:
            now = self._sample()
            if now is None or self._last is None:
                return None
            if now["at"] - self._last["at"] >= self.window and now["total"] > self._last["total"]:
                self._busy = (now["busy"] - self._last["busy"]) / (now["total"] - self._last["total"])
                self._last = now
            return self._busy


class Gate:
    """Who may start compiling: always up to ``floor`` workers at once, up to ``ceiling`` while the
    host is under ``BUSY_LIMIT`` busy, one more at most every ``ramp_s`` seconds."""

    def __init__(self, floor: int, ceiling: int, load: HostLoad | None = None, ramp_s: float = 2.0,
                 clock: Callable[[], float] = time.monotonic):
        self.floor, self.ceiling = max(1, floor), max(floor, ceiling, 1)
        self.load = load if load is not None or self.ceiling == self.floor else HostLoad()
        self.ramp_s, self._clock = ramp_s, clock
        self.running = self.peak = 0
        self._extra_at = -math.inf  # when a worker last started above the floor
        self._cond = threading.Condition()

    def may_start(self) -> bool:
        """Whether one more worker may start now (called with the gate's lock held)."""
        if self.running < self.floor:
            return True
        if self.running >= self.ceiling or self._clock() - self._extra_at < self.ramp_s:
            return False
        busy = self.load.busy() if self.load is not None else None
        return busy is not None and busy < BUSY_LIMIT

    @contextmanager
    def slot(self, closing: Callable[[], bool] = lambda: False) -> Iterator[None]:
        with self._cond:
            while not closing() and not self.may_start():
                self._cond.wait(0.5)
            if self.running >= self.floor:
                self._extra_at = self._clock()
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            yield
        finally:
            with self._cond:
                self.running -= 1
                self._cond.notify_all()


def wanted(unit) -> bool:
    """Whether a unit has anything to compile ahead. Not a task whose harness runs inside the call: it
    reads its seed from the inputs (KernelBench-X: ``seed.item()``), which shape-only inputs cannot give.
    On an H200 every one of the 64 GEAK candidates' compile-ahead calls failed so, each for a throwaway
    worker's start (2.8 s) after its unit had queued 11-17 s for one (reports/2026-11-28-calls, call 29)."""
    return not (unit.backend.is_baseline or unit.source is None or unit.compile_only or unit.task.harness_in_call
                or unit.backend.prewarm(unit.hw) is None)


#: ``mkbench run --compile-ahead``: where each backend says (``Backend.compile_ahead``), in this
#: stage's pool, in the unit's lane, or not at all (the first real call compiles)
MODES = ("backend", "pool", "lane", "off")


def where(unit, mode: str = "backend") -> str | None:
    """Where ``unit``'s compile-ahead call runs under ``mode``: "pool", "lane", or None (nowhere)."""
    chosen = unit.backend.compile_ahead if mode == "backend" else mode
    return None if chosen == "off" or not wanted(unit) else chosen


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
    try:
        return compile_in(w, unit, settings, t)[0]
    finally:
        w.stop()
        started(None)


def compile_in(w: WorkerSession, unit, settings, since: float,
               cpu_before: float = 0.0) -> tuple[dict[str, float], bool]:
    """Compile ``unit``'s kernels in worker ``w`` (started, or taken from the pool's idle ones, at ``since``;
    its CPU seconds then ``cpu_before``): the unit's steps (see :func:`prewarm`), and whether the worker
    may serve another unit (every step answered as asked, the candidate imported and left the timing
    functions alone)."""
    parts: dict[str, float] = {}
    reusable = False

    def part(name: str, at: float) -> float:
        now = time.monotonic()
        parts[name] = round(now - at, 3)
        return now

    try:
        # never timed: it may wait for the device without spinning on a core (``untimed``). It opens a
        # CUDA context like any worker: a compile-only Triton launch opens one anyway (measured on an
        # H100, reports/2026-11-28-cuda-l1/call4-h100/gpu-test.log)
        w.expect({"op": "setup", "job": job(unit), "untimed": True}, settings.limits.start, "ready")
        at = part(COMPILE_AHEAD_PARTS[0], since)
        compiled = w.expect({"op": "compile"}, settings.limits.compile, "compiled")
        if compiled["ok"]:
            at = part(COMPILE_AHEAD_PARTS[1], at)
            reply = w.request({"op": "prewarm", "combos": [list(c) for c in unit.combos]}, settings.limits.compile)
            part(COMPILE_AHEAD_PARTS[2], at)
            reusable = isinstance(reply, dict) and reply.get("kind") == "prewarmed" and not compiled.get("tamper")
    except Exception:  # noqa: BLE001 - a hang, a crash, garbage: see the module docstring
        pass
    cpu = w.cpu()
    steps = {"compile_ahead": round(time.monotonic() - since, 3), **parts}
    if cpu is not None:
        steps[CPU_COMPILE_AHEAD] = round(max(cpu - cpu_before, 0.0), 3)
    return steps, reusable


def job(unit) -> dict:
    """What a worker needs to know about its unit."""
    return {"task": unit.task, "backend": unit.backend, "hw": unit.hw, "source": unit.source}


class CompileAhead:
    """The stage's pool: ``submit`` returns a future of the unit's compile-ahead steps (None where the
    unit has nothing to compile ahead); ``close`` kills the workers in flight and those kept idle.
    Workers are started on the devices' environments in turn (each device's ``CUDA_VISIBLE_DEVICES``:
    a worker opens a context to learn the target, and one GPU would otherwise hold every such
    context); a kept one serves units of any device, whose GPUs share one target."""

    def __init__(self, envs: list[dict[str, str]], settings, modules: tuple[str, ...], gate: Gate):
        self.envs, self.settings, self.modules, self.gate = envs, settings, modules, gate
        self.pool = cf.ThreadPoolExecutor(gate.ceiling, thread_name_prefix="mkbench-compile-ahead")
        self._children: set[Child] = set()
        self._idle: list[Kept] = []
        self._lock = threading.Lock()
        self._turn = 0
        self.started = self.units = 0  # workers started, units compiled (the pool's reuse)
        self._queued = 0  # units submitted that have not started compiling
        self.closing = False

    def submit(self, unit, log_path: Path | None, env: dict[str, str]) -> cf.Future:
        with self._lock:
            self._queued += 1
        return self.pool.submit(self._run, unit, env, log_path, time.monotonic())

    def _run(self, unit, env: dict[str, str], log_path: Path | None, queued_at: float) -> dict[str, float] | None:
        with self.gate.slot(lambda: self.closing):
            with self._lock:
                self._queued -= 1
            # the wait for a free worker, apart from the work: whether this pool is what units wait on
            unit.compile_queued = round(time.monotonic() - queued_at, 3)
            if self.closing:
                return None
            if log_path is not None:
                log_path.parent.mkdir(parents=True, exist_ok=True)
            t = time.monotonic()
            kept = self._take(env, log_path, shared=unit.backend.compile_ahead == "pool")
            if kept is None:
                return None
            cpu_before = 0.0 if kept.served == 0 else (kept.session.cpu() or 0.0)
            mark = kept.log_size()
            steps, reusable = compile_in(kept.session, unit, self.settings, t, cpu_before)
            kept.copy_log(mark, log_path)
            kept.served += 1
            with self._lock:
                self.units += 1
                # kept only while units wait for the pool: once the queue is empty an idle worker would hold
                # its CUDA context (outside the device's memory budget) for the rest of the run
                keep = reusable and kept.served < WORKER_UNITS and not self.closing and self._queued > 0
                if keep:
                    self._idle.append(kept)
            if not keep:
                self._retire(kept)
            return steps

    def _take(self, env: dict[str, str], log_path: Path | None, shared: bool) -> Kept | None:
        """An idle worker started with this environment, or a new one; idle workers of other
        environments are stopped as needed, so that no more are alive than the pool runs at once.
        ``shared``: the environment's per-unit folders (``PER_UNIT_DIRS``) are replaced by the worker's own."""
        own = [v for v in PER_UNIT_DIRS if shared and v in env]
        key, evicted = env_key(env, own), []
        with self._lock:
            if self.closing:
                return None
            found, dead = claim(self._idle, key)
            evicted += dead
            if found is None:
                while self._idle and len(self._idle) + self.gate.running > self.gate.ceiling:
                    evicted.append(self._idle.pop(0))
                device_env = self.envs[self._turn % len(self.envs)]
                self._turn += 1
                self.started += 1
                n = self.started
        for kept in evicted:
            self._retire(kept)
        if found is not None:
            return found
        log, env = own_place(log_path, env, own, "compile-ahead", "compile-ahead-worker", n)
        session = WorkerSession(dict(device_env, **env), log, self.settings.worker_memory_mb, self.modules,
                                self.settings.confine)
        with self._lock:
            self._children.add(session.child)
            if self.closing:
                session.child.kill()
        return Kept(session, key, log, "compile ahead")

    def _retire(self, kept: Kept) -> None:
        kept.session.stop()
        with self._lock:
            self._children.discard(kept.session.child)

    def close(self) -> None:
        self.closing = True
        with self._lock:
            for child in list(self._children):
                child.kill()
            self._idle.clear()
        self.pool.shutdown(wait=False, cancel_futures=True)
