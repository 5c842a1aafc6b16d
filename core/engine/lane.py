"""One lane: a trusted judge process (:mod:`.judge_client`), and one candidate worker at a time
(:mod:`.session`), driven step by step (:mod:`.steps`).

For a unit the lane forks a worker (or, for an eager baseline, takes one kept idle: :mod:`.kept`), has it
set up and compile, waits for the unit's share of the device's memory, runs the steps, and stops the worker
whatever happened (a kept one that ended cleanly lets go of the unit and waits for the next). What is observed is
returned as frozen data (:class:`~.observation.Observation`); the orchestrator turns it into rows
(:func:`.rows.decide`). A worker that crashes, hangs past a step's limit or corrupts its device
context ends its own unit only; the lane kills it (and anything it started) and goes on. So does
one that runs past the unit's own limit (``--unit-limit``, kept by the session), and one whose
import replaced a harness function (a timing function, most often): it ends right after its compile
step, with the evidence.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import Callable, Iterator

from . import compile_ahead, steps
from .clock import CPU_WORKER, WAIT_MEMORY
from .judge_client import JudgeClient
from .kept import keeps_worker
from .memory import judge_share
from .observation import AbnormalEnd, Compiled, Observation, Recorder
from .procs import Child, Died, Timeout, log_tail
from .session import Abnormal, UnitTimeout, WorkerSession
from .settings import EvalSettings, Limits

__all__ = ["EvalSettings", "Lane", "Limits"]

MEMORY_ASK_S = 5.0  # how long a worker may take to say its memory peak, at the end of its unit


class Lane:
    def __init__(self, device, index: int, env: dict[str, str], modules: tuple[str, ...] = ()):
        self.device, self.index, self.env, self.modules = device, index, dict(env), modules
        self.judge = JudgeClient(self.env, device.kind, modules, stopped=lambda: self.closing)
        self.current: Child | None = None  # the worker of the unit in flight
        self.clock: dict[str, float] = {}
        self.closing = False  # the run is being stopped: start nothing new
        self.state = "idle"

    def close(self) -> None:
        self.judge.close()

    def _fork(self, settings: EvalSettings, log_path: Path | None, env: dict[str, str]) -> WorkerSession:
        w = fork(self.env, self.modules, settings, log_path, env)
        self.current = w.child
        return w

    # --- one unit ----------------------------------------------------------------------------
    def evaluate(self, unit, settings: EvalSettings, log_path: Path | None, env: dict[str, str],
                 room: Callable[..., AbstractContextManager] = lambda away=None, stage=False: nullcontext(),
                 lease=None, first_stage: list | None = None, started: WorkerSession | None = None,
                 room_first: bool = False) -> Observation:
        """``room(away)`` holds the unit's share of the device's memory: taken after the compile (host
        work: nvcc, imports, the profiler's start-up), given back after the worker has exited and the
        judge has let go of the unit's inputs. With a ``lease`` (:class:`.device.Lease`, holding this
        lane) the unit gives the lane up (``away()``) while it waits for that room if a unit back from
        timing needs a lane, and while it waits for and takes its timing hold; it ends on whichever
        lane it took back. With ``first_stage`` (combinations: :func:`.memory.first_stage`) the unit
        checks those on a first stage's share (``room(away, stage=True)``), gives it back, and waits
        for its whole share before the next combination (:func:`_grow`). ``started``: the unit's worker,
        forked and sent its setup before the unit had this lane (:func:`start_ahead`). ``room_first``: the
        unit's share is held before its worker sets up, not after its compile (a retry after running out
        of memory)."""
        def here() -> Lane:
            return lease.lane if lease is not None and lease.lane is not None else self

        def say(state: str) -> None:
            here().state = state

        rec = Recorder(lane=f"{self.device.name}/lane{self.index}")

        def judge_peak(peak: int | None) -> None:
            rec.peak("judge_peak", peak)
        if self.closing:
            if started is not None:
                started.child.kill()
            rec.abnormal = AbnormalEnd("error", None, None, "the run was stopped")
            return rec.freeze()
        kept = None  # a trusted baseline's worker, kept between units (.kept)
        pool = getattr(self.device, "baseline_workers", None)
        if started is not None:
            w = started
            self.current = w.child
            w.enter("start")
        elif pool is not None and keeps_worker(unit):
            kept = pool.take(lambda env_, log: fork(self.env, self.modules, settings, log, env_), env, log_path,
                             settings.limits.unit)
            w = kept.session
            self.current = w.child
        else:
            w = self._fork(settings, log_path, env)
        rec.seconds, self.clock = w.seconds, w.clock
        rec.steps = w.clock
        holding = ExitStack()
        hold = holding.enter_context(ExitStack())  # the unit's share; a staged one is replaced once
        # it waits for the room on its lane, unless a unit back from timing needs the lane
        away = (lambda: lease.away(w, settings.limits.start, judge_peak)) if lease is not None else nullcontext

        share = _Share(unit, settings.transfer, set_aside=not room_first)

        def take_room(stage: bool) -> None:
            w.enter(WAIT_MEMORY)
            self.state = f"wait for memory {unit.task.name}"
            lane_wait = w.clock.get("wait_lane", 0.0)
            share.took(hold.enter_context(room(away, stage)), first_stage if stage else None)
            lane_wait = w.clock.get("wait_lane", 0.0) - lane_wait  # on the clock already, as wait_lane
            # another lane's doing: not on the unit limit
            w.waited_for(WAIT_MEMORY, time.monotonic() - w.t - lane_wait)

        keep_tail = False  # a unit that ends at its compile (failed, or compile only) keeps no log tail
        try:
            if room_first:
                # a unit run again after it ran out of memory: its share (the whole budget) is held before
                # its worker creates a CUDA context, which is where an earlier attempt may have run out
                take_room(False)
                w.enter("start")
            ready = start_worker(self.device, w, setup_request(unit, settings), settings.limits.start,
                                 sent=started is not None)
            _start_parts(w, ready)
            w.enter("compile")
            self.state = f"compile {unit.task.name}"
            reply = w.expect({"op": "compile"}, settings.limits.compile, "compiled")
            tamper = reply.get("tamper") if reply["ok"] and not unit.backend.is_baseline else None
            rec.compile = Compiled(reply["ok"], reply["message"], reply["checks"],
                                   tamper=str(tamper)[:2000] if tamper else None)
            if tamper:
                # The candidate changed the harness as it was imported: the verdict is hack on that
                # evidence, and nothing this worker would run or time from here could be trusted (a
                # replaced CUDA timing function kept a one-task run going for over 170 s). The unit
                # ends now: no correctness runs, no timing.
                keep_tail = True
            elif reply["ok"] and not unit.compile_only:
                keep_tail = True
                if not unit.backend.is_baseline:
                    t = time.monotonic()
                    w.expect({"op": "warm"}, settings.limits.start, "warm")
                    w.add("warm", time.monotonic() - t)  # the profiler's start, within the compile stage
                if not room_first:
                    take_room(first_stage is not None)
                w.enter("correctness")
                run = steps.UnitRun(unit, settings, self.device, w, here().judge, rec, say)
                if lease is not None:
                    run.away = lambda: _away(lease, run, settings.limits.start, judge_peak,
                                             lambda: share.judge_aside(w))
                if first_stage is not None:
                    run.room_for = _grow(run, set(first_stage), hold, lambda: room(away), lambda: here().judge,
                                         took=lambda held: share.took(held, None))
                passed = steps.correctness(run)
                if settings.time_roles:
                    passed = [(sh, dt) for sh, dt in passed if unit.task.shape(sh).role in settings.time_roles]
                if any(c.tamper for c in rec.combos.values()):
                    # The candidate changed the harness in this worker: the verdict is hack on that
                    # evidence, and nothing the worker measured from here on could be trusted (a
                    # replaced clock can keep a timing loop going until the time limit).
                    passed = []
                if settings.timed and passed:
                    w.enter("timing")
                    steps.timing(run, passed)
        except Timeout as exc:
            keep_tail = True
            # the unit's own limit says so (and in which step); a step's limit is named by its stage
            message = str(exc) if isinstance(exc, UnitTimeout) else f"no progress within the {w.stage} time limit"
            rec.abnormal = AbnormalEnd("timeout", w.stage, w.combo, message)
        except Died as exc:
            keep_tail = True
            rec.abnormal = AbnormalEnd("crash", w.stage, w.combo, f"worker died ({exc.desc})")
        except Abnormal as exc:
            keep_tail = True
            rec.abnormal = AbnormalEnd(exc.kind, w.stage, w.combo, exc.message)
        except Exception as exc:  # the worker broke the protocol (garbage on its pipe, a malformed answer)
            keep_tail = True
            rec.abnormal = AbnormalEnd("error", w.stage, w.combo, f"worker error: {type(exc).__name__}: {exc}")
        finally:
            w.enter("done")
            cpu = w.cpu()
            if cpu is not None:
                w.clock[CPU_WORKER] = cpu  # CPU seconds, not wall: whether lanes' workers crowd the host
            t = time.monotonic()
            if rec.abnormal is None:
                rec.peak("worker_peak", _worker_peak(w))
            lane = here()
            judge_peak(lane.judge.release(settings.limits.start))  # unmaps the worker's transfer area first
            if kept is not None:
                pool.give(kept, clean=rec.abnormal is None and not self.closing, unit_log=log_path)
            elif self.closing:
                w.stop()
            else:
                with steps.device_shared(self.device, w):  # its exit tears its context down: as its start
                    w.stop()
            holding.close()
            w.clock["stop"] = round(time.monotonic() - t, 3)
            lane.current = None
            lane.state = "idle"
        if keep_tail:
            rec.log_tail = log_tail(log_path)
        return rec.freeze()


def fork(device_env: dict[str, str], modules: tuple[str, ...], settings: EvalSettings, log_path: Path | None,
         env: dict[str, str]) -> WorkerSession:
    """A unit's worker, forked from the fork server with the device's and the unit's environment."""
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
    return WorkerSession(dict(device_env, **env), log_path, settings.worker_memory_mb, modules,
                         settings.confine, unit_limit=settings.limits.unit)


def setup_request(unit, settings: EvalSettings) -> dict:
    return {"op": "setup", "job": compile_ahead.job(unit), "transfer": settings.transfer}


def start_worker(device, w: WorkerSession, request: dict, timeout: float, sent: bool = False) -> dict:
    """The worker's setup, which makes its CUDA context, as a check: under the device's shared hold.

    Making a context takes the host's driver for a second or two, and a timed call's own driver calls
    (a copy from pageable memory, an allocation, a synchronize) wait for it. Started while a timing
    phase was open, contexts made KernelBench-X harness calls that take 1.5 ms sleep most of 45-55 ms
    (the timing thread on a core 19-56% of the time, 37-101 voluntary switches; one H200, the first
    40 s of a run, when the lanes' first workers start: reports/2026-11-29-timing-stop, call 55).
    As a check, a start waits for an open phase to end, and a phase drains the starts in flight."""
    with steps.device_shared(device, w):
        return w.expect(request, timeout, "ready", sent=sent)


def start_ahead(device_env: dict[str, str], modules: tuple[str, ...], unit, settings: EvalSettings,
                log_path: Path | None, env: dict[str, str]) -> WorkerSession:
    """``unit``'s worker forked and sent its setup (its confinement, then its CUDA context: nothing of the
    candidate's yet), without waiting for the answer: the worker starts while the unit waits for a lane,
    and the lane that takes the unit reads the answer (:meth:`Lane.evaluate`, ``started``). The wait for
    the lane is ``wait_lane`` on the unit's clock, not on its limit."""
    w = fork(device_env, modules, settings, log_path, env)
    try:
        w.child.send(setup_request(unit, settings))
    except Exception:  # noqa: BLE001 - dead already: the lane reads that from its pipe and reports it
        pass
    return w


def _start_parts(w, ready: dict) -> None:
    """The worker's start-up by part (``start_confine``, ``start_cuda_init``): said before any candidate
    code was imported, so trusted as far as plain numbers go."""
    parts = ready.get("start_seconds")
    for part, seconds in (parts.items() if isinstance(parts, dict) else ()):
        if isinstance(part, str) and isinstance(seconds, (int, float)) and 0 <= seconds < 1e6:
            w.add(f"start_{part}", float(seconds))


def _worker_peak(w: WorkerSession) -> int | None:
    """The worker's allocator peak (its own word: a statistic for the memory plan), or None."""
    try:
        peak = w.request({"op": "memory"}, MEMORY_ASK_S).get("peak_bytes")
    except Exception:  # noqa: BLE001 - a worker that cannot say costs the unit nothing
        return None
    return peak if isinstance(peak, int) and not isinstance(peak, bool) and 0 <= peak < 1 << 50 else None


def _grow(run: steps.UnitRun, first: set, hold: ExitStack, whole: Callable[[], AbstractContextManager],
          judge: Callable[[], JudgeClient], took: Callable[[object], None] = lambda held: None):
    """``run.room_for``: before the first combination outside the first stage, the unit gives its first
    stage's share back and waits for its whole share (never holding one while waiting for the other, so
    that staging adds no wait that could close a cycle), maybe without its lane as at its first wait;
    it goes on with the judge of whichever lane it holds then. The wait is ``wait_memory`` on its clock,
    not on its limit."""
    grown = False

    def room_for(combo) -> None:
        nonlocal grown
        if grown or combo in first:
            return
        grown = True
        w = run.worker
        t, lane_wait = time.monotonic(), w.clock.get("wait_lane", 0.0)
        run.say(f"wait for memory {run.unit.task.name}")
        hold.close()  # the first stage's share back
        took(hold.enter_context(whole()))
        run.judge = judge()
        w.waited_for(WAIT_MEMORY, time.monotonic() - t - (w.clock.get("wait_lane", 0.0) - lane_wait))
    return room_for


class _Share:
    """The unit's hold on the device's memory budget (a :class:`.memory.Held`, or None where the budget is
    replaced, as tests do), and the combinations it was planned for."""

    def __init__(self, unit, transfer: str, set_aside: bool):
        self.unit, self.transfer, self.may_set_aside = unit, transfer, set_aside
        self.held, self.combos = None, None

    def took(self, held, combos: list | None) -> None:
        self.held, self.combos = held, combos

    def judge_aside(self, w: WorkerSession) -> AbstractContextManager:
        """The judge's share given to other units while the unit is away to be timed: its judge let go of
        everything of the unit's as the unit left its lane, and timing uses only the worker. A candidate
        takes it back after timing (its answers are judged again); a baseline, trusted and not judged
        after timing, does not. On one H200, units waited for the budget 45% of their time while each
        held its whole share for the 14 s it spent away to be timed (reports/2026-11-28-kept-workers,
        call 40). Not for a unit run again after it ran out of memory: it keeps the whole budget."""
        set_aside = getattr(self.held, "set_aside", None)
        if not self.may_set_aside or set_aside is None:
            return nullcontext()
        return set_aside(judge_share(self.unit, self.transfer, self.combos),
                         back=not self.unit.backend.is_baseline,
                         waited=lambda seconds: w.waited_for(WAIT_MEMORY, seconds))


@contextmanager
def _away(lease, run: steps.UnitRun, judge_timeout: float, judge_peak,
          aside: Callable[[], AbstractContextManager] = nullcontext) -> Iterator[None]:
    """The unit without a lane while it waits for and takes its timing hold, its judge's share of the memory
    set aside (``aside()``, taken once the lane's judge has let go, and back before the unit waits for a lane);
    afterwards its checks use the judge of the lane it took back."""
    with lease.away(run.worker, judge_timeout, judge_peak):
        with aside():
            yield
    run.judge = lease.lane.judge
