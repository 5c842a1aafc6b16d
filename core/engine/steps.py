"""The step protocol of one unit, as plain functions over its :class:`UnitRun` (the worker session,
the judge client, the device's locks and the observation being recorded). The worker only executes
steps (:mod:`mkbench.worker`) and the judge only judges (:mod:`mkbench.judge`); what is asked, in
which order and under which lock is decided here. After the compile:

1. correctness (:func:`correctness`): for every (shape, dtype) and seed, the worker runs the
   candidate on inputs generated from the seed (the first seed traced), the judge regenerates the
   inputs and judges the outputs;
2. the decoy check (:func:`decoy`, backends that can suppress launches): the first seed once more
   with the candidate's own launches suppressed; a right answer then was not computed by them;
3. timing (:func:`timing`), with the device to itself (:class:`~.device.Device`), once per unit for
   all its combinations: each timing input judged before (shared), then, alone, the timed calls and
   a few traced ones (:func:`trace_alone`), then, shared again, the same inputs judged after them and
   one fresh seed (:func:`after_timing`).

What is seen is recorded, never decided: verdicts come from :func:`.rows.decide`.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from .. import transfer
from ..inputs import seed_for
from ..judge import JUDGE_PARTS
from .judge_client import JudgeClient
from .observation import Check, CheckStatus, Combo, Decoy, Recorder
from .session import Abnormal, WorkerSession
from .settings import EvalSettings


@dataclass
class UnitRun:
    """One unit in flight: what the steps work with."""

    unit: Any  # plan.Unit
    settings: EvalSettings
    device: Any  # device.Device: its shared() and exclusive() locks
    worker: WorkerSession
    judge: JudgeClient
    record: Recorder
    say: Callable[[str], None] = lambda state: None  # the lane's state line
    # the unit gives its lane up around its timing hold (see device.Lease); its judge may change
    away: Callable[[], AbstractContextManager] = nullcontext
    # called before each combination's checks: a staged memory hold grows to the unit's whole share
    # before the first combination that needs it (lane._grow); its judge may change there too
    room_for: Callable[[tuple[str, str]], None] = lambda combo: None


@contextmanager
def shared(run: UnitRun) -> Iterator[None]:
    """The device shared with the other lanes' checks. The wait for it is the unit's ``wait_shared``
    step, not counted against its unit limit (:meth:`.session.WorkerSession.waited_for`)."""
    with device_shared(run.device, run.worker):
        yield


@contextmanager
def device_shared(device, worker) -> Iterator[None]:
    """:func:`shared` for a worker before its unit's run exists (its start)."""
    t = time.monotonic()
    with device.shared():
        worker.waited_for("wait_shared", time.monotonic() - t)
        yield


@contextmanager
def exclusive(run: UnitRun) -> Iterator[None]:
    """The device to this unit alone, for its timed calls; the wait is ``wait_exclusive``, likewise."""
    t = time.monotonic()
    with run.device.exclusive():
        run.worker.waited_for("wait_exclusive", time.monotonic() - t)
        yield


# --- correctness -------------------------------------------------------------------------------
def correctness(run: UnitRun) -> list[Combo]:
    """Check every combination; the ones that go on to timing."""
    unit, settings, w, rec = run.unit, run.settings, run.worker, run.record
    passed = []
    for shape, dtype in unit.combos:
        run.room_for((shape, dtype))
        w.combo = (shape, dtype)
        run.say(f"check {unit.task.name} {shape}/{dtype}")
        rec.note(shape, dtype)
        status, message, errs = CheckStatus.CORRECT, "", (0.0, 0.0)
        constants = []  # the reference's one value per seed, where its answer was all one value
        for k in range(settings.seeds):
            seed = seed_for(settings.run_seed, unit.task.name, shape, dtype, k)
            with shared(run):
                # the device trace is evidence about a candidate: a baseline is the task's own code
                trace = k == 0 and not unit.backend.is_baseline
                cmd = {"op": "run", "shape": shape, "dtype": dtype, "seed": seed, "trace": trace}
                if trace and settings.trace_call == "warm" and not unit.task.stateful_reference:
                    # one untraced call first, on another seed's inputs (a candidate that keeps its last
                    # answer cannot hand it back to the traced call); a stateful reference would be one
                    # call behind the candidate's state
                    cmd["warm_seed"] = seed_for(settings.run_seed, "warm", unit.task.name, shape, dtype)
                ran = w.run(cmd, settings.limits.correctness,
                            step_out=run.device.stepped_out if settings.build_hold == "release" else None)
                if ran.get("kind") == "failed":
                    status, message = failed_status(run, shape, dtype, ran)
                    break
                if k == 0:
                    trace = ran.get("trace")
                    if isinstance(trace, dict):
                        trace = dict(trace, alone=False)  # taken under sharing, whatever the worker says
                    rec.note(shape, dtype, launches=ran.get("launches"), trace=trace)
                if ran.get("tamper") and not rec.combo(shape, dtype).tamper:
                    rec.note(shape, dtype, tamper=f"seed {k}: {ran['tamper']}")
                verdict = judge_ran(run, shape, dtype, seed, ran, constant=True)
            if verdict.get("note"):
                rec.note(shape, dtype, judge_note=verdict["note"])
            if verdict.get("warning"):
                rec.note(shape, dtype, judge_warning=verdict["warning"])
            constants.append(verdict.get("constant") or "")
            if not verdict["ok"]:
                status, message = CheckStatus.INCORRECT, f"seed {k}: {verdict['message']}"
                errs = (verdict.get("max_abs_err"), verdict.get("max_rel_err"))
                break
            errs = (max(errs[0] or 0.0, verdict.get("max_abs_err") or 0.0),
                    max(errs[1] or 0.0, verdict.get("max_rel_err") or 0.0))
        rec.note(shape, dtype, check=Check(status, message, errs[0], errs[1]))
        if len(constants) >= 2 and constants[0] and len(set(constants)) == 1:
            rec.note(shape, dtype, constant_reference=f"the reference's answer is {constants[0]} in every element, "
                                                      f"for each of {len(constants)} seeds' inputs")
        if status == CheckStatus.COMPILE_ERROR:
            break
        if status.goes_on:
            if (not unit.backend.is_baseline and unit.backend.can_suppress_launches
                    and rec.combo(shape, dtype).launches):
                if unit.task.stateful_reference:
                    # A call with the candidate's launches suppressed leaves its state behind the
                    # judge's copy: every later answer would be judged against another state.
                    rec.note_after(shape, dtype, unchecked=f"no decoy run: {STATEFUL}")
                else:
                    rec.note(shape, dtype, decoy=decoy(run, shape, dtype))
            passed.append((shape, dtype))
    w.combo = None
    return passed


def failed_status(run: UnitRun, shape: str, dtype: str, ran: dict) -> tuple[CheckStatus, str]:
    """What a ``failed`` answer means; a backend's runtime check is recorded as evidence."""
    if ran.get("poisoned"):
        raise Abnormal("poisoned", "device context corrupted: " + str(ran.get("message")))
    if ran.get("hack"):
        run.record.note(shape, dtype, backend_violation=ran["hack"])
        return CheckStatus.BACKEND_VIOLATION, ""  # judged by the integrity rules as hack
    return (CheckStatus.COMPILE_ERROR if ran.get("compile_error") else CheckStatus.ERROR), str(ran.get("message"))


def decoy(run: UnitRun, shape: str, dtype: str) -> Decoy:
    # A seed never evaluated before: a kernel that writes into a buffer it keeps across calls (honest)
    # still holds the previous input's answer there, which is wrong for these inputs.
    settings = run.settings
    seed = seed_for(settings.run_seed, run.unit.task.name, shape, dtype, 2000)
    with shared(run):
        ran = run.worker.run({"op": "run", "shape": shape, "dtype": dtype, "seed": seed, "suppress": True},
                             settings.limits.correctness)
        if ran.get("kind") == "failed":
            if ran.get("poisoned"):
                raise Abnormal("poisoned", "device context corrupted (with its launches suppressed): "
                               + str(ran.get("message")))
            return Decoy(still_correct=False, launches=None)
        verdict = judge_ran(run, shape, dtype, seed, ran)
    return Decoy(still_correct=bool(verdict["ok"]), launches=ran.get("launches"))


STATEFUL = "the reference keeps state across calls"


def unit_tag(run: UnitRun) -> str:
    """Names the unit to the judge, which starts a stateful reference anew for each unit."""
    return f"{'/'.join(run.unit.key)}@{id(run.unit):x}"


def judge_ran(run: UnitRun, shape: str, dtype: str, seed: int, ran: dict, digest: bool = False,
              constant: bool = False) -> dict:
    """The judge's verdict on one exported answer (and the shared memory it used, released);
    ``digest``: with a digest of the outputs (the same answer again shows as the same digest);
    ``constant``: with the reference's one value, where its answer is one value (the correctness seeds)."""
    made = transfer.shm_names(ran.get("outputs", []) + ran.get("inputs_after", []))
    try:
        if ran.get("structure"):
            return {"ok": False, "message": ran["structure"], "max_abs_err": None, "max_rel_err": None}
        run.judge.process()  # started (or replaced) before its clock runs
        with run.worker.timed("judge"):
            verdict = run.judge.ask({"op": "check", "task": run.unit.task.source, "shape": shape, "dtype": dtype,
                                     "seed": seed, "outputs": ran["outputs"], "inputs_after": ran["inputs_after"],
                                     "unit": unit_tag(run), "digest": digest, "constant": constant},
                                    run.worker, run.settings.limits.correctness)
        judge_parts(run.worker, verdict.get("seconds"))
        return verdict
    finally:
        transfer.unlink(made)


def judge_parts(worker, seconds: Any) -> None:
    """A check's seconds by part (``judge_inputs``, ``judge_reference`` ...: :data:`mkbench.judge.JUDGE_PARTS`)
    on the unit's clock, inside ``judge``: what a part holds, not more time. The judge is trusted; a
    malformed entry is still dropped, never a unit's failure."""
    if not isinstance(seconds, dict):
        return
    for part, s in seconds.items():
        if part in JUDGE_PARTS and isinstance(s, (int, float)) and not isinstance(s, bool) and 0 <= s < 1e6:
            worker.add(f"judge_{part}", float(s))


# --- timing ------------------------------------------------------------------------------------
def timing(run: UnitRun, passed: list[Combo]) -> None:
    """The timed calls of every combination in one exclusive hold of the device: each hold makes
    the other lanes finish their steps and wait, so one per unit, not one per combination. The
    judgements before and after are correctness work and share the device with the other lanes."""
    unit, settings, w, rec = run.unit, run.settings, run.worker, run.record
    s = settings.timing
    trusted = unit.backend.is_baseline  # the task's own reference code: nothing to catch, just time it
    stateful = bool(unit.task.stateful_reference)
    before: dict[Combo, list[str]] = {}  # a stateful task's answers to the pool before timing, as digests
    timed_combos = []
    for shape, dtype in passed:
        w.combo = (shape, dtype)
        run.say(f"time {unit.task.name} {shape}/{dtype}")
        pool = [seed_for(settings.run_seed, "timing", unit.task.name, shape, dtype, k) for k in range(s.pool_size)]
        if not trusted:
            # Each timing input judged once before any timed call, on a fresh copy made from its
            # seed: an input answered wrongly here is an incorrect answer, not evidence of cheating.
            with shared(run):
                for k, seed in enumerate(pool):
                    ran = w.run({"op": "run", "shape": shape, "dtype": dtype, "seed": seed}, settings.limits.timing)
                    if ran.get("kind") == "failed":
                        rec.note_timing(shape, dtype, error=failed_status(run, shape, dtype, ran)[1] or None)
                        break
                    verdict = judge_ran(run, shape, dtype, seed, ran, digest=stateful)
                    if not verdict["ok"]:
                        rec.note_timing(shape, dtype, before="on a timing input, before timing: "
                                                             f"timing input {k}: {verdict['message']}")
                        break
                    if verdict.get("digest"):
                        before.setdefault((shape, dtype), []).append(verdict["digest"])
            t = rec.combo(shape, dtype).timing
            if t.before or t.error:
                continue
        timed_combos.append((shape, dtype, {"shape": shape, "dtype": dtype, "seeds": pool}))
    if not timed_combos:
        return
    # The first combination's inputs made before the hold, still sharing the device (the worker keeps
    # one pool at a time, so the others are made in the hold, as before)
    with shared(run):
        made = w.step(dict(timed_combos[0][2], op="pool"), settings.limits.timing, "time_inputs")
    if made.get("kind") == "failed":
        shape, dtype, _ = timed_combos[0]
        rec.note_timing(shape, dtype, error=failed_status(run, shape, dtype, made)[1] or None)
        timed_combos = timed_combos[1:]
        if not timed_combos:
            return
    with run.away(), exclusive(run):
        for shape, dtype, step in timed_combos:
            w.combo = (shape, dtype)
            run.say(f"time {unit.task.name} {shape}/{dtype}")
            # the worker makes the pool's inputs first (milliseconds), then times the calls
            timed = w.step(dict(step, op="time", settings=s), settings.limits.timing, "time_step")
            if timed.get("kind") == "failed":
                rec.note_timing(shape, dtype, error=failed_status(run, shape, dtype, timed)[1] or None)
                continue
            if timed.get("kind") != "timed":
                raise Abnormal("error", "worker error: unexpected answer to a timing step")
            rec.note_timing(shape, dtype, stats=timed["timing"], tamper=timed.get("tamper"))
            if not trusted and settings.trace_calls:
                trace_alone(run, shape, dtype, step)
    if trusted:
        return
    for shape, dtype, step in timed_combos:
        t = rec.combo(shape, dtype).timing
        if t.stats is not None and not t.error:  # timed, and traced without failing
            w.combo = (shape, dtype)
            run.say(f"check after timing {unit.task.name} {shape}/{dtype}")
            with shared(run):
                after_timing(run, shape, dtype, step, before.get((shape, dtype), []))
    w.combo = None


def replayed(run: UnitRun, shape: str, dtype: str, pool: list[int], before: list[str], answers: list[dict]) -> None:
    """A stateful task's candidate that answers every timing input after the timed calls bit for
    bit as it did before them, thousands of calls of state later, replays stored answers, where
    the reference's answer to the same input changes from one call to the next (asked of the
    judge, from the initial state). Both halves are evidence; either missing proves nothing."""
    if not before or len(before) != len(pool) or len(answers) != len(pool):
        return
    got = run.judge.ask({"op": "digest", "outputs": [a.get("outputs", []) for a in answers]}, run.worker,
                        run.settings.limits.correctness, answer="digested")
    if got.get("digests") != before:
        return
    moved = run.judge.ask({"op": "repeats", "task": run.unit.task.source, "shape": shape, "dtype": dtype,
                           "seed": pool[0]}, run.worker, run.settings.limits.correctness, answer="repeated")
    if moved.get("changes"):
        run.record.note_after(shape, dtype, replayed=(
            f"all {len(pool)} timing inputs were answered after the timed calls bit for bit as before them, "
            f"although the reference's answer to timing input 0 changes from one call to the next "
            f"(by up to {moved.get('max_abs_diff', 0.0):.3g}: {run.unit.task.stateful_reference}): "
            "stored answers replayed, not computed"))


def trace_alone(run: UnitRun, shape: str, dtype: str, step: dict) -> None:
    """A few calls traced as the timer made them, right after it, still holding the device alone:
    the trace's kernel durations are then comparable with the timer's (under sharing the same
    kernels ran 4 to 4.5 times longer on an H200, which made honest kernels look like hacks)."""
    rec = run.record
    traced = run.worker.step(dict(step, op="trace", calls=run.settings.trace_calls), run.settings.limits.timing,
                             "trace_step")
    if traced.get("kind") == "traced":
        trace = traced.get("trace")
        if isinstance(trace, dict):
            trace = dict(trace, alone=True)  # said by the orchestrator, which held the lock, whatever the worker sent
        rec.note_timing(shape, dtype, trace=trace,
                        tamper=rec.combo(shape, dtype).timing.tamper or traced.get("tamper"))
    elif traced.get("kind") == "failed":
        rec.note_timing(shape, dtype, error=failed_status(run, shape, dtype, traced)[1] or None)


def after_timing(run: UnitRun, shape: str, dtype: str, step: dict, before: list[str] = ()) -> None:
    """The pool's inputs answered again (stale or cached answers), and one fresh seed. A stateful
    task's answers then are not judged; they are compared with ``before`` (see :func:`replayed`)."""
    unit, settings, w, rec = run.unit, run.settings, run.worker, run.record
    pool = step["seeds"]
    answered = w.step(dict(step, op="answers"), settings.limits.timing, "time_answers")
    if answered.get("kind") == "failed":
        rec.note_timing(shape, dtype, error=failed_status(run, shape, dtype, answered)[1] or None)
        return
    if answered.get("kind") != "answers":
        raise Abnormal("error", "worker error: unexpected answer to an answers step")
    rec.note_timing(shape, dtype, tamper=rec.combo(shape, dtype).timing.tamper or answered.get("tamper"))
    stateful = unit.task.stateful_reference
    if stateful:
        # The reference's own answers change from call to call: after the timed calls the
        # candidate has made many more calls than the judge's copy, so answers then prove nothing.
        said = f"answers after the timed calls not judged: {STATEFUL} ({stateful})"
        earlier = rec.combo(shape, dtype).after.unchecked  # the decoy run's, where it was skipped
        rec.note_after(shape, dtype, unchecked=f"{earlier}; {said}" if earlier else said)
    try:
        if stateful:
            replayed(run, shape, dtype, pool, before, answered["answers"])
            return
        for k, (seed, answer) in enumerate(zip(pool, answered["answers"])):
            verdict = judge_ran(run, shape, dtype, seed, answer)
            if not verdict["ok"]:
                rec.note_after(shape, dtype, stale=f"timing input {k} was answered correctly before the timed calls "
                                                   f"and wrongly after them (cached or stale results?): "
                                                   f"{verdict['message']}")
                break
    finally:  # the answers not judged (after a wrong one) let go of their shared memory too
        transfer.unlink(transfer.shm_names([d for a in answered["answers"]
                                            for d in a.get("outputs", []) + a.get("inputs_after", [])]))
    # Inputs never seen before, after the timed calls. Wrong here is wrong, but nothing
    # shows it was right before: incorrect, not hack.
    seed = seed_for(settings.run_seed, unit.task.name, shape, dtype, 1000)
    ran = w.run({"op": "run", "shape": shape, "dtype": dtype, "seed": seed}, settings.limits.timing)
    if ran.get("kind") == "failed":
        rec.note_after(shape, dtype, fresh="after timing, a fresh seed fails: "
                                           + failed_status(run, shape, dtype, ran)[1])
        return
    if ran.get("tamper") and not rec.combo(shape, dtype).tamper:
        rec.note(shape, dtype, tamper="after timing: " + ran["tamper"])
    verdict = judge_ran(run, shape, dtype, seed, ran)
    if not verdict["ok"]:
        rec.note_after(shape, dtype, fresh=f"after timing, a fresh seed fails: {verdict['message']}")
