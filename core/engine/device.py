"""One device (a GPU, or the CPU) and its lanes.

Correctness runs in several lanes at once: checks of different candidates overlap on the device,
and their compiles (Triton's JIT, NVRTC) overlap on the host. Timing is exclusive: a lane times only
when no other lane of the device is inside a step (a writer-preferring readers-writer lock: checks
take it shared, timing exclusively, and a waiting timer stops new checks from starting), so the
timing repeatability of a lone run holds. Memory is budgeted: a unit is admitted when its estimated
footprint (inputs, outputs, the timing pool, the judge's float64 reference) fits next to the units
already running.
"""

from __future__ import annotations

import queue
import threading
from contextlib import contextmanager
from pathlib import Path

from ..task import DTYPES
from .lane import EvalSettings, Lane
from .observation import AbnormalEnd, Observation

MEMORY_SHARE = 0.75        # of the device's memory that lanes may plan to use together (the rest: CUDA contexts)
FOOTPRINT_FACTOR = 8       # x the largest combination's task bytes: worker inputs, outputs, pool, poison block
JUDGE_FACTOR = 4           # x the same bytes at the reference's precision: pristine inputs, upcast copies,
                           # reference, comparison
CONTEXT_BYTES = 1 << 30    # per unit: a worker's and a judge's CUDA contexts and allocator slack


def default_lanes(cores: int) -> int:
    """Lanes per GPU: three quarters of the cores, 2 to 12. A lane's host work (a worker starting, the
    JIT compile ahead, the judge's bookkeeping) is what keeps the GPU fed; the memory budget, not the
    lane count, bounds how many units hold the device at once."""
    return max(2, min(12, cores * 3 // 4))


class RWLock:
    """Shared for checks, exclusive for timing; writers first, so timing is never starved."""

    def __init__(self):
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._waiting_writers = 0

    @contextmanager
    def shared(self):
        with self._cond:
            while self._writer or self._waiting_writers:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def exclusive(self):
        with self._cond:
            self._waiting_writers += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._waiting_writers -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


class MemoryBudget:
    def __init__(self, capacity: int | None):
        self.capacity = capacity
        self.used = 0
        self._cond = threading.Condition()

    @contextmanager
    def hold(self, need: int):
        if self.capacity is None:
            yield
            return
        need = min(need, self.capacity)  # a unit bigger than the budget runs alone
        with self._cond:
            while self.used and self.used + need > self.capacity:
                self._cond.wait()
            self.used += need
        try:
            yield
        finally:
            with self._cond:
                self.used -= need
                self._cond.notify_all()


def footprint(unit) -> int:
    """Device memory a unit may hold at once: the worker's share (``FOOTPRINT_FACTOR`` x the largest
    combination's bytes: inputs, outputs, the timing pool, the poison block) and the judge's
    (``JUDGE_FACTOR`` x the same bytes at the precision the contract computes the reference in: a
    float64 reference of a bfloat16 task is four times its size; judges went out of memory on an
    H200 while only the worker's share was counted), and the two CUDA contexts."""
    worker = judge = 0
    precision = getattr(getattr(unit.task, "contract", None), "reference_precision", None)
    for shape_name, dtype in unit.combos:
        try:
            shape, native = unit.task.shape(shape_name), DTYPES[dtype]
            worker = max(worker, int(unit.task.bytes(shape, native)))
            upcast = precision if precision is not None and native.is_floating_point else native
            judge = max(judge, int(unit.task.bytes(shape, upcast)))
        except Exception:  # a task whose byte count fails is admitted on the context cost alone
            pass
    return FOOTPRINT_FACTOR * worker + JUDGE_FACTOR * judge + CONTEXT_BYTES


class Device:
    def __init__(self, kind: str, index: int | None, lanes: int, env: dict[str, str],
                 modules: tuple[str, ...] = (), memory_bytes: int | None = None):
        self.kind, self.index = kind, index
        self.name = kind if index is None else f"{kind}:{index}"
        self.env = dict(env)
        if kind == "cuda" and index is not None:
            self.env["CUDA_VISIBLE_DEVICES"] = str(index)
        self._lock = RWLock()
        self.memory = MemoryBudget(int(MEMORY_SHARE * memory_bytes) if memory_bytes else None)
        self.lanes = [Lane(self, i, self.env, modules) for i in range(max(lanes, 1))]
        self._free: queue.Queue[Lane] = queue.Queue()
        for lane in self.lanes:
            self._free.put(lane)

    def shared(self):
        return self._lock.shared()

    def exclusive(self):
        return self._lock.exclusive()

    def evaluate(self, unit, settings: EvalSettings, log_path: Path | None, env: dict[str, str]) -> Observation:
        lane = self._free.get()
        try:
            prewarm = lane.prewarm(unit, settings, log_path, env)  # host work: before the unit needs room on the device
            obs = lane.evaluate(unit, settings, log_path, env, room=lambda: self.memory.hold(footprint(unit)))
            if prewarm is not None:
                obs = obs.with_step("prewarm", prewarm)
            return obs
        except Exception as exc:  # mkbench's own failure: it costs this unit, with the reason, not the run
            import traceback
            return Observation(abnormal=AbnormalEnd("error", None, None,
                                                    f"internal error in the lane: {type(exc).__name__}: "
                                                    f"{exc}\n{traceback.format_exc()[-1500:]}"))
        finally:
            self._free.put(lane)

    def states(self) -> list[str]:
        return [f"{self.name}/{lane.index}: {lane.state}" for lane in self.lanes]

    def close(self, kill: bool = False) -> None:
        """Stop the judges; with ``kill``, also the workers of units in flight (an interrupted run)."""
        for lane in self.lanes:
            lane.closing = lane.closing or kill
            if kill and lane.current is not None:
                lane.current.kill()
            lane.close()
