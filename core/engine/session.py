"""One unit's candidate worker: forked from the fork server, asked step by step, stopped; and the
unit's clock (seconds per stage, seconds per kind of step) and where it stands (stage, combination),
which say where an abnormal end happened.

A worker that crashes, hangs past a step's limit or corrupts its device context ends its own unit
only: the session stops it (and anything it started) and the lane goes on.

The session also keeps the unit's own limit (``Limits.unit``, ``--unit-limit``): every request is
given the step's limit or what is left of the unit's, whichever is less, and a request with nothing
left is not sent. A unit therefore ends with a verdict within its limit even when each of its steps
stays just under the step limit (a candidate that replaced a CUDA timing function at import once
kept a one-task run going for over 170 s with no verdict). Time spent waiting for another lane is
not the unit's own (:meth:`WorkerSession.waited_for`).
"""

from __future__ import annotations

import math
import time
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from .. import worker as worker_mod
from ..procguard import freeze
from .clock import tree_cpu
from .observation import Combo
from .procs import Child, Timeout

T = TypeVar("T")


class Abnormal(Exception):
    """A step ended the unit: ``kind`` error or poisoned (timeouts and deaths are :mod:`.procs`' own)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


class UnitTimeout(Timeout):
    """The unit's own limit ran out: during a request, or before one could be sent. Its message
    says so, and in which stage and step (a plain :class:`~.procs.Timeout` is a step's limit)."""


class WorkerSession:
    def __init__(self, env: dict[str, str], log_path: Path | None, memory_mb: int | None,
                 modules: tuple[str, ...] = (), confine: dict | None = None, unit_limit: float | None = None):
        t = time.monotonic()
        self.child = Child(worker_mod.entry, (env, str(log_path) if log_path else None, memory_mb, confine), modules)
        self._begin(t, unit_limit, cpu_base=0.0)

    def _begin(self, t: float, unit_limit: float | None, cpu_base: float) -> None:
        """A unit's clock and limit, from ``t`` (its fork, which is the unit's time too)."""
        self.started, self.unit_limit = t, unit_limit
        self.waited = 0.0  # seconds spent waiting for another lane: not counted against the unit limit
        self.cpu_base = cpu_base  # the worker's CPU seconds before this unit (a kept worker's earlier ones)
        self.t = time.monotonic()
        self.stage: str = "start"
        self.combo: Combo | None = None
        self.seconds: dict[str, float] = {}  # wall time per stage of the unit
        self.clock: dict[str, float] = {"fork": round(self.t - t, 3)}  # seconds per kind of step, summed

    def renewed(self, unit_limit: float | None) -> WorkerSession:
        """The next unit's session on this worker (one kept between units, :mod:`.kept`): a clock and a limit
        of its own, its CPU seconds counted from now."""
        session = object.__new__(WorkerSession)
        session.child = self.child
        session._begin(time.monotonic(), unit_limit, cpu_base=tree_cpu(self.child.pid) or 0.0)
        return session

    # --- the clock --------------------------------------------------------------------------
    def enter(self, stage: str) -> None:
        """Move to ``stage``, adding the time spent in the one before to :attr:`seconds`."""
        now = time.monotonic()
        self.seconds[self.stage] = round(self.seconds.get(self.stage, 0.0) + now - self.t, 3)
        self.stage, self.t = stage, now

    def add(self, key: str, seconds: float) -> None:
        self.clock[key] = round(self.clock.get(key, 0.0) + seconds, 3)

    def waited_for(self, key: str, seconds: float) -> None:
        """``seconds`` spent waiting for another lane (``wait_shared``, ``wait_exclusive``,
        ``wait_memory``): on the unit's clock, but not on its limit, so that a busy device never turns
        into a ``timeout`` verdict for a candidate that did nothing wrong."""
        self.add(key, seconds)
        self.waited += seconds

    # --- the unit limit ---------------------------------------------------------------------
    def left(self) -> float:
        """Seconds left of the unit's own time (infinite without a unit limit)."""
        if self.unit_limit is None:
            return math.inf
        return self.unit_limit - (time.monotonic() - self.started - self.waited)

    def expired(self, step: str) -> UnitTimeout:
        own = time.monotonic() - self.started - self.waited
        return UnitTimeout(f"no verdict within the unit limit of {self.unit_limit:g} s (--unit-limit): stopped in "
                           f"the {self.stage} stage, step {step} (the unit's own time {own:.1f} s, and "
                           f"{self.waited:.1f} s waiting for the device)")

    def within(self, timeout: float, call: Callable[[float], T], step: str) -> T:
        """``call(seconds)`` given the step's ``timeout`` or what is left of the unit's limit,
        whichever is less; a timeout of the latter is raised as :class:`UnitTimeout`. With nothing
        left, ``call`` is not made."""
        left = self.left()
        if left <= 0:
            raise self.expired(step)
        try:
            return call(min(timeout, left))
        except UnitTimeout:
            raise
        except Timeout:
            if left < timeout:  # the unit's deadline came first
                raise self.expired(step) from None
            raise

    @contextmanager
    def timed(self, key: str) -> Iterator[None]:
        t = time.monotonic()
        try:
            yield
        finally:
            self.add(key, time.monotonic() - t)

    # --- requests ---------------------------------------------------------------------------
    def request(self, cmd: dict, timeout: float) -> Any:
        return self.within(timeout, lambda seconds: self.child.request(cmd, seconds), str(cmd.get("op")))

    def expect(self, cmd: dict, timeout: float, kind: str, sent: bool = False) -> dict:
        """A step that must answer ``kind``; a failure ends the unit. ``sent``: the request went out
        earlier (a worker started ahead of its lane), only its answer is awaited."""
        if sent:
            reply = self.within(timeout, lambda seconds: self.child.recv(seconds), str(cmd.get("op")))
        else:
            reply = self.request(cmd, timeout)
        if not isinstance(reply, dict):
            raise Abnormal("error", f"worker error: answered {type(reply).__name__}, not a message")
        if reply.get("kind") == "failed":
            if reply.get("poisoned"):
                raise Abnormal("poisoned", "device context corrupted: " + str(reply.get("message")))
            raise Abnormal("error", "worker error: " + str(reply.get("message")))
        if reply.get("kind") != kind:
            raise Abnormal("error", f"worker error: answered {str(reply.get('kind'))[:40]!r} to a {kind} step")
        return reply

    def run(self, cmd: dict, timeout: float,
            step_out: Callable[..., AbstractContextManager] | None = None) -> dict:
        """A ``run`` step (answered ``ran`` or ``failed``), its seconds under run, run_traced or
        run_suppressed. With ``step_out`` (the device's hold let go of for a block), the worker may
        step out of the hold for host work inside the call (:func:`mkbench.worker.host_work`): those
        seconds are the ``host_work`` step's, not the call's, so that a call's seconds are the time it held
        the device (what a timing phase drains for), as the wait to take it again is not either."""
        key = "run_traced" if cmd.get("trace") else "run_suppressed" if cmd.get("suppress") else "run"
        t, waited, built = time.monotonic(), self.waited, self.clock.get("host_work", 0.0)
        op = str(cmd.get("op"))
        if step_out is not None:
            cmd = dict(cmd, step_out=True)
        reply = self.request(cmd, timeout)  # a step that hangs or dies ends the unit: its seconds are the stage's
        while isinstance(reply, dict) and reply.get("kind") == "host_work" and step_out is not None:
            reply = self._host_work(reply, timeout, step_out, op)
        built = self.clock.get("host_work", 0.0) - built
        seconds = time.monotonic() - t - (self.waited - waited) - built  # less the wait to take the device again
        if not isinstance(reply, dict) or reply.get("kind") not in ("ran", "failed"):
            self.add(key, seconds)
            raise Abnormal("error", f"worker error: unexpected answer {str(reply)[:80]}")
        warm = reply.get("warm_s")  # the untraced call before a traced one (EvalSettings.trace_call) is a run
        if isinstance(warm, (int, float)) and warm >= 0:
            # the worker's clock also ran while it built (a first call's build: the warm call's, where there is
            # one) and while it waited to take the device again
            warm = min(max(warm - built, 0.0), seconds)
            self.add("run_warm", warm)
            seconds -= warm
        self.add(key, seconds)
        self._trace_overhead(reply)
        return reply

    def _host_work(self, begun: dict, timeout: float, step_out: Callable[..., AbstractContextManager],
                   op: str) -> Any:
        """The worker began host work inside a call: the device is let go of until it says it is done
        (``host_work`` seconds), taken again (``wait_shared``), and the worker told to go on; the
        call's next message."""
        if "begin" not in begun:
            raise Abnormal("error", "worker error: host work ended before it began")
        t = time.monotonic()
        # stopped while a timing phase holds the device: its word that it launches nothing is not trusted
        with step_out(lambda stop: freeze(self.child.pid, stop)):
            done = self.within(timeout, lambda seconds: self.child.recv(seconds), "host_work")
            back = time.monotonic()
            self.add("host_work", back - t)
            if not (isinstance(done, dict) and done.get("kind") == "host_work" and "end" in done):
                raise Abnormal("error", f"worker error: {str(done)[:80]} inside host work")
        self.waited_for("wait_shared", time.monotonic() - back)
        self.child.send({"op": "resume"})
        return self.within(timeout, lambda seconds: self.child.recv(seconds), op)

    def _trace_overhead(self, reply: dict) -> None:
        """The profiler's own seconds in a traced step (its start, stop, reading the events back), as
        the worker measured them: a traced step's seconds are otherwise mostly the call itself (on an
        H100, a KernelBench-X candidate's first call: 1.6 s on average, the profiler 0.12 s)."""
        cost = (reply.get("trace") or {}).get("cost") if isinstance(reply.get("trace"), dict) else None
        if isinstance(cost, dict):
            seconds = sum(v for v in cost.values() if isinstance(v, (int, float)) and 0 <= v < 3600)
            self.add("trace_overhead", seconds)

    def step(self, cmd: dict, timeout: float, clock_key: str) -> dict:
        """One timing-stage request, its seconds added to ``clock_key``."""
        with self.timed(clock_key):
            reply = self.request(cmd, timeout)
        if not isinstance(reply, dict):
            raise Abnormal("error", f"worker error: answered {type(reply).__name__}, not a message")
        self._trace_overhead(reply)
        return reply

    def alive(self) -> bool:
        return self.child.proc.is_alive()

    def cpu(self) -> float | None:
        """CPU seconds the worker (and what runs below it) has used so far (:func:`.clock.tree_cpu`)."""
        cpu = tree_cpu(self.child.pid)
        return None if cpu is None else round(max(cpu - self.cpu_base, 0.0), 3)

    def stop(self) -> None:
        self.child.stop(grace=2)
