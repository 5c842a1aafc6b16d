"""One device (a GPU, or the CPU) and its lanes.

Correctness runs in several lanes at once: checks of different candidates overlap on the device,
and their compiles (Triton's JIT, NVRTC) overlap on the host. Timing is exclusive, in phases
(:class:`PhasedLock`: checks take the device shared, timers alone), so the timing repeatability of a
lone run holds. A unit gives its lane up while it waits for and takes its timing hold
(:class:`Lease`): the lane starts another unit's worker and checks meanwhile, and the unit then takes
whichever lane is free first, before any unit that has not started. Memory is budgeted: a unit is
admitted when its estimated footprint (inputs, outputs, the timing pool, the judge's float64
reference) fits next to the units already running; it waits for that room on its lane, but gives the
lane up when a unit back from timing (holding memory) needs one.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Callable

from ..task import DTYPES
from ..transfer import AREA_GROWTH
from . import compile_ahead
from .lane import EvalSettings, Lane
from .observation import AbnormalEnd, Observation
from .settings import Sharing

MEMORY_SHARE = 0.75        # of the device's memory that lanes may plan to use together (the rest: CUDA contexts)
# The factors are set by the allocators' peaks of the README main job's first 145 s on one H100
# (reports/2026-11-27-compile-ahead/call3-h100, 67 units): the worker's peak had a median of 4.15 and
# a p90 of 5.81 times its bytes, the judge's (outputs compared in slices) 3.11 and 4.89 times its
# own, where before the slices it was 5.06 and 7.21. They were 8 and 4; at 6 and 3 the units' peaks
# against their plans have the median they had before (0.93): the same plan, on 25% less memory.
FOOTPRINT_FACTOR = 6       # x the largest combination's task bytes: worker inputs, outputs, pool, poison block
JUDGE_FACTOR = 3           # x the same bytes at the reference's precision: pristine inputs, upcast copies,
                           # reference, comparison
CONTEXT_BYTES = 1 << 30    # per unit: a worker's and a judge's CUDA contexts and allocator slack


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


def default_timing_batch(lanes: int) -> int:
    """Timed units gathered before the device is drained for them: a third of the lanes. Each drain
    keeps new checks from starting until the steps in flight end (a traced correctness run of a
    KernelBench-X harness takes seconds); on an H100, 66 KernelBench-X candidates against eager, 4
    per phase made 0.33 units/s where 1 made 0.26 in the same device call (reports/2026-11-27-engine)."""
    return max(1, lanes // 3)


DEFAULT_GATHER_S = 2.0  # how long the first unit waiting to be timed waits for others before the phase opens
#: how long a phase ready to open may defer for the checks that have held the device over ``LONG_HOLD_S``,
#: new checks starting meanwhile (``--timing-defer``; 0: it opens at once and drains them all). Its first
#: form (no give-back) deferred 0.4 s in a whole KernelBench-X run, with no effect (call 31); with the
#: give-back, the whole corpus (64 candidates, 130 units) took 159.6 s against 187.3 s with 0, draining
#: 18.7 s against 101.6, the verdicts the same row for row (one H200, reports/2026-11-28-calls, call 36).
#: A GPU's default; on the CPU, where an interpreted check often holds the device over 2 s, nothing was
#: measured, and a phase drains at once there
DEFAULT_DEFER_S = 30.0
#: a check holding the device longer than this is a long one: a first call's autotuning or build, a
#: harness's whole test loop (KernelBench-X: 7 to 36 s on an H200, reports/2026-11-28-calls, call 30),
#: where a check's run and judge take well under a second
LONG_HOLD_S = 2.0


class PhasedLock:
    """Checks share the device; timing takes it alone, in phases. A timing phase is ready when ``batch``
    units wait to be timed, when no check holds or waits for the device, or ``gather_s`` after the
    first of them asked. Open, it drains (no new check starts, those in flight end), the waiting units
    time one after another, and any unit that asks meanwhile joins the phase. Checks resume when no
    timer is left. With ``batch`` 1 a timer drains the device at once (a writer-preferring
    readers-writer lock).

    With ``defer_s`` (``--timing-defer``; 0, the default, turns it off), a phase defers for long
    checks: a drain waits for the longest check in flight while no other may start, so one long check
    (a first call's autotuning, 7-36 s) would idle every lane. A ready phase opens only once no check in
    flight has held the device over ``LONG_HOLD_S``, and an open one that is still draining is given
    back when a check it waits for turns long (checks start again), both until ``defer_s`` after it was
    first ready. Timers never starve: after ``defer_s`` the phase opens and drains whatever runs."""

    def __init__(self, batch: int = 1, gather_s: float = DEFAULT_GATHER_S, defer_s: float = DEFAULT_DEFER_S):
        self.batch, self.gather_s, self.defer_s = max(1, batch), gather_s, max(0.0, defer_s)
        self._since: dict[int, float] = {}  # each check holding the device (its lane's thread): since when
        self.deferred_s = 0.0      # seconds phases ready to open waited for long checks, checks going on
        self.withdrawn = 0         # phases given back while draining, for a check that turned long
        self._ready_at: float | None = None  # when the phase to come was first ready (its defer_s runs from here)
        self._defer_mark = 0.0     # since when it has been deferring (its readiness, or its last give-back)
        self._cond = threading.Condition()
        self._readers = 0          # checks holding the device
        self._waiting_readers = 0  # checks asking for it
        self._writer = False       # a timer holding it
        self._waiting = 0          # timers asking for it
        self._phase = False        # a timing phase is open: no check may start
        self.phases = 0            # timing phases whose first timer held the device (one drain each)
        self.drain_s = 0.0         # seconds from a phase's opening to its first timer holding the device
        self.held_s = 0.0          # seconds timers held the device
        self._opened: float | None = None
        # checks stepped out for host work (see stepped_out): each one's freeze, and those frozen now
        self._out: dict[int, Callable[[bool], None]] = {}
        self._frozen: set[int] = set()

    def _take_shared(self) -> None:
        """A check takes the device: it waits while a timing phase is open."""
        with self._cond:
            self._waiting_readers += 1
            while self._phase:
                self._cond.wait()
            self._waiting_readers -= 1
            self._readers += 1
            self._since[threading.get_ident()] = time.monotonic()

    def _leave_shared(self) -> None:
        with self._cond:
            self._readers -= 1
            self._since.pop(threading.get_ident(), None)
            self._cond.notify_all()

    def _long_check(self, now: float) -> bool:
        """Whether a check in flight has held the device over LONG_HOLD_S (under the condition's lock)."""
        return any(now - t > LONG_HOLD_S for t in self._since.values())

    @contextmanager
    def shared(self):
        self._take_shared()
        try:
            yield
        finally:
            self._leave_shared()

    @contextmanager
    def stepped_out(self, freeze: Callable[[bool], None] | None = None):
        """Inside a shared hold: let go of it for the block (host work only: a check's build), as if
        the check had ended, and take it again after the block, waiting like a check that starts (a
        timing phase opened meanwhile runs to its end first).

        The check's word that the block launches nothing is not taken on trust: ``freeze(True)`` is
        called while a timing phase is open (from its opening, or from the step out if one is open
        already) and ``freeze(False)`` when it closes or the block ends, so the process that stepped out
        (its worker, with the build below it) is stopped whenever a timer may hold the device."""
        key = id(freeze) if freeze is not None else None
        with self._cond:
            self._readers -= 1
            self._since.pop(threading.get_ident(), None)
            if key is not None:
                self._out[key] = freeze
                if self._phase:
                    self._freeze(key, True)
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                if key is not None:
                    self._out.pop(key, None)
                    if key in self._frozen:
                        self._freeze(key, False, freeze)
            self._take_shared()

    def _freeze(self, key: int, stop: bool, fn: Callable[[bool], None] | None = None) -> None:
        """Under the condition's lock: stop or continue one stepped-out check (never raising: a lock
        that raised here would leave the phase half open)."""
        (self._frozen.add if stop else self._frozen.discard)(key)
        try:
            (fn or self._out[key])(stop)
        except Exception:  # noqa: BLE001 - a process already gone
            pass

    def _open_phase(self) -> None:
        self._phase = True
        self._opened = time.monotonic()
        for key in list(self._out):
            self._freeze(key, True)

    def _close_phase(self) -> None:
        self._phase = False
        for key in list(self._frozen):
            if key in self._out:
                self._freeze(key, False)

    def _until_open(self, asked: float) -> None:
        """Under the condition's lock: wait until a timing phase is open, opening it when it is ready
        (gathered) and no check in flight is long, or ``defer_s`` after it first was ready."""
        while not self._phase:
            now = time.monotonic()
            left = self.gather_s - (now - asked)
            if self._waiting >= self.batch or not (self._readers or self._waiting_readers) or left <= 0:
                if self._ready_at is None:
                    self._ready_at = self._defer_mark = now
                waited = now - self._ready_at
                if waited >= self.defer_s or not self._long_check(now):
                    self.deferred_s += now - self._defer_mark
                    self._open_phase()
                    self._cond.notify_all()
                    return
                # a long check ends with a notify; a short one may turn long meanwhile: look again
                self._cond.wait(timeout=min(self.defer_s - waited, LONG_HOLD_S))
                continue
            self._cond.wait(timeout=left)

    def _drained(self) -> bool:
        """Under the condition's lock, a phase open: wait until no timer or check holds the device (True).
        False where the phase was given back instead: a check it drained for turned long before the
        phase's first timer held the device, and ``defer_s`` since the phase was ready has not passed;
        every lane would idle for that check, so checks start again meanwhile (:meth:`_until_open`)."""
        while self._writer or self._readers:
            if not self._phase:  # given back by another timer of the phase: wait for the next one
                return False
            if not self.defer_s:
                self._cond.wait()
                continue
            now = time.monotonic()
            if (self._opened is not None and self._ready_at is not None
                    and now - self._ready_at < self.defer_s and self._long_check(now)):
                self.drain_s += now - self._opened  # the lanes waited for it all the same
                self._opened = None
                self.withdrawn += 1
                self._defer_mark = now
                self._close_phase()
                self._cond.notify_all()
                return False
            self._cond.wait(timeout=LONG_HOLD_S / 4)
        return self._phase

    @contextmanager
    def exclusive(self):
        with self._cond:
            self._waiting += 1
            asked = time.monotonic()
            while True:
                self._until_open(asked)
                if self._drained():
                    break
            self._waiting -= 1
            self._writer = True
            took = time.monotonic()
            if self._opened is not None:  # the phase's first timer: the checks in flight have drained
                self.phases += 1
                self.drain_s += took - self._opened
                self._opened = None
                self._ready_at = None
        try:
            yield
        finally:
            with self._cond:
                self.held_s += time.monotonic() - took
                self._writer = False
                if not self._waiting:
                    self._close_phase()
                self._cond.notify_all()


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


GIVE_WAY_POLL_S = 0.25  # how often a unit waiting for memory on its lane asks whether a lane is wanted


class MemoryBudget:
    """The device memory the lanes' units may plan to hold together, handed out first come, first
    served: a unit that asks while an earlier one waits is admitted only if the earlier one would
    still fit beside it. Admitting whatever fits starved large units: in an H200 main job,
    linear_cross_entropy's eager unit (33 GiB planned) waited 298 s while units of 10 GiB kept
    taking the room it needed as it came free (``reports/2026-11-27-main-job-preload``)."""

    def __init__(self, capacity: int | None):
        self.capacity = capacity
        self.used = 0
        self._cond = threading.Condition()
        self._waiting: dict[int, int] = {}  # ticket -> need, of units not yet admitted (in arrival order)
        self._tickets = itertools.count()

    def _fits(self, need: int, ticket: int) -> bool:
        if self.used + need > self.capacity:
            return False
        earlier = next((n for t, n in self._waiting.items() if t < ticket), None)
        return earlier is None or self.used + need + earlier <= self.capacity

    def _take(self, need: int, ticket: int) -> None:
        self.used += need
        del self._waiting[ticket]
        self._cond.notify_all()  # the next in line may fit beside this one

    @contextmanager
    def hold(self, need: int, while_waiting: Callable[[], AbstractContextManager] = nullcontext,
             give_way: Callable[[], bool] = lambda: False):
        """Hold ``need`` bytes of the budget for the block. A unit waits for them on its lane, unless
        ``give_way()`` says that a unit needs the lane (one back from its timing hold: it holds memory
        and needs a lane to finish); the rest of the wait then happens inside ``while_waiting()``, where
        the unit gives its lane up (:meth:`Lease.away`). Waiting on the lane regardless deadlocked the
        device once every lane did so while units back from timing waited for a lane: a resumed H200
        main job sat six minutes at 0% with 56 GiB held (``reports/2026-11-27-main-job-preload``)."""
        if self.capacity is None:
            yield
            return
        need = min(need, self.capacity)  # a unit bigger than the budget runs alone
        with self._cond:
            ticket = next(self._tickets)
            self._waiting[ticket] = need
        try:
            with self._cond:
                while not self._fits(need, ticket) and not give_way():
                    self._cond.wait(GIVE_WAY_POLL_S)
                took = self._fits(need, ticket)
                if took:
                    self._take(need, ticket)
            if not took:
                with while_waiting():
                    with self._cond:
                        while not self._fits(need, ticket):
                            self._cond.wait()
                        self._take(need, ticket)
        except BaseException:  # a unit that stops waiting is no longer in line
            with self._cond:
                if self._waiting.pop(ticket, None) is not None:
                    self._cond.notify_all()
            raise
        try:
            yield
        finally:
            with self._cond:
                self.used -= need
                self._cond.notify_all()


def task_bytes(task, shape, dtype) -> int:
    """The bytes a combination's footprint scales: the task's ``bytes`` (the roofline's traffic), or
    its ``resident_bytes`` where the tensors occupy more than the traffic counts. nll_loss_ignore_index
    large/float32 gathers one of C = 19 log-probs per pixel: ``bytes`` counts 0.56 GiB of a 3.94 GiB
    input, so the budget planned 4.5 GiB for the worker and 3.0 GiB (4 x 0.75 GiB at float64) for the
    judge, whose process held 18.51 GiB when it went out of memory on an H200."""
    counted = task.bytes(shape, dtype)
    resident = getattr(task, "resident_bytes", None)
    return int(max(counted, resident(shape, dtype)) if resident is not None else counted)


def footprint(unit, transfer: str = "area", combos=None) -> int:
    """Device memory a unit may hold at once: the worker's share (``FOOTPRINT_FACTOR`` x the largest
    combination's bytes: inputs, outputs, the timing pool, the poison block) and the judge's
    (``JUDGE_FACTOR`` x the same bytes at the precision the contract computes the reference in: a
    float64 reference of a bfloat16 task is four times its size; judges went out of memory on an
    H200 while only the worker's share was counted), and the two CUDA contexts. The bytes are
    :func:`task_bytes`. What a judge keeps between checks (its blocks for the combination it checks, and
    at most ``judge.KEEP_RESERVED_BYTES`` when it moves to another, all of its own unit's allocations)
    goes on its unit's share: the lane empties it (``release``) before that
    share is given back, and before the lane passes to another unit while this one waits for its
    timing (:meth:`Lease.away`). An idle judge holds its CUDA context only (518-712 MiB each in the
    H200 run's out-of-memory reports), inside the memory ``MEMORY_SHARE`` leaves unplanned. With
    ``transfer`` "area" the worker also keeps its transfer area: one call's outputs and inputs, made
    ``transfer.AREA_GROWTH`` times larger than asked (uncounted, the workers' peaks went from 0.94 to
    1.28 times their plan on an H100, reports/2026-11-28-calls/call12-h100). ``combos``: only these of the
    unit's combinations (default: all)."""
    worker = judge = 0
    precision = getattr(getattr(unit.task, "contract", None), "reference_precision", None)
    for shape_name, dtype in (unit.combos if combos is None else combos):
        try:
            shape, native = unit.task.shape(shape_name), DTYPES[dtype]
            worker = max(worker, task_bytes(unit.task, shape, native))
            upcast = precision if precision is not None and native.is_floating_point else native
            judge = max(judge, task_bytes(unit.task, shape, upcast))
        except Exception:  # a task whose byte count fails is admitted on the context cost alone
            pass
    area = int(AREA_GROWTH * worker) if transfer == "area" else 0
    return FOOTPRINT_FACTOR * worker + area + JUDGE_FACTOR * judge + CONTEXT_BYTES


#: a staged hold's first stage: the leading combinations whose worker and judge shares together are at most
#: this fraction of the unit's (the small and awkward shapes, ahead of the large ones a task lists last)
FIRST_STAGE_SHARE = 0.25


def first_stage(unit, transfer: str = "area") -> list | None:
    """The combinations a unit checks on a small share of the memory budget before it takes its whole
    share (``--memory-hold staged``), or None where staging saves nothing: no leading combination is
    small, or every one is. The whole share covers every combination from the first that is not small
    to the unit's end, timing and the checks after it included. A unit holds the whole share from its
    first check otherwise: on an H100 main job, units waited for the budget over half their time while
    a candidate unit's small shapes (six of its nine combinations, each traced and judged) ran inside
    a hold sized for its large ones (reports/2026-11-28-calls/call13-h100). A stateful task is not
    staged: while a unit waits for its whole share it may give its lane (and its judge) up, and a
    stateful reference's judge must see every call of the unit."""
    if unit.task.stateful_reference or len(unit.combos) < 2:
        return None
    whole = footprint(unit, transfer) - CONTEXT_BYTES
    k = 0
    while k < len(unit.combos) and footprint(unit, transfer, unit.combos[:k + 1]) - CONTEXT_BYTES \
            <= FIRST_STAGE_SHARE * whole:
        k += 1
    return unit.combos[:k] if 0 < k < len(unit.combos) else None


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
        self.timing_queue = timing_queue(sharing, len(self.lanes))
        self.slots = len(self.lanes) + self.timing_queue  # units in flight at once
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
            obs = self._attempt(unit, settings, log_path, env, lease, need, first)
            ran_out = obs.out_of_memory if self.memory.capacity is not None else None
            if ran_out is not None:
                # The plan is an estimate and peaks add up when they coincide: the unit is run again
                # with the whole budget to itself, so that running out of memory beside other units
                # never becomes a candidate's verdict (or the judge's error). The row says why.
                obs = replace(self._attempt(unit, settings, log_path, env, lease, self.memory.capacity),
                              retried=ran_out[:500])
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

    def _attempt(self, unit, settings: EvalSettings, log_path: Path | None, env: dict[str, str], lease: Lease,
                 need: int, first: list | None = None) -> Observation:
        """One evaluation of ``unit`` on the lane ``lease`` holds, with ``need`` bytes of the budget;
        ``first``: the combinations checked on a first stage's share (:func:`first_stage`)."""
        def room(away=nullcontext, stage: bool = False):
            share = min(need, footprint(unit, settings.transfer, first)) if stage else need
            return self.memory.hold(share, away, self._pool.wanted)

        obs = lease.lane.evaluate(unit, settings, log_path, env, room=room, lease=lease, first_stage=first)
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

    def ask_stop(self, kill: bool = False) -> list:
        """The first half of :meth:`close`: every judge told to stop and, with ``kill``, every worker of a
        unit in flight killed, none waited for. Returns those workers."""
        workers = []
        for lane in self.lanes:
            lane.closing = lane.closing or kill
            if kill and lane.current is not None:
                workers.append(lane.current)
        if kill:
            workers += list(self._parked)
        for child in workers:
            child.send_kill()
        for lane in self.lanes:
            lane.judge.ask_stop()
        return workers
