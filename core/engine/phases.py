"""A device's timing phases: checks share the device, timers take it alone, in phases
(:class:`PhasedLock`), and the defaults that shape those phases (``--timing-batch``, ``--timing-gather``,
``--timing-defer``). One lock per device (:class:`.device.Device`)."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable


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
