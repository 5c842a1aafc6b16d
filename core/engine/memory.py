"""A device's memory budget: what each unit may hold on the device at once (:func:`footprint`, from the
task's bytes and the judge's reference precision), the share of the device the units' plans may take
together (``MEMORY_SHARE``, ``--memory-share``), and the budget that hands it out first come, first served
(:class:`MemoryBudget`), whole or in a first stage (:func:`first_stage`, ``--memory-hold staged``)."""

from __future__ import annotations

import itertools
import threading
import time
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Callable

from ..task import DTYPES
from ..transfer import AREA_GROWTH

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
        self._aside: dict[int, int] = {}  # ticket -> bytes, of shares set aside to be taken back

    def _reserve(self) -> int:
        """Room kept for the largest share set aside (:meth:`Held.set_aside`): the unit that takes it back
        then always finds it, whatever was admitted while it was away."""
        return max(self._aside.values(), default=0)

    def _fits(self, need: int, ticket: int) -> bool:
        room = self.capacity - self._reserve()
        if self.used + need > room:
            return False
        earlier = next((n for t, n in self._waiting.items() if t < ticket), None)
        return earlier is None or self.used + need + earlier <= room

    def _take(self, need: int, ticket: int) -> None:
        self.used += need
        del self._waiting[ticket]
        self._cond.notify_all()  # the next in line may fit beside this one

    def lend(self, nbytes: int, back: bool) -> int | None:
        """``nbytes`` of an admitted unit's share handed to other units (:meth:`Held.set_aside`); with
        ``back``, the ticket under which room stays reserved for taking them back (:meth:`take_back`,
        or :meth:`forget` where the unit ends first)."""
        with self._cond:
            self.used -= nbytes
            ticket = None
            if back:
                ticket = next(self._tickets)
                self._aside[ticket] = nbytes
            self._cond.notify_all()
            return ticket

    def forget(self, ticket: int) -> None:
        """The share lent under ``ticket`` is not taken back (its unit ended): its reserve goes."""
        with self._cond:
            del self._aside[ticket]
            self._cond.notify_all()

    def take_back(self, ticket: int) -> float:
        """The share lent under ``ticket`` taken back, before any unit admitted later (the reserve keeps
        room for it); the seconds it waited for units already running to free it."""
        t = time.monotonic()
        with self._cond:
            nbytes = self._aside[ticket]
            while self.used + nbytes > self.capacity:
                self._cond.wait()
            del self._aside[ticket]
            self.used += nbytes
            self._cond.notify_all()
        return time.monotonic() - t

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
            yield Held(self, 0)
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
        held = Held(self, need)
        try:
            yield held
        finally:
            with self._cond:
                self.used -= held.bytes
                self._cond.notify_all()


class Held:
    """A unit's share of a :class:`MemoryBudget` (what :meth:`MemoryBudget.hold` yields), of which a part
    may be set aside for a while (:meth:`set_aside`)."""

    def __init__(self, budget: MemoryBudget, nbytes: int):
        self.budget, self.bytes = budget, nbytes

    @contextmanager
    def set_aside(self, nbytes: int, back: bool = True, waited: Callable[[float], None] = lambda s: None):
        """``nbytes`` of the share given to other units for the block: a unit's judge share while it waits for
        and takes its timing hold (its judge has let go of everything of the unit's by then). With ``back``
        the unit takes them back as the block ends, before any unit admitted later (the budget keeps room
        for the largest share set aside, so taking it back never waits on a unit that is not running);
        ``waited(seconds)`` is told how long that took. Without, the share stays smaller."""
        budget = self.budget
        nbytes = max(0, min(nbytes, self.bytes))
        if budget.capacity is None or nbytes == 0:
            yield
            return
        ticket = budget.lend(nbytes, back)
        self.bytes -= nbytes
        if ticket is None:
            yield
            return
        try:
            yield
        except BaseException:  # the unit ends here (stopped, timed out): nothing to take back
            budget.forget(ticket)
            raise
        waited(budget.take_back(ticket))
        self.bytes += nbytes


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
    1.28 times their plan on an H100, reports/2026-11-28-calls/call12-h100). A task's ``working_bytes``
    (the reference's intermediates: an attention's score matrices) is added to the judge's share at the
    reference's precision and, for a baseline, to the worker's at the task's: attention units held 3.7-5.9
    times their plans without it (reports/2026-11-28-kept-workers, calls 39-40). ``combos``: only these of the
    unit's combinations (default: all)."""
    worker, judge = _shares(unit, transfer, combos)
    return worker + judge + CONTEXT_BYTES


def judge_share(unit, transfer: str = "area", combos=None) -> int:
    """The part of :func:`footprint` that is the judge's (its CUDA context aside): what a unit sets aside
    while its judge holds nothing of it (:meth:`Held.set_aside`, while the unit waits to be timed)."""
    return _shares(unit, transfer, combos)[1]


def _shares(unit, transfer: str, combos) -> tuple[int, int]:
    """:func:`footprint`'s worker and judge shares, without the contexts."""
    worker = judge = work_worker = work_judge = 0
    precision = getattr(getattr(unit.task, "contract", None), "reference_precision", None)
    working = getattr(unit.task, "working_bytes", None)
    baseline = bool(getattr(getattr(unit, "backend", None), "is_baseline", False))
    for shape_name, dtype in (unit.combos if combos is None else combos):
        try:
            shape, native = unit.task.shape(shape_name), DTYPES[dtype]
            worker = max(worker, task_bytes(unit.task, shape, native))
            upcast = precision if precision is not None and native.is_floating_point else native
            judge = max(judge, task_bytes(unit.task, shape, upcast))
            if working is not None:
                work_judge = max(work_judge, int(working(shape, upcast)))
                if baseline:
                    work_worker = max(work_worker, int(working(shape, native)))
        except Exception:  # a task whose byte count fails is admitted on the context cost alone
            pass
    area = int(AREA_GROWTH * worker) if transfer == "area" else 0
    return FOOTPRINT_FACTOR * worker + area + work_worker, JUDGE_FACTOR * judge + work_judge


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
