"""Observations -> result rows: one row per (shape, dtype) of a unit, its verdict decided here and
only here (:func:`decide`), by the integrity rules (:mod:`mkbench.integrity`) over what the judge,
the trace and the timer reported (:mod:`.observation`). The worker never writes a verdict; nothing
rewrites one after this. Like pytest's CallInfo -> TestReport: what happened in, rows out, no I/O and
no process state in between."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from .. import integrity
from ..candidate import source_hash
from ..hardware import roofline_floor_us
from ..integrity import Policy, framework_evidence, hack_evidence
from ..task import DTYPES, baseline_variant
from ..trace import analyze
from ..verdicts import Verdict
from .observation import AbnormalEnd, Check, CheckStatus, ComboObservation, Observation
from .plan import Unit

TIMING_FIELDS = {"median_us": "time_median_us", "iqr_us": "time_iqr_us", "mean_us": "time_mean_us",
                 "stderr_us": "time_stderr_us", "min_us": "time_min_us", "n": "time_n", "timer": "timer"}
TIMING_EXTRA = ("l2_flush_bytes", "l2_persist_reset", "rse", "host_median_us", "launch_bound_median_us",
                "run_ahead_us", "run_ahead_dropped", "host_bound_samples", "median_rse",
                "host_cpu_share", "switches_voluntary", "switches_involuntary", "host_cores")


def _base(unit: Unit) -> dict[str, Any]:
    task = unit.task
    try:
        digest = source_hash(unit.source) if unit.source and not unit.missing and not unit.invalid else None
    except OSError:
        digest = None
    return {"task": task.name, "category": task.category, "backend": unit.backend.name, "method": unit.method,
            "is_baseline": int(unit.backend.is_baseline), "source_path": str(unit.source) if unit.source else None,
            "source_hash": digest}


def _skeleton(unit: Unit) -> tuple[dict[tuple[str, str], dict], list[dict]]:
    task, base = unit.task, _base(unit)
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for shape_name, dtype_name in unit.combos:
        shape = task.shape(shape_name)
        extra: dict[str, Any] = {"shape_params": dict(shape.params)}
        if unit.warnings:
            extra["static_warnings"] = list(unit.warnings)
        if unit.metadata:
            extra["import"] = unit.metadata
        math_peak = getattr(task, "math_peak", None)  # a task-like object of a plugin may not have one
        if math_peak:  # the roofline's FLOP rate (hardware.roofline_times_us)
            extra["math_peak"] = math_peak
        variant = baseline_variant(task, dtype_name, unit.backend.name) if unit.backend.is_baseline else None
        if variant:  # the speedup is against this baseline, not the reference at the task's dtype
            extra["baseline_variant"] = variant
            extra["baseline_variant_reason"] = task.baseline_compute_reason
        rows[(shape_name, dtype_name)] = dict(
            base, shape=shape_name, shape_role=shape.role, dtype=dtype_name, verdict=Verdict.NOT_RUN,
            compile_status="not_run", correct_status="not_run", perf_status="not_run", error=None,
            flops=float(task.flops(shape)), bytes=float(task.bytes(shape, DTYPES[dtype_name])), extra=extra)
    skipped = []
    for shape_name, dtype_name, reason in unit.skipped:
        shape = task.shape(shape_name)
        skipped.append(dict(base, shape=shape_name, shape_role=shape.role, dtype=dtype_name, verdict=Verdict.SKIPPED,
                            compile_status="skipped", correct_status="skipped", perf_status="skipped", error=reason,
                            extra={"shape_params": dict(shape.params)}))
    return rows, skipped


def skipped_rows(unit: Unit) -> list[dict[str, Any]]:
    return _skeleton(unit)[1]


@dataclass(frozen=True)
class Row:
    """One result row: a (shape, dtype) of a unit and its verdict. The store and the runner take it
    as :meth:`as_dict`; ``measures`` holds the columns a row has only once measured (flops, errors,
    times), absent otherwise."""

    task: str
    category: str
    backend: str
    method: str
    is_baseline: int
    source_path: str | None
    source_hash: str | None
    shape: str
    shape_role: str
    dtype: str
    verdict: Verdict
    compile_status: str
    correct_status: str
    perf_status: str
    error: str | None
    measures: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_draft(cls, draft: dict[str, Any]) -> Row:
        named = {f.name for f in fields(cls)} - {"measures"}
        return cls(**{k: v for k, v in draft.items() if k in named},
                   measures={k: v for k, v in draft.items() if k not in named})

    def as_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("measures", "extra")}
        return {**d, **self.measures, "extra": dict(self.extra)}


def rows_for(unit: Unit, obs: Observation | None, policy: Policy, timed: bool = True,
             time_roles: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The rows of a unit, as the store takes them."""
    return [r.as_dict() for r in decide(obs, policy, unit, timed, time_roles)]


def decide(obs: Observation | None, policy: Policy, unit: Unit, timed: bool = True,
           time_roles: tuple[str, ...] = ()) -> list[Row]:
    """A unit's rows from its observation: pure (no I/O, no process state), the one place verdicts
    are decided."""
    return [Row.from_draft(r) for r in _drafts(unit, obs, policy, timed, time_roles)]


def _drafts(unit: Unit, obs: Observation | None, policy: Policy, timed: bool,
            time_roles: tuple[str, ...]) -> list[dict[str, Any]]:
    rows, skipped = _skeleton(unit)

    def all_rows(**values):
        for r in rows.values():
            r.update(values)
        return list(rows.values()) + skipped

    if unit.missing:
        return all_rows(verdict=Verdict.MISSING, compile_status="missing", correct_status="missing",
                        perf_status="missing", error=unit.missing)
    if unit.invalid:
        return all_rows(verdict=Verdict.COMPILE_ERROR, compile_status="error", error=unit.invalid)
    if obs is None:  # every combination was skipped: nothing ran
        return all_rows()
    compiled = obs.compile
    if compiled is not None:
        for r in rows.values():
            if compiled.checks:
                r["extra"]["compile_checks"] = compiled.checks
        if not compiled.ok:
            return all_rows(verdict=Verdict.COMPILE_ERROR, compile_status="error", error=compiled.message)
        all_rows(compile_status="ok")
        hack = integrity.import_evidence(compiled.tamper) if not unit.backend.is_baseline else []
        if hack:  # the unit ended at its import: nothing ran or was timed (and compile only ran it too)
            verdict, error = integrity.decide(Verdict.NOT_RUN, "", hack, [])
            _clock(rows, obs)
            return all_rows(verdict=verdict, error=error)
        if unit.compile_only:
            return all_rows(verdict=Verdict.COMPILED, error=f"compile only: {unit.compile_only}")
    own = set(unit.own_names) if unit.own_names is not None else None
    _clock(rows, obs)
    jit_failure = next((c.check.message for c in obs.combos.values()
                        if c.check is not None and c.check.status == CheckStatus.COMPILE_ERROR), None)
    if jit_failure:  # a JIT compile error at the first call: the candidate does not build, whatever the shape
        return all_rows(verdict=Verdict.COMPILE_ERROR, compile_status="error", error=jit_failure)
    for key, r in rows.items():
        c = obs.combos.get(key)
        if c is not None and c.check is not None:
            _fill(unit, r, c, own, policy, timed and (not time_roles or r["shape_role"] in time_roles))
    if obs.abnormal is not None:
        _mark_abnormal(rows, obs.abnormal, obs.log_tail)
    for r in rows.values():
        if r["perf_status"] == "pending":  # never got to its timing
            r["perf_status"] = "not_run"
    return list(rows.values()) + skipped


def _clock(rows: dict, obs: Observation) -> None:
    """The unit's clock, in each of its rows (see :mod:`.clock`), and where it ran: its device and lane
    ("cuda:2/lane1"), so that one ``--gpus all`` store says which GPU timed each row."""
    for r in rows.values():
        r["extra"]["unit_seconds"] = dict(obs.seconds, steps=dict(obs.steps) if obs.steps is not None else None)
        if obs.lane:
            r["extra"]["lane"] = obs.lane
        if obs.memory:
            r["extra"]["unit_memory"] = dict(obs.memory)
        if obs.retried:
            r["extra"]["memory_retry"] = obs.retried  # ran out of memory beside other units: run again alone


def _answered(check: Check) -> Verdict:
    """What the answers themselves say. A backend violation rejected no output: the row's
    correctness is what the judge saw, and the violation is hack evidence for the integrity rules."""
    if check.status == CheckStatus.BACKEND_VIOLATION:
        return Verdict.CORRECT
    return Verdict(check.status.value)


def _fill(unit: Unit, r: dict, c: ComboObservation, own, policy: Policy, timed: bool) -> None:
    check = c.check
    status, message = _answered(check), check.message
    r.update(correct_status=status if status != Verdict.COMPILE_ERROR else "not_run",
             max_abs_err=check.max_abs_err,
             max_rel_err=check.max_rel_err)
    if status == Verdict.COMPILE_ERROR:
        r.update(verdict=Verdict.COMPILE_ERROR, compile_status="error", error=message)
        return
    timing = c.timing.stats
    if status == Verdict.CORRECT:
        r["perf_status"] = "pending" if timed else "not_timed"
        if c.timing.before:
            status, message = Verdict.INCORRECT, c.timing.before
            r.update(correct_status="incorrect", perf_status="not_run")
        elif c.timing.error:
            r.update(perf_status="error")
            status, message = Verdict.ERROR, c.timing.error
        if timing:
            r.update({col: timing[k] for k, col in TIMING_FIELDS.items()})
            r.update(interpreted=int(timing["interpreted"]), perf_status="interpreted" if timing["interpreted"]
                     else "timed")
            r["extra"].update({k: timing.get(k) for k in TIMING_EXTRA})
        if c.after.fresh and status == Verdict.CORRECT:
            status, message = Verdict.INCORRECT, c.after.fresh
            r["correct_status"] = "incorrect"
    for key, said in (("judge_note", c.judge_note), ("judge_warning", c.judge_warning),
                      ("unchecked", c.after.unchecked), ("constant_reference", c.constant_reference)):
        if said:  # what the verdict did not rest on: said with it
            r["extra"][key] = said
    if unit.backend.is_baseline:
        r.update(verdict=Verdict(status), error=message or None)
        return
    stream_timed = unit.backend.stream_timed
    findings = [analyze(_plain(c.trace), own, stream_timed), analyze(_plain(c.timing.trace), own, stream_timed)]
    # an answer that is one value whatever the inputs needs none of the work the task counts
    floor = roofline_floor_us(r, unit.hw) if unit.hw.device != "cpu" and not c.constant_reference else None
    hack = hack_evidence(c, findings, timing, floor)
    if unit.task.harness_in_call:  # the harness's own torch work shares the call: only "no kernel of its own" counts
        findings = [None if f is None else _without_share(f) for f in findings]
    framework, share = framework_evidence(unit.backend.name, c.launches, findings, policy)
    if status != Verdict.CORRECT:
        framework = []
    own_build = (r["extra"].get("compile_checks") or {}).get("candidate's own build")
    if framework and own_build:  # why its kernel never ran: it caught its own build error
        framework = [f"{framework[0]}; {own_build['message']}"] + framework[1:]
    verdict, error = integrity.decide(status, message, hack, framework)
    r.update(verdict=verdict, error=error or None)
    if verdict == Verdict.HACK and r["perf_status"] in ("timed", "interpreted", "pending"):
        r["perf_status"] = "hack"
    f = next((x for x in reversed(findings) if x is not None), None)
    r["extra"].update(own_launches=c.launches, framework_policy=policy.framework_ops,
                      framework_threshold=policy.framework_threshold)
    if f is not None:
        r["extra"].update(f.as_extra())
    r["extra"]["framework_share"] = share
    if c.decoy is not None:
        r["extra"]["decoy_check"] = c.decoy.as_dict()


def _plain(trace: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return dict(trace) if trace is not None else None


def _without_share(f):
    f.framework_share, f.framework, f.framework_kernels = None, 0.0, []
    return f


def _mark_abnormal(rows: dict, abnormal: AbnormalEnd, tail: str) -> None:
    """The step in flight gets the verdict; steps never reached say why they did not run."""
    kind = abnormal.kind
    verdict = {"timeout": Verdict.TIMEOUT, "crash": Verdict.CRASH}.get(kind, Verdict.ERROR)
    message = abnormal.message
    if kind == "crash" and tail:
        message += ": " + tail[-600:]
    stage = abnormal.stage
    if stage in (None, "start", "compile"):
        for r in rows.values():
            r.update(verdict=verdict, compile_status=str(verdict), error=message)
        return
    current = tuple(abnormal.combo) if abnormal.combo else None
    for key, r in rows.items():
        if key == current:
            r.update(verdict=verdict, error=message)
            if stage == "correctness":
                r["correct_status"] = str(verdict)
            else:
                r["perf_status"] = str(verdict)
        elif stage == "correctness" and r["correct_status"] == "not_run":
            r.update(error=f"not run: an earlier step ended in {verdict}")
        elif stage == "timing" and r["perf_status"] == "pending":
            r.update(perf_status="not_run", error=f"not timed: an earlier step ended in {verdict}")
