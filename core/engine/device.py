"""One device (a GPU, or the CPU) and its lanes.

Correctness runs in several lanes at once: checks of different candidates overlap on the device,
and their compiles (Triton's JIT, NVRTC) overlap on the host. Timing is exclusive, in phases
(:class:`.phases.PhasedLock`: checks take the device shared, timers alone), so the timing repeatability of a
lone run holds. A unit gives its lane up while it waits for and takes its timing hold
(:class:`Lease`): the lane starts another unit's worker and checks meanwhile, and the unit then takes
whichever lane is free first, before any unit that has not started. Memory is budgeted (:mod:`.memory`): a unit is
admitted when its estimated footprint (inputs, outputs, the timing pool, the judge's float64
reference) fits next to the units already running; it waits for that room on its lane, but gives the
lane up when a unit back from timing (holding memory) needs one.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Callable

from . import compile_ahead
from .kept import BaselineWorkers
from .lane import EvalSettings, Lane, start_ahead
from .memory import MEMORY_SHARE, MemoryBudget, first_stage, footprint
from .observation import AbnormalEnd, Observation
from .phases import DEFAULT_DEFER_S, DEFAULT_GATHER_S, PhasedLock, default_timing_batch
from .session import WorkerSession
from .settings import Sharing

#: lanes of one host, its GPUs together. Every process's CUDA start and every allocation from the driver
#: goes through the host's driver one at a time: on 4 H200s of one host, 48 workers starting together took
#: 15 s (12 s each through torch) where one took 0.3 s, and 1 GiB allocated and freed took 62 ms in each
#: of 48 processes where one took 2 ms (reports/2026-11-27-main-job-4gpu). The main job there ran 0.64
#: units/s with 12 lanes per GPU (48) and 1.02 units/s with 4 (16): the lanes' starts, judges and memory
#: waits queue behind each other, not the GPUs' work.
HOST_LANES = 16


def default_lanes(cores: int, gpus: int = 1) -> int:
    """Lanes per GPU: three quarters of the host's cores, at most ``HOST_LANES`` for the whole host,
    shared by its ``gpus``; 2 to 12 per GPU. A lane's host work (a worker starting, the JIT compile
    ahead, the judge's bookkeeping) is what keeps the GPU fed; the memory budget, not the lane count,
    bounds how many units hold the device at once. One GPU keeps the 12 lanes measured on 16-core
    H100/H200 hosts."""
    host = max(2, min(HOST_LANES, cores * 3 // 4))
    return max(2, min(12, host // max(gpus, 1)))


def default_timing_queue(lanes: int) -> int:
    """Units that may wait for their timing hold without a lane: as many as the lanes. A waiting unit
    keeps its worker (its CUDA context, its compiled kernels) and its share of the memory budget; its
    lane starts the next unit meanwhile, instead of idling through the timing phase."""
    return lanes


def timing_queue(sharing: Sharing, lanes: int) -> int:
    """The units a device of ``lanes`` lanes lets wait for timing without a lane (``--timing-queue``,
    or :func:`default_timing_queue`): with its lanes, the units it has in flight at once."""
    return default_timing_queue(lanes) if sharing.timing_queue is None else max(sharing.timing_queue, 0)


def _given(value, default):
    return default if value is None else value


class LanePool:
    """The device's free lanes. A unit coming back from its timing hold is served before a unit
    that has not started: it holds a worker and memory, and it ends sooner. Units not started are
    served in the order of their tickets (:meth:`ticket`, taken as they are handed to the device,
    in plan order), not in whatever order their threads happen to ask: a task's baseline and its
    candidate then run near each other, and one lane runs the plan in order."""

    def __init__(self, lanes: list[Lane]):
        self._free = list(reversed(lanes))
        self._cond = threading.Condition()
        self._returning = 0
        self._tickets = itertools.count()
        self._waiting: list[int] = []  # tickets of the units not started that wait for a lane (a heap)

    def ticket(self) -> int:
        return next(self._tickets)

    def take(self, returning: bool = False, ticket: int | None = None) -> Lane:
        with self._cond:
            if returning:
                self._returning += 1
            else:
                ticket = self.ticket() if ticket is None else ticket
                heapq.heappush(self._waiting, ticket)
            try:
                while not self._free or (not returning and (self._returning or self._waiting[0] != ticket)):
                    self._cond.wait()
                return self._free.pop()
            finally:
                if returning:
                    self._returning -= 1
                else:
                    self._waiting.remove(ticket)
                    heapq.heapify(self._waiting)
                self._cond.notify_all()  # the next ticket may take a lane still free

    def wanted(self) -> bool:
        """Whether a unit back from its timing hold waits for a lane."""
        return self._returning > 0

    def give(self, lane: Lane) -> None:
        with self._cond:
            self._free.append(lane)
            self._cond.notify_all()


class Lease:
    """The lane a unit holds, given up while the unit waits for and takes its timing hold
    (:meth:`away`), and taken back (whichever lane is free first) for the checks after it."""

    def __init__(self, pool: LanePool, parked: set, ticket: int | None = None):
        self.pool, self.parked = pool, parked
        self.lane: Lane | None = pool.take(ticket=ticket)

    @contextmanager
    def away(self, worker, judge_timeout: float, judge_peak: Callable[[int | None], None] = lambda peak: None):
        """``judge_peak``: told the lane's judge's memory peak for this unit, as it lets go."""
        lane = self.lane
        judge_peak(lane.judge.release(judge_timeout))  # the next unit's judge: nothing of this unit's inputs kept
        lane.current, lane.state = None, "idle"
        self.parked.add(worker.child)  # killed with the lanes' workers if the run is stopped
        self.lane = None
        self.pool.give(lane)
        left = time.monotonic()
        try:
            yield
        finally:
            back = time.monotonic()
            self.lane = self.pool.take(returning=True)
            worker.waited_for("wait_lane", time.monotonic() - back)  # on the unit's clock, not its limit
            worker.add("without_lane", time.monotonic() - left)
            self.parked.discard(worker.child)
            self.lane.current = worker.child

    def release(self) -> None:
        if self.lane is not None:
            self.pool.give(self.lane)
            self.lane = None


class Device:
    def __init__(self, kind: str, index: int | None, lanes: int, env: dict[str, str],
                 modules: tuple[str, ...] = (), memory_bytes: int | None = None, sharing: Sharing = Sharing()):
        self.kind, self.index = kind, index
        self.name = kind if index is None else f"{kind}:{index}"
        self.env = dict(env)
        if kind == "cuda" and index is not None:
            self.env["CUDA_VISIBLE_DEVICES"] = str(index)
        self._lock = PhasedLock(sharing.timing_batch or default_timing_batch(max(lanes, 1)),
                                _given(sharing.timing_gather_s, DEFAULT_GATHER_S),
                                _given(sharing.timing_defer_s, DEFAULT_DEFER_S if kind == "cuda" else 0.0))
        share = _given(sharing.memory_share, MEMORY_SHARE)
        self.memory = MemoryBudget(int(share * memory_bytes) if memory_bytes else None)
        self.lanes = [Lane(self, i, self.env, modules) for i in range(max(lanes, 1))]
        # trusted baselines' workers kept between units: at most one idle per two lanes, each a CUDA context
        # outside the memory budget
        self.baseline_workers = BaselineWorkers(max(1, len(self.lanes) // 2))
        self.timing_queue = timing_queue(sharing, len(self.lanes))
        # at most one worker started ahead per lane (--start-ahead), its unit in flight without a lane
        self.start_ahead = sharing.start_ahead
        self._ahead = threading.BoundedSemaphore(len(self.lanes))
        self.slots = len(self.lanes) * (2 if self.start_ahead else 1) + self.timing_queue  # units in flight at once
        self._pool = LanePool(self.lanes)
        self._parked: set = set()  # workers of units waiting for (or taking) their timing hold, laneless

    def shared(self):
        return self._lock.shared()

    def exclusive(self):
        return self._lock.exclusive()

    def stepped_out(self, freeze: Callable[[bool], None] | None = None):
        """Inside a shared hold, the device let go of for the block, ``freeze`` called while a timing
        phase is open (:meth:`PhasedLock.stepped_out`)."""
        return self._lock.stepped_out(freeze)

    def ticket(self) -> int:
        """The unit's place in the queue for a lane: take it when handing the unit to the device, in plan
        order (without one, a unit queues when its evaluation starts)."""
        return self._pool.ticket()

    def evaluate(self, unit, settings: EvalSettings, log_path: Path | None, env: dict[str, str],
                 ticket: int | None = None) -> Observation:
        started = None
        if self.start_ahead:
            try:
                started, lease = self._start_ahead(unit, settings, log_path, env, ticket)
            except Exception as exc:  # the fork itself failed: this unit's end, with the reason, not the run's
                return Observation(abnormal=AbnormalEnd("error", None, None, "internal error starting the worker: "
                                                        f"{type(exc).__name__}: {exc}"))
        else:
            lease = Lease(self._pool, self._parked, ticket)
        try:
            lane = lease.lane
            prewarm = None
            if unit.compiled_ahead is None and compile_ahead.where(unit, settings.compile_ahead) is not None:
                # no compile-ahead stage ran (the backend's choice, or a Ray actor): the lane compiles
                # ahead itself, before the unit needs room on the device or holds it
                lane.state = f"prewarm {unit.task.name}"
                prewarm = compile_ahead.prewarm(unit, settings, self.env | env, lane.modules, log_path,
                                                started=lambda child: setattr(lane, "current", child))
                lane.state = "idle"

            need = footprint(unit, settings.transfer)
            first = first_stage(unit, settings.transfer) if settings.memory_hold == "staged" else None
            obs = self._attempt(unit, settings, log_path, env, lease, need, first, started)
            ran_out = obs.out_of_memory if self.memory.capacity is not None else None
            if ran_out is not None:
                # The plan is an estimate and peaks add up when they coincide: the unit is run again
                # with the whole budget to itself, so that running out of memory beside other units
                # never becomes a candidate's verdict (or the judge's error). The row says why.
                obs = replace(self._attempt(unit, settings, log_path, env, lease, self.memory.capacity,
                                            room_first=True), retried=ran_out[:500])
            if prewarm is not None:
                obs = obs.with_step("prewarm", prewarm.pop("compile_ahead"))  # lane time
                obs = obs.with_steps(prewarm)
            if unit.compiled_ahead is not None:
                obs = obs.with_steps(unit.compiled_ahead)  # before the lane took it
            if unit.compile_queued is not None:
                obs = obs.with_step("compile_queue", unit.compile_queued)  # waiting for a compile-ahead worker
            return obs
        except Exception as exc:  # mkbench's own failure: it costs this unit, with the reason, not the run
            import traceback
            return Observation(abnormal=AbnormalEnd("error", None, None,
                                                    f"internal error in the lane: {type(exc).__name__}: "
                                                    f"{exc}\n{traceback.format_exc()[-1500:]}"))
        finally:
            lease.release()

    def _start_ahead(self, unit, settings: EvalSettings, log_path: Path | None, env: dict[str, str],
                     ticket: int | None) -> tuple[WorkerSession, Lease]:
        """``unit``'s worker started while the unit waits for its lane (``--start-ahead``), one per lane at
        most; the worker, and the lease of the lane it got."""
        with self._ahead:
            started = start_ahead(self.env, self.lanes[0].modules, unit, settings, log_path, env)
            self._parked.add(started.child)  # killed with the lanes' workers if the run is stopped
            started.enter("wait_lane")
            t = time.monotonic()
            try:
                lease = Lease(self._pool, self._parked, ticket)
            except BaseException:
                started.child.kill()
                raise
            finally:
                self._parked.discard(started.child)
            started.waited_for("wait_lane", time.monotonic() - t)  # on the unit's clock, not its limit
            # laneless from its fork: not lane time (the engine line's lane busy share counted it once as such)
            started.add("without_lane", time.monotonic() - started.started)
        return started, lease

    def _attempt(self, unit, settings: EvalSettings, log_path: Path | None, env: dict[str, str], lease: Lease,
                 need: int, first: list | None = None, started: WorkerSession | None = None,
                 room_first: bool = False) -> Observation:
        """One evaluation of ``unit`` on the lane ``lease`` holds, with ``need`` bytes of the budget;
        ``first``: the combinations checked on a first stage's share (:func:`first_stage`); ``started``:
        the unit's worker, started ahead of its lane (used by the first attempt only); ``room_first``: the
        share held before the worker sets up (:meth:`Lane.evaluate`)."""
        def room(away=nullcontext, stage: bool = False):
            share = min(need, footprint(unit, settings.transfer, first)) if stage else need
            return self.memory.hold(share, away, self._pool.wanted)

        obs = lease.lane.evaluate(unit, settings, log_path, env, room=room, lease=lease, first_stage=first,
                                  started=started, room_first=room_first)
        if self.memory.capacity is not None and obs.steps is not None:
            obs = obs.with_memory(planned=min(need, self.memory.capacity))
        return obs

    def timing_phases(self) -> dict[str, float]:
        """The timing phases so far: how many, seconds spent draining the checks in flight, seconds held."""
        lock = self._lock
        return {"phases": lock.phases, "drain_s": round(lock.drain_s, 3), "held_s": round(lock.held_s, 3),
                "deferred_s": round(lock.deferred_s, 3), "withdrawn": lock.withdrawn}

    def judge_cpu(self) -> float:
        """CPU seconds the lanes' judges have used (:meth:`.judge_client.JudgeClient.cpu`)."""
        return round(sum(lane.judge.cpu() for lane in self.lanes), 3)

    def states(self) -> list[str]:
        return [f"{self.name}/{lane.index}: {lane.state}" for lane in self.lanes]

    def close(self, kill: bool = False) -> None:
        """Stop the judges; with ``kill``, also the workers of units in flight (an interrupted run). Every
        process is told first and waited for after: one at a time, each judge's exit (its CUDA context
        torn down) and each killed worker's were waited for in turn, and runs stopped on an H100 took
        50-60 s to end (reports/2026-11-28-cuda-l1, calls 14-15; a CPU run, whose processes have no
        CUDA context, ends in 2 s)."""
        for child in self.ask_stop(kill):
            child.kill()  # gone by now, or killed again and waited for
        for lane in self.lanes:
            lane.close()
        self.baseline_workers.close()  # told to stop with the judges (ask_stop): waited for last

    def ask_stop(self, kill: bool = False) -> list:
        """The first half of :meth:`close`: every judge told to stop and, with ``kill``, every worker of a
        unit in flight killed, none waited for. Returns those workers."""
        workers = []
        for lane in self.lanes:
            lane.closing = lane.closing or kill
            if kill and lane.current is not None:
                workers.append(lane.current)
        if kill:
            workers += list(self._parked) + self.baseline_workers.idle_children()
        for child in workers:
            child.send_kill()
        for lane in self.lanes:
            lane.judge.ask_stop()
        for child in self.baseline_workers.idle_children():
            child.ask_stop()
        return workers
