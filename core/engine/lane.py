"""One lane: a trusted judge process, and one candidate worker at a time, driven step by step.

The lane holds the evaluation plan; the worker only executes steps (:mod:`mkbench.worker`) and the
judge only judges (:mod:`mkbench.judge`). For a unit (one candidate or baseline on one task):

1. compile;
2. correctness: for every (shape, dtype) and seed, the worker runs the candidate on inputs generated
   from the seed (the first seed traced), the judge regenerates the inputs and judges the outputs;
3. the decoy check (backends that can suppress launches): the first seed once more with the
   candidate's own launches suppressed; a right answer then was not computed by them;
4. timing, with the device to itself (:class:`~.device.Device`): each timing input judged before the
   timed calls, the timed calls and a few traced ones, the same inputs judged again after them, and
   one fresh seed.

What is observed is returned as plain data (:func:`new_observation`); the orchestrator turns it into
rows (:mod:`.rows`). A worker that crashes, hangs past a step's limit or corrupts its device context
ends its own unit only; the lane kills it (and anything it started) and goes on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import judge as judge_mod
from .. import transfer
from .. import worker as worker_mod
from ..inputs import seed_for
from ..timing import TimingSettings
from .procs import Child, Died, Timeout, log_tail


@dataclass
class Limits:
    """Seconds allowed for one step: the whole compile, or one (shape, dtype) check or timing."""

    compile: float = 300.0
    correctness: float = 180.0
    timing: float = 180.0
    start: float = 120.0  # forking and setting up, before the first answer

    def for_stage(self, stage: str | None) -> float:
        return {"compile": self.compile, "correctness": self.correctness, "timing": self.timing}.get(stage or "", self.start)


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

    def close(self) -> None:
        if self._judge is not None:
            self._judge.stop(grace=2)
            self._judge = None

    # --- one unit ----------------------------------------------------------------------------
    def evaluate(self, unit, settings: EvalSettings, log_path: Path | None, env: dict[str, str]) -> dict[str, Any]:
        obs = new_observation()
        obs["lane"] = f"{self.device.name}/lane{self.index}"
        if self.closing:
            obs["abnormal"] = {"kind": "error", "stage": None, "combo": None, "message": "the run was stopped"}
            return obs
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
        w = self.current = Child(worker_mod.entry, (dict(self.env, **env), str(log_path) if log_path else None,
                                                    settings.worker_memory_mb), self.modules)
        state = {"stage": "start", "combo": None, "t": time.monotonic(), "seconds": obs["seconds"]}
        self.clock = obs["steps"] = {}  # seconds per kind of step, summed over the unit
        try:
            self._expect(w.request({"op": "setup", "job": _job(unit)}, settings.limits.start), "ready")
            _stage(state, "compile")
            self.state = f"compile {unit.task.name}"
            reply = self._expect(w.request({"op": "compile"}, settings.limits.compile), "compiled")
            obs["compile"] = {"ok": reply["ok"], "message": reply["message"], "checks": reply["checks"]}
            if not reply["ok"] or unit.compile_only:
                return obs
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
            obs["abnormal"] = {"kind": exc.kind, "stage": state["stage"], "combo": state["combo"], "message": exc.message}
        except Exception as exc:  # the worker broke the protocol (garbage on its pipe, a malformed answer)
            obs["abnormal"] = {"kind": "error", "stage": state["stage"], "combo": state["combo"],
                               "message": f"worker error: {type(exc).__name__}: {exc}"}
        finally:
            _stage(state, "done")
            w.stop(grace=2)
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
            status, message, errs = "correct", "", (0.0, 0.0)
            for k in range(settings.seeds):
                seed = seed_for(settings.run_seed, unit.task.name, shape, dtype, k)
                t = time.monotonic()
                with self.device.shared():
                    self.clock["wait_shared"] = round(self.clock.get("wait_shared", 0.0) + time.monotonic() - t, 3)
                    ran = self._run(w, {"op": "run", "shape": shape, "dtype": dtype, "seed": seed, "trace": k == 0},
                                    settings.limits.correctness)
                    if ran.get("kind") == "failed":
                        status, message = self._failed_status(ran, c)
                        break
                    if k == 0:
                        c.update(launches=ran.get("launches"), trace=ran.get("trace"))
                    if ran.get("tamper") and not c.get("tamper"):
                        c["tamper"] = f"seed {k}: {ran['tamper']}"
                    verdict = self._judge_ran(unit, shape, dtype, seed, ran, w, settings)
                if not verdict["ok"]:
                    status, message = "incorrect", f"seed {k}: {verdict['message']}"
                    errs = (verdict.get("max_abs_err"), verdict.get("max_rel_err"))
                    break
                errs = (max(errs[0] or 0.0, verdict.get("max_abs_err") or 0.0), max(errs[1] or 0.0, verdict.get("max_rel_err") or 0.0))
            c["correct"] = {"status": status, "message": message, "max_abs_err": errs[0], "max_rel_err": errs[1]}
            if status == "compile_error":
                break
            if status == "correct":
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
            return "correct", ""  # judged by the integrity rules as hack
        return ("compile_error" if ran.get("compile_error") else "error"), str(ran.get("message"))

    def _decoy(self, unit, shape: str, dtype: str, settings: EvalSettings, w: Child) -> dict:
        # A seed never evaluated before: a kernel that writes into a buffer it keeps across calls (honest)
        # still holds the previous input's answer there, which is wrong for these inputs.
        seed = seed_for(settings.run_seed, unit.task.name, shape, dtype, 2000)
        with self.device.shared():
            ran = self._run(w, {"op": "run", "shape": shape, "dtype": dtype, "seed": seed, "suppress": True},
                            settings.limits.correctness)
            if ran.get("kind") == "failed":
                if ran.get("poisoned"):
                    raise _Abnormal("poisoned", "device context corrupted (with its launches suppressed): " + str(ran.get("message")))
                return {"checked": True, "still_correct": False, "launches": None}
            verdict = self._judge_ran(unit, shape, dtype, seed, ran, w, settings)
        return {"checked": True, "still_correct": bool(verdict["ok"]), "launches": ran.get("launches")}

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
            return self._ask_judge({"op": "check", "task": unit.task.source, "shape": shape, "dtype": dtype, "seed": seed,
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
        """Only the timed calls hold the device exclusively; the judgements around them are
        correctness work and share it with the other lanes."""
        s = settings.timing
        for shape, dtype in passed:
            state["combo"] = [shape, dtype]
            self.state = f"time {unit.task.name} {shape}/{dtype}"
            c = obs["combos"][combo_key(shape, dtype)]
            pool = [seed_for(settings.run_seed, "timing", unit.task.name, shape, dtype, k) for k in range(s.pool_size)]
            trusted = unit.backend.is_baseline  # the task's own reference code: nothing to catch, just time it
            if not trusted:
                # Each timing input judged once before any timed call, on a fresh copy made from its
                # seed: an input answered wrongly here is an incorrect answer, not evidence of cheating.
                with self.device.shared():
                    for k, seed in enumerate(pool):
                        ran = self._run(w, {"op": "run", "shape": shape, "dtype": dtype, "seed": seed}, settings.limits.timing)
                        if ran.get("kind") == "failed":
                            c["timing_error"] = self._failed_status(ran, c)[1]
                            break
                        verdict = self._judge_ran(unit, shape, dtype, seed, ran, w, settings)
                        if not verdict["ok"]:
                            c["before"] = f"on a timing input, before timing: timing input {k}: {verdict['message']}"
                            break
                if c.get("before") or c.get("timing_error"):
                    continue
            waited = time.monotonic()
            with self.device.exclusive():
                self.clock["wait_exclusive"] = round(self.clock.get("wait_exclusive", 0.0) + time.monotonic() - waited, 3)
                t = time.monotonic()
                timed = w.request({"op": "time", "shape": shape, "dtype": dtype, "seeds": pool, "settings": s,
                                   "answers": not trusted}, settings.limits.timing)
                self.clock["time_step"] = round(self.clock.get("time_step", 0.0) + time.monotonic() - t, 3)
            if timed.get("kind") == "failed":
                c["timing_error"] = self._failed_status(timed, c)[1]
                continue
            if timed.get("kind") != "timed":
                raise _Abnormal("error", "worker error: unexpected answer to a timing step")
            c.update(timing=timed["timing"], timing_tamper=timed.get("tamper"))
            if trusted:
                continue
            with self.device.shared():
                if settings.trace_calls:
                    t = time.monotonic()
                    traced = w.request({"op": "trace", "shape": shape, "dtype": dtype, "seeds": pool,
                                        "calls": settings.trace_calls}, settings.limits.timing)
                    self.clock["trace_step"] = round(self.clock.get("trace_step", 0.0) + time.monotonic() - t, 3)
                    if traced.get("kind") == "traced":
                        c["timing_trace"] = traced.get("trace")
                        c["timing_tamper"] = c.get("timing_tamper") or traced.get("tamper")
                    elif traced.get("kind") == "failed":
                        c["timing_error"] = self._failed_status(traced, c)[1]
                        continue
                for k, (seed, answer) in enumerate(zip(pool, timed["answers"])):
                    verdict = self._judge_ran(unit, shape, dtype, seed, answer, w, settings)
                    if not verdict["ok"]:
                        c["stale"] = (f"timing input {k} was answered correctly before the timed calls and wrongly "
                                      f"after them (cached or stale results?): {verdict['message']}")
                        break
                # Inputs never seen before, after the timed calls. Wrong here is wrong, but nothing
                # shows it was right before: incorrect, not hack.
                seed = seed_for(settings.run_seed, unit.task.name, shape, dtype, 1000)
                ran = self._run(w, {"op": "run", "shape": shape, "dtype": dtype, "seed": seed}, settings.limits.timing)
                if ran.get("kind") == "failed":
                    c["fresh"] = "after timing, a fresh seed fails: " + self._failed_status(ran, c)[1]
                else:
                    if ran.get("tamper") and not c.get("tamper"):
                        c["tamper"] = "after timing: " + ran["tamper"]
                    verdict = self._judge_ran(unit, shape, dtype, seed, ran, w, settings)
                    if not verdict["ok"]:
                        c["fresh"] = f"after timing, a fresh seed fails: {verdict['message']}"
        state["combo"] = None


def _stage(state: dict, stage: str) -> None:
    """Move to ``stage``, adding the time spent in the one before to ``state["seconds"]``."""
    now = time.monotonic()
    previous = state["stage"]
    state["seconds"][previous] = round(state["seconds"].get(previous, 0.0) + now - state["t"], 3)
    state["stage"], state["t"] = stage, now


def _job(unit) -> dict:
    return {"task": unit.task, "backend": unit.backend, "hw": unit.hw, "source": unit.source}
