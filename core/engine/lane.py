"""One lane: a trusted judge process, and one candidate worker at a time, driven step by step.

The lane holds the evaluation plan; the worker only executes steps (:mod:`mkbench.worker`) and the
judge only judges (:mod:`mkbench.judge`). For a unit (one candidate or baseline on one task):

1. compile;
2. correctness: for every (shape, dtype) and seed, the worker runs the candidate on inputs generated
   from the seed (the first seed traced), the judge regenerates the inputs and judges the outputs;
3. the decoy check (backends that can suppress launches): the first seed once more with the
   candidate's own launches suppressed; a right answer then was not computed by them;
4. timing, with the device to itself (:class:`~.device.Device`), once per unit for all its
   combinations: each timing input judged before (shared), then, alone, the timed calls and a few
   traced ones (the trace's kernel durations are compared with the timer's only when both were taken
   alone), then, shared again, the same inputs judged after them and one fresh seed.

What is observed is returned as plain data (:func:`new_observation`); the orchestrator turns it into
rows (:mod:`.rows`). A worker that crashes, hangs past a step's limit or corrupts its device context
ends its own unit only; the lane kills it (and anything it started) and goes on.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, ExitStack, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import judge as judge_mod
from .. import transfer
from .. import worker as worker_mod
from ..inputs import seed_for
from ..timing import TimingSettings
from ..verdicts import Verdict
from .procs import Child, Died, Timeout, log_tail


@dataclass
class Limits:
    """Seconds allowed for one step: the whole compile, or one (shape, dtype) check or timing."""

    compile: float = 300.0
    correctness: float = 180.0
    timing: float = 180.0
    start: float = 120.0  # forking and setting up, before the first answer


@dataclass
class EvalSettings:
    run_seed: int
    seeds: int = 2
    timing: TimingSettings = field(default_factory=TimingSettings)
    timed: bool = True
    limits: Limits = field(default_factory=Limits)
    trace_calls: int = 3
    time_roles: tuple[str, ...] = ()  # shape roles to time; empty: every role
    worker_memory_mb: int | None = None  # the candidate worker's RLIMIT_DATA (None: no cap)


def combo_key(shape: str, dtype: str) -> str:
    return f"{shape}|{dtype}"


def new_observation() -> dict[str, Any]:
    # "seconds": wall time per stage of the unit (start, compile, correctness, timing_wait, timing)
    return {"compile": None, "combos": {}, "abnormal": None, "log_tail": "", "lane": None, "seconds": {}}


class _Abnormal(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


class Lane:
    def __init__(self, device, index: int, env: dict[str, str], modules: tuple[str, ...] = ()):
        self.device, self.index, self.env, self.modules = device, index, dict(env), modules
        self._judge: Child | None = None
        self.current: Child | None = None  # the worker of the unit in flight
        self.clock: dict[str, float] = {}
        self.closing = False  # the run is being stopped: start nothing new
        self.state = "idle"

    # --- processes ---------------------------------------------------------------------------
    def judge(self) -> Child:
        if self.closing:
            raise _Abnormal("error", "the run was stopped")
        if self._judge is None or not self._judge.proc.is_alive():
            self._judge = Child(judge_mod.serve, (self.env, self.device.kind), self.modules)
        return self._judge

    def _release_judge(self, settings: EvalSettings) -> None:
        """The judge lets go of the unit's memory before the unit's budget is given back (a judge
        that does not answer is replaced)."""
        if self._judge is None or not self._judge.proc.is_alive():
            return
        try:
            if self._judge.request({"op": "release"}, settings.limits.start).get("kind") != "released":
                raise ValueError("unexpected answer")
        except Exception:  # noqa: BLE001 - a judge that cannot release is not trusted with the next unit
            self.close()

    def close(self) -> None:
        if self._judge is not None:
            self._judge.stop(grace=2)
            self._judge = None

    # --- one unit ----------------------------------------------------------------------------
    def evaluate(self, unit, settings: EvalSettings, log_path: Path | None, env: dict[str, str],
                 room: Callable[[], AbstractContextManager] = nullcontext) -> dict[str, Any]:
        """``room()`` holds the unit's share of the device's memory: taken after the compile (host
        work: nvcc, imports, the profiler's start-up), given back after the worker has exited and the
        judge has let go of the unit's inputs."""
        obs = new_observation()
        obs["lane"] = f"{self.device.name}/lane{self.index}"
        if self.closing:
            obs["abnormal"] = {"kind": "error", "stage": None, "combo": None, "message": "the run was stopped"}
            return obs
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
        t = time.monotonic()
        w = self.current = Child(worker_mod.entry, (dict(self.env, **env), str(log_path) if log_path else None,
                                                    settings.worker_memory_mb), self.modules)
        state = {"stage": "start", "combo": None, "t": time.monotonic(), "seconds": obs["seconds"]}
        self.clock = obs["steps"] = {"fork": round(state["t"] - t, 3)}  # seconds per kind of step, summed over the unit
        holding = ExitStack()
        try:
            self._expect(w.request({"op": "setup", "job": _job(unit)}, settings.limits.start), "ready")
            _stage(state, "compile")
            self.state = f"compile {unit.task.name}"
            reply = self._expect(w.request({"op": "compile"}, settings.limits.compile), "compiled")
            obs["compile"] = {"ok": reply["ok"], "message": reply["message"], "checks": reply["checks"]}
            if not reply["ok"] or unit.compile_only:
                return obs
            if not unit.backend.is_baseline:
                self._expect(w.request({"op": "warm"}, settings.limits.start), "warm")
            _stage(state, "wait_memory")
            self.state = f"wait for memory {unit.task.name}"
            holding.enter_context(room())
            self.clock["wait_memory"] = round(time.monotonic() - state["t"], 3)
            _stage(state, "correctness")
            passed = self._correctness(unit, settings, w, obs, state)
            if settings.time_roles:
                passed = [(sh, dt) for sh, dt in passed if unit.task.shape(sh).role in settings.time_roles]
            if any(c.get("tamper") for c in obs["combos"].values()):
                # The candidate changed the harness in this worker: the verdict is hack on that
                # evidence, and nothing the worker measured from here on could be trusted (a
                # replaced clock can keep a timing loop going until the time limit).
                passed = []
            if settings.timed and passed:
                _stage(state, "timing")
                self._timing(unit, settings, w, obs, passed, state)
        except Timeout:
            obs["abnormal"] = {"kind": "timeout", "stage": state["stage"], "combo": state["combo"],
                               "message": f"no progress within the {state['stage']} time limit"}
        except Died as exc:
            obs["abnormal"] = {"kind": "crash", "stage": state["stage"], "combo": state["combo"],
                               "message": f"worker died ({exc.desc})"}
        except _Abnormal as exc:
            obs["abnormal"] = {"kind": exc.kind, "stage": state["stage"], "combo": state["combo"],
                               "message": exc.message}
        except Exception as exc:  # the worker broke the protocol (garbage on its pipe, a malformed answer)
            obs["abnormal"] = {"kind": "error", "stage": state["stage"], "combo": state["combo"],
                               "message": f"worker error: {type(exc).__name__}: {exc}"}
        finally:
            _stage(state, "done")
            t = time.monotonic()
            w.stop(grace=2)
            self._release_judge(settings)
            holding.close()
            self.clock["stop"] = round(time.monotonic() - t, 3)
            self.current = None
            self.state = "idle"
        obs["log_tail"] = log_tail(log_path)
        return obs

    @staticmethod
    def _expect(reply: Any, kind: str) -> dict:
        if not isinstance(reply, dict):
            raise _Abnormal("error", f"worker error: answered {type(reply).__name__}, not a message")
        if reply.get("kind") == "failed":
            if reply.get("poisoned"):
                raise _Abnormal("poisoned", "device context corrupted: " + str(reply.get("message")))
            raise _Abnormal("error", "worker error: " + str(reply.get("message")))
        if reply.get("kind") != kind:
            raise _Abnormal("error", f"worker error: answered {str(reply.get('kind'))[:40]!r} to a {kind} step")
        return reply

    # --- correctness --------------------------------------------------------------------------
    def _correctness(self, unit, settings: EvalSettings, w: Child, obs: dict, state: dict) -> list[tuple[str, str]]:
        passed = []
        for shape, dtype in unit.combos:
            state["combo"] = [shape, dtype]
            self.state = f"check {unit.task.name} {shape}/{dtype}"
            c = obs["combos"].setdefault(combo_key(shape, dtype), {})
            status, message, errs = Verdict.CORRECT, "", (0.0, 0.0)
            for k in range(settings.seeds):
                seed = seed_for(settings.run_seed, unit.task.name, shape, dtype, k)
                t = time.monotonic()
                with self.device.shared():
                    self.clock["wait_shared"] = round(self.clock.get("wait_shared", 0.0) + time.monotonic() - t, 3)
                    # the device trace is evidence about a candidate: a baseline is the task's own code
                    trace = k == 0 and not unit.backend.is_baseline
                    ran = self._run(w, {"op": "run", "shape": shape, "dtype": dtype, "seed": seed, "trace": trace},
                                    settings.limits.correctness)
                    if ran.get("kind") == "failed":
                        status, message = self._failed_status(ran, c)
                        break
                    if k == 0:
                        trace = ran.get("trace")
                        if isinstance(trace, dict):
                            trace["alone"] = False  # taken under sharing, whatever the worker says
                        c.update(launches=ran.get("launches"), trace=trace)
                    if ran.get("tamper") and not c.get("tamper"):
                        c["tamper"] = f"seed {k}: {ran['tamper']}"
                    verdict = self._judge_ran(unit, shape, dtype, seed, ran, w, settings)
                if verdict.get("note"):
                    c["judge_note"] = verdict["note"]
                if not verdict["ok"]:
                    status, message = Verdict.INCORRECT, f"seed {k}: {verdict['message']}"
                    errs = (verdict.get("max_abs_err"), verdict.get("max_rel_err"))
                    break
                errs = (max(errs[0] or 0.0, verdict.get("max_abs_err") or 0.0),
                        max(errs[1] or 0.0, verdict.get("max_rel_err") or 0.0))
            c["correct"] = {"status": status, "message": message, "max_abs_err": errs[0], "max_rel_err": errs[1]}
            if status == Verdict.COMPILE_ERROR:
                break
            if status == Verdict.CORRECT:
                if not unit.backend.is_baseline and unit.backend.can_suppress_launches and c.get("launches"):
                    c["decoy"] = self._decoy(unit, shape, dtype, settings, w)
                passed.append((shape, dtype))
        state["combo"] = None
        return passed

    def _failed_status(self, ran: dict, c: dict) -> tuple[str, str]:
        if ran.get("poisoned"):
            raise _Abnormal("poisoned", "device context corrupted: " + str(ran.get("message")))
        if ran.get("hack"):
            c["backend_violation"] = ran["hack"]
            return Verdict.CORRECT, ""  # judged by the integrity rules as hack
        return (Verdict.COMPILE_ERROR if ran.get("compile_error") else Verdict.ERROR), str(ran.get("message"))

    def _decoy(self, unit, shape: str, dtype: str, settings: EvalSettings, w: Child) -> dict:
        # A seed never evaluated before: a kernel that writes into a buffer it keeps across calls (honest)
        # still holds the previous input's answer there, which is wrong for these inputs.
        seed = seed_for(settings.run_seed, unit.task.name, shape, dtype, 2000)
        with self.device.shared():
            ran = self._run(w, {"op": "run", "shape": shape, "dtype": dtype, "seed": seed, "suppress": True},
                            settings.limits.correctness)
            if ran.get("kind") == "failed":
                if ran.get("poisoned"):
                    raise _Abnormal("poisoned", "device context corrupted (with its launches suppressed): "
                                    + str(ran.get("message")))
                return {"checked": True, "still_correct": False, "launches": None}
            verdict = self._judge_ran(unit, shape, dtype, seed, ran, w, settings)
        return {"checked": True, "still_correct": bool(verdict["ok"]), "launches": ran.get("launches")}

    def _step(self, w: Child, cmd: dict, settings: EvalSettings, clock_key: str) -> dict:
        """One timing-stage request, its seconds added to ``clock_key``."""
        t = time.monotonic()
        try:
            reply = w.request(cmd, settings.limits.timing)
        finally:
            self.clock[clock_key] = round(self.clock.get(clock_key, 0.0) + time.monotonic() - t, 3)
        if not isinstance(reply, dict):
            raise _Abnormal("error", f"worker error: answered {type(reply).__name__}, not a message")
        return reply

    def _run(self, w: Child, cmd: dict, timeout: float) -> dict:
        t = time.monotonic()
        reply = w.request(cmd, timeout)
        key = "run_traced" if cmd.get("trace") else "run_suppressed" if cmd.get("suppress") else "run"
        self.clock[key] = round(self.clock.get(key, 0.0) + time.monotonic() - t, 3)
        if not isinstance(reply, dict) or reply.get("kind") not in ("ran", "failed"):
            raise _Abnormal("error", f"worker error: unexpected answer {str(reply)[:80]}")
        return reply

    def _judge_ran(self, unit, shape: str, dtype: str, seed: int, ran: dict, w: Child, settings: EvalSettings) -> dict:
        """The judge's verdict on one exported answer (and the shared memory it used, released)."""
        made = transfer.shm_names(ran.get("outputs", []) + ran.get("inputs_after", []))
        try:
            if ran.get("structure"):
                return {"ok": False, "message": ran["structure"], "max_abs_err": None, "max_rel_err": None}
            return self._ask_judge({"op": "check", "task": unit.task.source, "shape": shape, "dtype": dtype,
                                    "seed": seed,
                                    "outputs": ran["outputs"], "inputs_after": ran["inputs_after"]}, w, settings)
        finally:
            transfer.unlink(made)

    def _ask_judge(self, request: dict, w: Child, settings: EvalSettings) -> dict:
        j = self.judge()
        made: list[str] = []
        t = time.monotonic()
        try:
            j.send(request)
            while True:
                msg = j.recv(settings.limits.correctness)
                kind = msg.get("kind")
                if kind == "judged":
                    return msg
                if kind == "judge_error":
                    raise _Abnormal("error", "the judge failed: " + str(msg.get("message")))
                if kind == "call":  # the contract re-runs the candidate
                    made += transfer.shm_names(msg["args"])
                    reply = w.request({"op": "call", "args": msg["args"]}, settings.limits.correctness)
                    if reply.get("kind") == "ran" and not reply.get("structure"):
                        made += transfer.shm_names(reply["outputs"] + reply["inputs_after"])
                        j.send({"kind": "call_result", "outputs": reply["outputs"]})
                    else:
                        j.send({"kind": "call_failed", "message": reply.get("message") or reply.get("structure")})
                else:
                    raise _Abnormal("error", f"the judge answered {str(kind)[:40]!r}")
        except (Timeout, Died) as exc:
            self.close()  # a judge that hung or died is replaced for the next unit
            if isinstance(exc, Died) and w.proc.is_alive():
                raise _Abnormal("error", f"the judge died ({exc.desc})") from None
            raise
        finally:
            transfer.unlink(made)
            self.clock["judge"] = round(self.clock.get("judge", 0.0) + time.monotonic() - t, 3)

    # --- timing ---------------------------------------------------------------------------
    def _timing(self, unit, settings: EvalSettings, w: Child, obs: dict, passed: list, state: dict) -> None:
        """The timed calls of every combination in one exclusive hold of the device: each hold makes
        the other lanes finish their steps and wait, so one per unit, not one per combination. The
        judgements before and after are correctness work and share the device with the other lanes."""
        s = settings.timing
        trusted = unit.backend.is_baseline  # the task's own reference code: nothing to catch, just time it
        timed_combos = []
        for shape, dtype in passed:
            state["combo"] = [shape, dtype]
            self.state = f"time {unit.task.name} {shape}/{dtype}"
            c = obs["combos"][combo_key(shape, dtype)]
            pool = [seed_for(settings.run_seed, "timing", unit.task.name, shape, dtype, k) for k in range(s.pool_size)]
            if not trusted:
                # Each timing input judged once before any timed call, on a fresh copy made from its
                # seed: an input answered wrongly here is an incorrect answer, not evidence of cheating.
                with self.device.shared():
                    for k, seed in enumerate(pool):
                        ran = self._run(w, {"op": "run", "shape": shape, "dtype": dtype, "seed": seed},
                                        settings.limits.timing)
                        if ran.get("kind") == "failed":
                            c["timing_error"] = self._failed_status(ran, c)[1]
                            break
                        verdict = self._judge_ran(unit, shape, dtype, seed, ran, w, settings)
                        if not verdict["ok"]:
                            c["before"] = f"on a timing input, before timing: timing input {k}: {verdict['message']}"
                            break
                if c.get("before") or c.get("timing_error"):
                    continue
            timed_combos.append((shape, dtype, c, {"shape": shape, "dtype": dtype, "seeds": pool}))
        if not timed_combos:
            return
        waited = time.monotonic()
        with self.device.exclusive():
            self.clock["wait_exclusive"] = round(self.clock.get("wait_exclusive", 0.0) + time.monotonic() - waited, 3)
            for shape, dtype, c, step in timed_combos:
                state["combo"] = [shape, dtype]
                self.state = f"time {unit.task.name} {shape}/{dtype}"
                # the worker makes the pool's inputs first (milliseconds), then times the calls
                timed = self._step(w, dict(step, op="time", settings=s), settings, "time_step")
                if timed.get("kind") == "failed":
                    c["timing_error"] = self._failed_status(timed, c)[1]
                    continue
                if timed.get("kind") != "timed":
                    raise _Abnormal("error", "worker error: unexpected answer to a timing step")
                c.update(timing=timed["timing"], timing_tamper=timed.get("tamper"))
                if not trusted and settings.trace_calls:
                    self._trace_alone(settings, w, c, step)
        if trusted:
            return
        for shape, dtype, c, step in timed_combos:
            if "timing" in c and not c.get("timing_error"):  # timed, and traced without failing
                state["combo"] = [shape, dtype]
                self.state = f"check after timing {unit.task.name} {shape}/{dtype}"
                with self.device.shared():
                    self._after_timing(unit, settings, w, c, step)
        state["combo"] = None

    def _trace_alone(self, settings: EvalSettings, w: Child, c: dict, step: dict) -> None:
        """A few calls traced as the timer made them, right after it, still holding the device alone:
        the trace's kernel durations are then comparable with the timer's (under sharing the same
        kernels ran 4 to 4.5 times longer on an H200, which made honest kernels look like hacks)."""
        traced = self._step(w, dict(step, op="trace", calls=settings.trace_calls), settings, "trace_step")
        if traced.get("kind") == "traced":
            trace = traced.get("trace")
            if isinstance(trace, dict):
                trace["alone"] = True  # said by the orchestrator, which held the lock, whatever the worker sent
            c["timing_trace"] = trace
            c["timing_tamper"] = c.get("timing_tamper") or traced.get("tamper")
        elif traced.get("kind") == "failed":
            c["timing_error"] = self._failed_status(traced, c)[1]

    def _after_timing(self, unit, settings: EvalSettings, w: Child, c: dict, step: dict) -> None:
        """The pool's inputs answered again (stale or cached answers), and one fresh seed."""
        shape, dtype, pool = step["shape"], step["dtype"], step["seeds"]
        if unit.task.stateful_reference:
            answered = {"kind": "answers", "answers": []}
        else:
            answered = self._step(w, dict(step, op="answers"), settings, "time_answers")
        if answered.get("kind") == "failed":
            c["timing_error"] = self._failed_status(answered, c)[1]
            return
        if answered.get("kind") != "answers":
            raise _Abnormal("error", "worker error: unexpected answer to an answers step")
        c["timing_tamper"] = c.get("timing_tamper") or answered.get("tamper")
        if unit.task.stateful_reference:
            # The reference's own answers change from call to call: after the timed calls the
            # candidate has made many more calls than the judge's copy, so answers then prove nothing.
            c["unchecked"] = ("answers after the timed calls not judged: the reference keeps state across "
                              f"calls ({unit.task.stateful_reference})")
            return
        try:
            for k, (seed, answer) in enumerate(zip(pool, answered["answers"])):
                verdict = self._judge_ran(unit, shape, dtype, seed, answer, w, settings)
                if not verdict["ok"]:
                    c["stale"] = (f"timing input {k} was answered correctly before the timed calls and wrongly "
                                  f"after them (cached or stale results?): {verdict['message']}")
                    break
        finally:  # the answers not judged (after a wrong one) let go of their shared memory too
            transfer.unlink(transfer.shm_names([d for a in answered["answers"]
                                                for d in a.get("outputs", []) + a.get("inputs_after", [])]))
        # Inputs never seen before, after the timed calls. Wrong here is wrong, but nothing
        # shows it was right before: incorrect, not hack.
        seed = seed_for(settings.run_seed, unit.task.name, shape, dtype, 1000)
        ran = self._run(w, {"op": "run", "shape": shape, "dtype": dtype, "seed": seed}, settings.limits.timing)
        if ran.get("kind") == "failed":
            c["fresh"] = "after timing, a fresh seed fails: " + self._failed_status(ran, c)[1]
            return
        if ran.get("tamper") and not c.get("tamper"):
            c["tamper"] = "after timing: " + ran["tamper"]
        verdict = self._judge_ran(unit, shape, dtype, seed, ran, w, settings)
        if not verdict["ok"]:
            c["fresh"] = f"after timing, a fresh seed fails: {verdict['message']}"


def _stage(state: dict, stage: str) -> None:
    """Move to ``stage``, adding the time spent in the one before to ``state["seconds"]``."""
    now = time.monotonic()
    previous = state["stage"]
    state["seconds"][previous] = round(state["seconds"].get(previous, 0.0) + now - state["t"], 3)
    state["stage"], state["t"] = stage, now


def _job(unit) -> dict:
    return {"task": unit.task, "backend": unit.backend, "hw": unit.hw, "source": unit.source}
