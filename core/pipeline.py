"""A run: for every task, the baselines and then the candidate, each unit in its own worker,
each unit's rows committed to the store as soon as it ends."""

from __future__ import annotations

import hashlib
import json
import secrets
import signal
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from .backend import Backend
from .candidate import source_hash
from .errors import BadInput
from .hardware import HardwareProfile, resolve_profile, roofline_floor_us
from .isolation import Limits, StartedWorker, WorkerOutcome, run_worker
from .registry import Registry
from .store import Store
from .task import DTYPES, Task
from .timing import TimingSettings
from . import environment

BASELINE_FOR_SPEEDUP = {"eager": "speedup_eager", "torch_compile": "speedup_compile"}


@dataclass
class RunOptions:
    backend: str = "triton"
    hw: str = "auto"
    solutions: Path | None = None
    method: str | None = None
    tasks: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    shape_roles: list[str] = field(default_factory=list)  # empty: every role
    seeds: int = 2
    seed: int | None = None
    baselines: list[str] | None = None  # None: the hardware profile's default
    timing: TimingSettings = field(default_factory=TimingSettings)
    limits: Limits = field(default_factory=Limits)
    resume: bool = False
    timed: bool = True  # False: correctness only, nothing timed (rows say 'not_timed')
    prestart: bool = True  # spawn the next unit's worker while the current one runs
    log_dir: Path | None = None

    @property
    def method_name(self) -> str:
        return self.method or ("reference" if self.solutions is None else self.solutions.name)

    def config(self, hw: str) -> dict[str, Any]:
        return {"backend": self.backend, "hw": hw, "method": self.method_name,
                "solutions": str(self.solutions.resolve()) if self.solutions else None,
                "tasks": sorted(self.tasks), "categories": sorted(self.categories), "seeds": self.seeds,
                "shape_roles": sorted(self.shape_roles),
                "baselines": self.baselines, "timing": asdict(self.timing) if self.timed else None}


@dataclass
class Unit:
    task: Task
    backend: Backend
    method: str
    source: Path | None
    combos: list[tuple[str, str]]
    skipped: list[tuple[str, str, str]]  # (shape, dtype, reason)
    missing: str | None = None  # why there is no candidate to evaluate
    invalid: str | None = None  # static problem with the candidate file
    findings: list = field(default_factory=list)  # static integrity findings (mkbench.static_checks)
    compile_only: str | None = None  # why this unit is only compiled here (Backend.compile_only)


def probe_device(limits: Limits, job: dict | None = None) -> dict[str, Any]:
    out = run_worker(job or {"kind": "probe"}, {}, limits)
    for msg in out.messages:
        if msg.get("kind") == "probe":
            return msg["info"]
    why = "timeout" if out.timed_out else (out.exit_desc or "no answer")
    raise BadInput(f"device {(job or {}).get('kind', 'probe')} failed ({why}): {out.log_tail[-300:]}")


OVERHEAD_FACTOR = 1.3  # BackendBench's threshold: a baseline this close to an empty launch measures launches


def _rows_for(unit: Unit, outcome: WorkerOutcome | None, hw: HardwareProfile | None = None) -> list[dict[str, Any]]:
    """Turn what a worker reported (or failed to report) into one row per (shape, dtype)."""
    task = unit.task
    base = {"task": task.name, "category": task.category, "backend": unit.backend.name, "method": unit.method,
            "is_baseline": int(unit.backend.is_baseline), "source_path": str(unit.source) if unit.source else None,
            "source_hash": source_hash(unit.source) if unit.source and unit.source.exists() else None}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for shape_name, dtype_name in unit.combos:
        shape = task.shape(shape_name)
        rows[(shape_name, dtype_name)] = dict(
            base, shape=shape_name, shape_role=shape.role, dtype=dtype_name,
            verdict="not_run", compile_status="not_run", correct_status="not_run", perf_status="not_run",
            error=None, flops=float(task.flops(shape)), bytes=float(task.bytes(shape, DTYPES[dtype_name])),
            extra={"shape_params": dict(shape.params)})
    skipped = []
    for shape_name, dtype_name, reason in unit.skipped:
        shape = task.shape(shape_name)
        skipped.append(dict(base, shape=shape_name, shape_role=shape.role, dtype=dtype_name, verdict="skipped",
                            compile_status="skipped", correct_status="skipped", perf_status="skipped", error=reason,
                            extra={"shape_params": dict(shape.params)}))

    def all_rows(**values):
        for r in rows.values():
            r.update(values)
        return list(rows.values()) + skipped

    if unit.missing:
        return all_rows(verdict="missing", compile_status="missing", correct_status="missing", perf_status="missing", error=unit.missing)
    if unit.invalid:
        return all_rows(verdict="compile_error", compile_status="error", correct_status="not_run", perf_status="not_run", error=unit.invalid)
    if outcome is None:  # every combination was skipped: nothing ran
        return all_rows()
    for msg in outcome.messages:
        kind = msg["kind"]
        if kind == "compile_checks":
            for r in rows.values():
                r["extra"]["compile_checks"] = msg["checks"]
        elif kind == "compile":
            if not msg["ok"]:
                return all_rows(verdict="compile_error", compile_status="error", error=msg["message"])
            all_rows(compile_status="ok")
            if unit.compile_only:
                return all_rows(verdict="compiled", error=f"compile only: {unit.compile_only}")
        elif kind == "check":
            r = rows[tuple(msg["combo"])]
            status = msg["status"]
            if status == "compile_error":
                all_rows(verdict="compile_error", compile_status="error", error=msg["message"])
                continue
            r.update(correct_status=status, verdict=status, error=msg["message"] or None,
                     max_abs_err=msg.get("max_abs_err"), max_rel_err=msg.get("max_rel_err"))
            if status == "correct":
                r["perf_status"] = "pending"
        elif kind == "timed":
            r = rows[tuple(msg["combo"])]
            if "error" in msg and msg.get("hack"):  # the backend caught a runtime cheat while timing
                r.update(perf_status="hack", verdict="hack", error=msg["hack"])
            elif "error" in msg:
                r.update(perf_status="error", verdict="error", error=msg["error"])
            elif "timing" not in msg:  # wrong on a timing input before any timed call
                r.update(perf_status="not_run", verdict="incorrect", correct_status="incorrect", error=msg["incorrect"])
            else:
                t = msg["timing"]
                r.update(perf_status="interpreted" if t["interpreted"] else "timed",
                         time_median_us=t["median_us"], time_iqr_us=t["iqr_us"], time_mean_us=t["mean_us"],
                         time_stderr_us=t["stderr_us"], time_min_us=t["min_us"], time_n=t["n"], timer=t["timer"],
                         interpreted=int(t["interpreted"]))
                r["extra"].update(l2_flush_bytes=t.get("l2_flush_bytes"), l2_persist_reset=t.get("l2_persist_reset"), rse=t.get("rse"),
                                  host_median_us=t.get("host_median_us"), launch_bound_median_us=t.get("launch_bound_median_us"),
                                  run_ahead_us=t.get("run_ahead_us"), run_ahead_dropped=t.get("run_ahead_dropped"),
                                  host_bound_samples=t.get("host_bound_samples"))
                if msg.get("hack"):
                    r.update(verdict="hack", perf_status="hack", error=msg["hack"])
                elif msg.get("incorrect"):  # timed, then wrong on fresh inputs: the time stays on record
                    r.update(verdict="incorrect", correct_status="incorrect", error=msg["incorrect"])
        elif kind == "fatal":
            _mark_abnormal(rows, outcome, "error", "worker error: " + msg["message"])
    if outcome.timed_out:
        _mark_abnormal(rows, outcome, "timeout", f"no progress within the {outcome.stage or 'start-up'} time limit")
    elif outcome.crashed:
        tail = outcome.log_tail[-600:]
        _mark_abnormal(rows, outcome, "crash", f"worker died ({outcome.exit_desc})" + (f": {tail}" if tail else ""))
    elif any(m["kind"] == "poisoned" for m in outcome.messages):
        _mark_abnormal(rows, outcome, "error", "device context corrupted by an earlier step")
    for r in rows.values():
        if r["perf_status"] == "pending":  # the worker never got to time it
            r["perf_status"] = "not_run"
    _apply_integrity(unit, rows.values(), hw)
    return list(rows.values()) + skipped


ROOFLINE_SLACK = 0.9  # a time under 90% of the datasheet floor is physically impossible
def _apply_integrity(unit: Unit, rows, hw: HardwareProfile | None) -> None:
    """Static findings and impossible speed turn a verdict into `hack`: never counted as correct."""
    for r in rows:
        if unit.findings:
            r["extra"]["static_findings"] = [str(f) for f in unit.findings]
            if r["verdict"] in ("correct", "incorrect", "hack"):
                more = f" (+{len(unit.findings) - 1} more)" if len(unit.findings) > 1 else ""
                also = f"; also: {r['error']}" if r["verdict"] == "hack" else ""
                r.update(verdict="hack", error=f"static check: {unit.findings[0]}{more}{also}")
        # CPU profiles carry nominal rates (README of each profile): no floor to compare against.
        if hw is not None and hw.device != "cpu" and r.get("time_median_us") and not r.get("interpreted") and r["verdict"] == "correct":
            floor = roofline_floor_us(r, hw)
            if floor and r["time_median_us"] < ROOFLINE_SLACK * floor:
                r.update(verdict="hack", perf_status="hack",
                         error=f"{r['time_median_us']:.1f} us is under the roofline floor of {floor:.1f} us for this work on {hw.name}")


def _mark_abnormal(rows: dict, outcome: WorkerOutcome, verdict: str, message: str) -> None:
    """The step in flight gets the verdict; steps never reached say why they did not run."""
    stage = outcome.stage
    if stage in (None, "compile"):
        for r in rows.values():
            r.update(verdict=verdict, compile_status=verdict, error=message)
        return
    current = tuple(outcome.combo) if outcome.combo else None
    for key, r in rows.items():
        if key == current:
            r.update(verdict=verdict, error=message)
            if stage == "correctness":
                r["correct_status"] = verdict
            else:
                r["perf_status"] = verdict
        elif stage == "correctness" and r["correct_status"] == "not_run":
            r.update(error=f"not run: an earlier step ended in {verdict}")
        elif stage == "timing" and r["perf_status"] == "pending":
            r.update(perf_status="not_run", error=f"not timed: an earlier step ended in {verdict}")


class Runner:
    def __init__(self, registry: Registry, store: Store, options: RunOptions,
                 progress: Callable[[str, int, int], None] | None = None,
                 log: Callable[[str], None] = print):
        self.reg, self.store, self.opt = registry, store, options
        self.progress = progress or (lambda desc, done, total: None)
        self.log = log

    # --- planning --------------------------------------------------------------------
    def plan(self, hw: HardwareProfile) -> list[Unit]:
        backend = self.reg.backend(self.opt.backend)
        if backend.is_baseline:
            raise BadInput(f"{backend.name} is a baseline; pick a kernel backend (see `mkbench list backends`)")
        backend.availability(hw)  # the backend, not the profile, decides: plugins add backends profiles never heard of
        compile_only = backend.compile_only(hw)
        tasks = self.reg.select_tasks(self.opt.tasks, self.opt.categories)
        if self.opt.solutions is not None:
            self._check_solutions_dir(backend)
        baseline_names = self.opt.baselines if self.opt.baselines is not None else list(hw.baselines)
        baselines = [self.reg.backend(n) for n in baseline_names]
        for b in baselines:
            if not b.is_baseline:
                raise BadInput(f"{b.name} is not a baseline")
        units = []
        for task in tasks:
            combos, skipped = [], []
            for shape in task.shapes:
                for dtype in task.dtypes:
                    why_not = backend.unsupported(task, dtype)
                    if why_not:
                        skipped.append((shape.name, dtype, f"backend {backend.name}: {why_not}"))
                    elif self.opt.shape_roles and shape.role not in self.opt.shape_roles:
                        skipped.append((shape.name, dtype, f"not selected (--shape-role {','.join(self.opt.shape_roles)})"))
                    elif task.name in hw.skip_tasks:
                        skipped.append((shape.name, dtype, f"hardware profile {hw.name} skips task {task.name}"))
                    elif shape.role in hw.skip_shape_roles and not compile_only:  # skipped for run time; building costs none
                        skipped.append((shape.name, dtype, f"hardware profile {hw.name} skips {shape.role} shapes"))
                    else:
                        combos.append((shape.name, dtype))
            candidate = self._candidate_unit(task, backend, combos, skipped)
            candidate.compile_only = compile_only
            if not candidate.missing and not compile_only:  # baselines only matter next to a timed candidate
                units += [Unit(task, b, b.name, None, combos, skipped) for b in baselines]
            units.append(candidate)
        return units

    def _candidate_unit(self, task: Task, backend: Backend, combos, skipped) -> Unit:
        if self.opt.solutions is None:
            ref_dir = backend.reference_dir()
            source = ref_dir / task.category / f"{task.name}{backend.suffix}" if ref_dir else None
            missing = None if source and source.exists() else f"backend {backend.name} has no reference kernel for {task.qualified_name}"
        else:
            source = self.opt.solutions / task.category / f"{task.name}{backend.suffix}"
            missing = None if source.exists() else f"no candidate file {task.category}/{task.name}{backend.suffix} in {self.opt.solutions}"
        invalid = None if missing else backend.static_problem(task, source)
        findings = [] if missing or invalid else backend.static_findings(task, source)
        return Unit(task, backend, self.opt.method_name, source, combos, skipped, missing, invalid, findings)

    def _check_solutions_dir(self, backend: Backend) -> None:
        root = self.opt.solutions
        if not root.is_dir():
            raise BadInput(f"--solutions {root}: not a directory")
        for path in sorted(root.rglob(f"*{backend.suffix}")):
            rel = path.relative_to(root)
            if len(rel.parts) != 2:
                raise BadInput(f"--solutions: {rel} is not laid out as <category>/<task>{backend.suffix}")
            category, name = rel.parts[0], path.stem
            task = self.reg.tasks.get(name)
            if task is None or task.category != category:
                raise BadInput(f"--solutions: {rel} names task {category}/{name}, which does not exist")

    # --- running ---------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        limits = self.opt.limits
        probe = probe_device(limits)
        hw = resolve_profile(self.opt.hw, self.reg.hardware, probe)
        units = self.plan(hw)
        config = self.opt.config(hw.name)
        config_key = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
        run = self.store.resumable_run(config_key) if self.opt.resume else None
        latest = self.store.latest_run(config_key) if self.opt.resume and run is None else None
        if latest is not None and latest.status == "finished":
            # A second --resume after the run completed would otherwise start the same sweep again.
            self.log(f"run {latest.id} with this configuration already finished; nothing to resume "
                     "(leave out --resume for a new run)")
            return {"run_id": latest.id, "hw": hw, "units": units, "invalid": [u for u in units if u.invalid]}
        if run is not None:
            run_id, seed = run.id, run.seed
            self.store.set_run_status(run_id, "running")
            self.log(f"resuming run {run_id} ({len(self.store.finished_units(run_id))} units already recorded)")
        else:
            if self.opt.resume:
                self.log("nothing to resume for this configuration; starting a new run")
            seed = self.opt.seed if self.opt.seed is not None else secrets.randbits(31)
            env = environment.run_environment(probe)
            env["hw_profile"] = {"name": hw.name, "display_name": hw.display_name, "source": hw.source}
            if hw.device == "cuda" and self.opt.timed:
                env["launch_overhead_us"] = probe_device(limits, {"kind": "overhead", "hw": hw})
            env["candidate_contract"] = self.reg.backend(self.opt.backend).candidate_contract
            run_id = self.store.start_run(config_key, config, hw.name, self.opt.backend, self.opt.method_name,
                                          environment.machine_info(probe), env, seed)
        self.overhead_us = self.store.run(run_id).env.get("launch_overhead_us", {}).get("torch_op_us")
        done = self.store.finished_units(run_id)
        log_dir = self.opt.log_dir or self.store.path.parent / f"{self.store.path.stem}-logs"
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        todo = [u for u in units if (u.task.name, u.backend.name, u.method) not in done and _needs_worker(u)]
        self._spare, self._upcoming = None, iter(todo[1:])
        try:
            for i, unit in enumerate(units):
                key = (unit.task.name, unit.backend.name, unit.method)
                self.progress(f"{unit.task.qualified_name} [{unit.method}]", i, len(units))
                if key in done:
                    continue
                rows = self._evaluate(unit, hw, seed, log_dir / f"run{run_id}" / f"{unit.task.name}__{unit.method}.log")
                self._add_speedups(run_id, unit, rows)
                self.store.record_unit(run_id, *key, rows)
            self.progress("done", len(units), len(units))
        except KeyboardInterrupt:
            self.store.set_run_status(run_id, "interrupted", {"gpu_state_at_end": environment.gpu_state()})
            raise
        finally:
            signal.signal(signal.SIGTERM, previous)
            if self._spare is not None:
                self._spare.discard()
        self.store.set_run_status(run_id, "finished", {"gpu_state_at_end": environment.gpu_state()})
        invalid = [u for u in units if u.invalid]
        return {"run_id": run_id, "hw": hw, "units": units, "invalid": invalid}

    def _evaluate(self, unit: Unit, hw: HardwareProfile, seed: int, log_path: Path) -> list[dict[str, Any]]:
        if not _needs_worker(unit):
            return _rows_for(unit, None, hw)
        job = {"kind": "evaluate", "task": unit.task, "backend": unit.backend, "hw": hw, "source": unit.source,
               "combos": unit.combos, "seeds": self.opt.seeds, "run_seed": seed, "timing": self.opt.timing,
               "do_timing": self.opt.timed, "compile_only": bool(unit.compile_only)}
        env = worker_env(unit.backend, hw)
        spare, self._spare = self._spare, None
        outcome = run_worker(job, env, self.opt.limits, log_path, started=spare, on_started=lambda: self._start_next(hw))
        rows = _rows_for(unit, outcome, hw)
        if not self.opt.timed:
            for r in rows:
                if r["verdict"] == "correct" and r["perf_status"] == "not_run":
                    r.update(perf_status="not_timed")
        return rows

    def _start_next(self, hw: HardwareProfile) -> None:
        """Spawn the next unit's worker now, so that its imports overlap with this unit's work."""
        nxt = next(self._upcoming, None)
        if nxt is not None and self.opt.prestart:
            self._spare = StartedWorker(worker_env(nxt.backend, hw))

    def _add_speedups(self, run_id: int, unit: Unit, rows: list[dict[str, Any]]) -> None:
        base = self.store.baseline_times(run_id, unit.task.name)
        for r in rows:
            eager = r.get("time_median_us") if unit.backend.name == "eager" else base.get(("eager", r["shape"], r["dtype"]))
            if eager and self.overhead_us:
                r["extra"]["overhead_dominated"] = eager < OVERHEAD_FACTOR * self.overhead_us
        if unit.backend.is_baseline:
            return
        for r in rows:
            if r.get("time_median_us") and not r.get("interpreted"):
                for method, column in BASELINE_FOR_SPEEDUP.items():
                    t = base.get((method, r["shape"], r["dtype"]))
                    if t:
                        r[column] = t / r["time_median_us"]


def worker_env(backend, hw: HardwareProfile) -> dict[str, str]:
    """The backend's worker environment, on a GPU with Triton's interpreter off unless it says otherwise:
    workers inherit the parent's environment, and a TRITON_INTERPRET=1 left there (a CPU test session,
    a user's shell) would otherwise run Triton references and torch.compile's kernels interpreted."""
    env = {} if hw.device == "cpu" else {"TRITON_INTERPRET": "0"}
    env.update(backend.worker_env(hw))
    return env


def _needs_worker(unit: Unit) -> bool:
    return not (unit.missing or unit.invalid or not unit.combos)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt
