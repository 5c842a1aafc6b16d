"""A run, end to end: plan, take ownership (a new run, or a resumed one), execute, turn each finished
unit into rows, write them, report progress. Only this process writes the store."""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import os
import re
import secrets
import signal
import sys
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import environment, wire
from ..errors import BadInput
from ..hardware import HardwareProfile, resolve_profile
from ..integrity import Policy
from ..registry import Registry
from ..store import RunOwned, Store, this_owner
from ..timing import UNTIMED_WAIT_ENV, TimingSettings
from . import head_start, procs
from .clock import StartClock, cpu_sample, engine_line, host_cpu, unit_clocks
from .device import HOST_LANES, Device, default_lanes
from .gpu_busy import GpuBusy
from .lane import EvalSettings, Limits
from .plan import Planner, Unit
from .rows import rows_for, skipped_rows
from .settings import Sharing

HEARTBEAT_S = 5.0


@dataclass
class RunOptions:
    backend: str = "triton"
    hw: str = "auto"
    solutions: Path | None = None
    method: str | None = None
    # the --tasks-dir folders: with solutions, the suite a corpus is judged against (see Planner.plan)
    task_dirs: list[Path] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    shape_roles: list[str] = field(default_factory=list)  # empty: every role
    dtypes: list[str] = field(default_factory=list)       # empty: every dtype of each task
    time_roles: list[str] = field(default_factory=list)   # shape roles to time; empty: every role
    seeds: int = 2
    seed: int | None = None
    baselines: list[str] | None = None  # None: the hardware profile's default
    timing: TimingSettings = field(default_factory=TimingSettings)
    limits: Limits = field(default_factory=Limits)
    resume: bool = False
    timed: bool = True  # False: correctness only, nothing timed (rows say 'not_timed')
    policy: Policy = field(default_factory=Policy)
    workers: int | None = None   # CPU prepare pool (default: the cores)
    compile_workers: int | None = None  # compile-ahead pool (default: compile_ahead.default_workers(workers))
    lanes: int | None = None     # lanes per device (default: device.default_lanes on a GPU, the cores on a CPU)
    sharing: Sharing = field(default_factory=Sharing)  # timing phases and memory budget of each device
    gpus: str = "0"              # "all" or "0,1,..."
    worker_memory_mb: int | None = None  # RLIMIT_DATA of each candidate worker (None: no cap)
    executor: str = "local"      # or "ray"
    address: str | None = None   # Ray cluster address
    baseline_cache: bool = True
    log_dir: Path | None = None
    confine: bool = True         # confine candidate workers (mkbench.sandbox); False: --no-confine
    untimed_wait: str = "spin"   # how judges and compile-ahead workers wait for a GPU: "spin" or "block"
    transfer: str = "area"       # how workers hand CUDA tensors to the judge: "area" or "ipc" (EvalSettings)
    memory_hold: str = "unit"    # how a unit holds its share of the memory budget: "unit" or "staged" (EvalSettings)
    compile_ahead: str = "backend"  # where candidates compile ahead: compile_ahead.MODES (EvalSettings)
    build_hold: str = "release"  # "keep" or "release" the shared hold while a candidate builds in a call (EvalSettings)
    trace_call: str = "auto"     # "first", "warm", or "auto": warm on a GPU, first elsewhere (EvalSettings)
    # the tasks in an order shuffled with this seed (None: the registry's order, category by category); not
    # in the run's configuration: a resumed run may take another order and keeps what it finished
    shuffle_seed: int | None = None

    @property
    def method_name(self) -> str:
        return self.method or ("reference" if self.solutions is None else self.solutions.name)

    def config(self, hw: str) -> dict[str, Any]:
        """What decides the results (how they are computed in parallel does not)."""
        return {"backend": self.backend, "hw": hw, "method": self.method_name,
                "solutions": str(self.solutions.resolve()) if self.solutions else None,
                "tasks": sorted(self.tasks), "categories": sorted(self.categories), "seeds": self.seeds,
                "shape_roles": sorted(self.shape_roles), **({"dtypes": sorted(self.dtypes)} if self.dtypes else {}),
                "baselines": self.baselines,
                "timing": asdict(self.timing) if self.timed else None, "policy": asdict(self.policy),
                **({"time_roles": sorted(self.time_roles)} if self.time_roles else {})}


class Progress:
    """What the runner reports; the CLI draws it."""

    def start(self, total: int, done: int) -> None: ...
    def unit_done(self, unit: Unit, rows: list[dict]) -> None: ...
    def tick(self, lanes: list[str]) -> None: ...
    def log(self, line: str) -> None:
        print(line)


class DeviceProbe:
    """The worker that tells the device's facts, kept for the launch overheads a GPU run's record asks for
    next: one interpreter, one torch import and one CUDA context where two were made one after the other
    (seconds of every GPU run's start). The orchestrator never creates a CUDA context. Spawned, not forked
    from the fork server, whose imports go on meanwhile."""

    def __init__(self, limits: Limits, env: dict | None = None, started: procs.Child | None = None):
        """``started``: a worker already asked :data:`.head_start.PROBE` (its answer is read, not asked again)."""
        self.limits, self.env, self.child = limits, env or {}, started
        self.asked = head_start.PROBE if started is not None else None

    def ask(self, op: str = "probe", hw: HardwareProfile | None = None) -> dict[str, Any]:
        """Device facts (``probe``) or launch overheads (``overhead``)."""
        import multiprocessing

        from .. import worker
        if self.child is None:
            self.child = procs.Child(worker.entry, (self.env, None), ctx=multiprocessing.get_context("spawn"))
        cmd, asked, self.asked = {"op": op, "hw": hw}, self.asked, None
        try:
            reply = self.child.recv(self.limits.start) if cmd == asked else self.child.request(cmd, self.limits.start)
        except (procs.Timeout, procs.Died, wire.WireError) as exc:
            self.close()
            raise BadInput(f"device {op} failed ({'timeout' if isinstance(exc, procs.Timeout) else exc})") from None
        if not isinstance(reply, dict) or reply.get("kind") != "probe":
            said = reply.get("message") if isinstance(reply, dict) else reply
            raise BadInput(f"device {op} failed: {str(said)[:300]}")
        return reply["info"]

    def close(self) -> None:
        if self.child is not None:
            self.child.stop(grace=2)
            self.child = None

    def __enter__(self) -> "DeviceProbe":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def probe_device(limits: Limits, op: str = "probe", hw: HardwareProfile | None = None,
                 env: dict | None = None) -> dict[str, Any]:
    """Device facts (or launch overheads), gathered in a worker of their own."""
    with DeviceProbe(limits, env) as device:
        return device.ask(op, hw)


#: compile caches kept per (backend, method), read by their tools when first used in a worker
PER_METHOD_CACHES = ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "CUDA_CACHE_PATH")


def trace_call(option: str, device: str) -> str:
    """``--trace-call``: "auto" traces a warm call on a GPU, where a first call's JIT compile and autotuning run
    under the profiler at several times their cost while the unit holds the device, and the first call on the
    CPU, whose interpreter compiles nothing and where one more interpreted call costs seconds."""
    if option == "auto":
        return "warm" if device == "cuda" else "first"
    return option


def slug(name: str, limit: int = 80) -> str:
    """A file-name-safe form of a method or task name (the real name stays in the store)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "_"
    if safe != name or len(safe) > limit:
        safe = f"{safe[:limit - 9]}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"
    return safe


def worker_env(backend, hw: HardwareProfile) -> dict[str, str]:
    """The backend's worker environment, on a GPU with Triton's interpreter off unless it says otherwise:
    a TRITON_INTERPRET=1 inherited from a CPU test session or a user's shell would otherwise run
    Triton references and torch.compile's kernels interpreted."""
    env = {} if hw.device == "cpu" else {"TRITON_INTERPRET": "0"}
    env.update(backend.worker_env(hw))
    return env


#: a run told to stop that is still stopping after this long says where its threads are (on an H100, CUDA-L1
#: runs sent SIGTERM took 50-60 s to end, where a CPU run ends in 2 s: reports/2026-11-28-cuda-l1, calls 14-15)
STOP_REPORT_S = 15.0


def report_slow_stop(after: float | None = None) -> threading.Timer:
    """Starts a timer (a daemon: it never holds the process up) that prints every thread's stack to stderr
    if the process is still alive ``after`` seconds from now."""
    def report() -> None:
        names = {t.ident: t.name for t in threading.enumerate()}
        lines = [f"mkbench: still stopping {after or STOP_REPORT_S:.0f} s after being told to; where its threads are:"]
        for ident, frame in sys._current_frames().items():
            if ident != threading.get_ident():
                lines += [f"-- thread {names.get(ident, ident)}", *traceback.format_stack(frame)[-6:]]
        print("\n".join(line.rstrip() for line in lines), file=sys.stderr, flush=True)

    timer = threading.Timer(STOP_REPORT_S if after is None else after, report)
    timer.daemon = True
    timer.start()
    return timer


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


class Runner:
    def __init__(self, registry: Registry, store: Store, options: RunOptions, progress: Progress | None = None,
                 own_process: bool = False):
        self.reg, self.store, self.opt = registry, store, options
        self.own_process = own_process  # started by `mkbench run` in a process of its own (StartClock)
        self.progress = progress or Progress()
        self.owner = this_owner()

    def run(self) -> dict[str, Any]:
        opt = self.opt
        start = StartClock(self.own_process)
        backend = self.reg.backend(opt.backend)
        modules = tuple(getattr(backend, "worker_modules", ()))
        # The fork server's imports (seconds) overlap the device probe (`mkbench run` started both ahead); what
        # Triton must be told at import is known from the device nodes present.
        import_env = self._import_env(backend)
        server_env = {**head_start.server_env(), **import_env}
        starter = threading.Thread(target=procs.context, args=(modules, server_env))
        starter.start()
        # Triton in the probe's worker is told the same (the launch overheads time a compiled Triton kernel);
        # the worker is kept until the run's record has them. `mkbench run` spawned it as it began.
        env = head_start.probe_env()
        device = DeviceProbe(opt.limits, env, head_start.take(env))
        try:
            try:
                probe = device.ask()
            finally:
                starter.join()  # the server is started; the first fork waits for its imports
            start.mark("probe")
            hw = resolve_profile(opt.hw, self.reg.hardware, probe)
            planner = Planner(self.reg, opt)
            units = planner.plan(hw)
            start.mark("plan")
            if planner.left_out:
                self.progress.log(f"{planner.left_out} task(s) outside --tasks-dir without a candidate in "
                                  f"{opt.solutions}: not part of this corpus's suite, not planned")
            config = opt.config(hw.name)
            config_key = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
            run_id = self._open_run(config_key, config, hw, probe, device)
            start.mark("record")
        finally:
            device.close()
        if run_id is None:
            latest = self.store.latest_run(config_key)
            return {"run_id": latest.id, "hw": hw, "units": units, "invalid": [u for u in units if u.invalid]}
        run = self.store.run(run_id)
        overhead = run.env.get("launch_overhead_us", {}).get("torch_op_us")
        done = self.store.finished_units(run_id)
        todo = [u for u in units if u.key not in done]
        env_key, env_doc = self._baseline_env(run, hw)
        self.progress.start(len(units), len(units) - len(todo))
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        beat = started = time.monotonic()
        cpu_at_start = cpu_sample()
        gpu = GpuBusy().start() if hw.device == "cuda" else None  # is the device the bound, or the schedule?
        clocks: list = []  # of the units evaluated in this session, for the engine line
        executor = None

        def engine_clock() -> dict:  # this session's wall time and lanes, added to the run's earlier sessions
            lanes = len(executor.lane_states()) if executor is not None else 0
            session = {"start_s": start.parts, "wall_s": round(time.monotonic() - started, 3), "lanes": lanes,
                       "units": len(clocks),
                       "confinement": self.confinement(),  # this session's (a resume may differ from the first)
                       "host_cpu": host_cpu(cpu_at_start, cpu_sample())}
            busy = gpu.record() if gpu is not None else None
            if busy is not None:
                session["gpu_busy"] = busy
            phases = getattr(executor, "timing_phases", None)
            if phases is not None:  # the local executor's devices (a Ray actor's lock is not seen from here)
                session["timing"] = phases()
                session["judge_cpu_s"] = executor.judge_cpu()
                session["compile_pool"] = executor.compile_pool()
                session["baseline_workers"] = executor.baseline_workers()
                if session["host_cpu"] and session["wall_s"]:
                    session["host_cpu"]["judge_cores"] = round(session["judge_cpu_s"] / session["wall_s"], 3)
            return {"sessions": [*run.env.get("engine_clock", {}).get("sessions", []), session]}

        try:
            executor = self._executor(hw, probe, run, modules, import_env)
            cached = set()
            for unit in todo:
                rows = self._cached_rows(unit, env_key)
                if rows is not None:
                    self._record(run_id, unit, rows, overhead)
                    cached.add(unit.key)
            for unit, obs in executor.run(u for u in todo if u.key not in cached):
                if time.monotonic() - beat > HEARTBEAT_S:
                    self.store.heartbeat(run_id, self.owner)
                    beat = time.monotonic()
                if unit is None:
                    self.progress.tick(executor.lane_states())
                    continue
                rows = rows_for(unit, obs, opt.policy, opt.timed, tuple(opt.time_roles))
                self._record(run_id, unit, rows, overhead)
                clocks += unit_clocks(rows)
                if unit.backend.is_baseline and opt.baseline_cache and env_key:
                    self.store.cache_baseline(_task_digest(unit), env_key, env_doc, run_id, rows)
        except RunOwned:
            raise  # another process took the run over: its status is theirs to write
        except BaseException as exc:  # Ctrl-C, SIGTERM, or a failure (an executor that cannot start): resumable
            if isinstance(exc, KeyboardInterrupt):
                report_slow_stop()
            self.store.set_run_status(run_id, "interrupted", {"gpu_state_at_end": environment.gpu_state(),
                                                              "engine_clock": engine_clock()})
            raise
        finally:
            signal.signal(signal.SIGTERM, previous)
            if gpu is not None:
                gpu.stop()
        engine = engine_clock()
        self.store.set_run_status(run_id, "finished",
                                  {"gpu_state_at_end": environment.gpu_state(), "engine_clock": engine})
        now = engine["sessions"][-1]
        return {"run_id": run_id, "hw": hw, "units": units, "invalid": [u for u in units if u.invalid],
                "confinement": self.confinement(),
                "engine_line": engine_line(clocks, now["wall_s"], now["lanes"], now.get("host_cpu"),
                                             now.get("gpu_busy"))}

    # --- pieces -------------------------------------------------------------------------------
    def _open_run(self, config_key: str, config: dict, hw: HardwareProfile, probe: dict,
                  device: DeviceProbe) -> int | None:
        opt = self.opt
        if opt.resume:
            run = self.store.resumable_run(config_key)
            if run is not None:
                self.store.claim_run(run.id, self.owner)
                self.progress.log(f"resuming run {run.id} ({len(self.store.finished_units(run.id))} units already "
                                  "recorded)")
                return run.id
            latest = self.store.latest_run(config_key)
            if latest is not None and latest.status == "finished":
                # A second --resume after the run completed would otherwise start the same sweep again.
                self.progress.log(f"run {latest.id} with this configuration already finished; nothing to resume "
                                  "(leave out --resume for a new run)")
                return None
            self.progress.log("nothing to resume for this configuration; starting a new run")
        seed = opt.seed if opt.seed is not None else secrets.randbits(31)
        env = environment.run_environment(probe)
        env["hw_profile"] = {"name": hw.name, "display_name": hw.display_name, "source": hw.source}
        if hw.device == "cuda" and opt.timed:
            env["launch_overhead_us"] = device.ask("overhead", hw)
        env["candidate_contract"] = self.reg.backend(opt.backend).candidate_contract
        env["engine"] = {"executor": opt.executor, "lanes": opt.lanes, **asdict(opt.sharing),
                         "gpus": opt.gpus, "workers": opt.workers, "compile_workers": opt.compile_workers,
                         "worker_memory_mb": opt.worker_memory_mb, "untimed_wait": opt.untimed_wait,
                         "transfer": opt.transfer, "memory_hold": opt.memory_hold,
                         "compile_ahead": opt.compile_ahead, "build_hold": opt.build_hold,
                         "trace_call": trace_call(opt.trace_call, hw.device),
                         "confinement": self.confinement()}
        return self.store.start_run(config_key, config, hw.name, opt.backend, opt.method_name,
                                    environment.machine_info(probe), env, seed, owner=self.owner)

    def confinement(self) -> str:
        """What confines the candidate workers, in one line (the run's env["engine"]["confinement"])."""
        if not self.opt.confine:
            return "none: --no-confine"
        from .. import sandbox
        return sandbox.support()

    def _store_path(self) -> Path:
        """The store's path as handed to workers (and what is derived from it): absolute, since a
        confined worker's cwd is its scratch directory (mkbench.sandbox._enter). ``abspath``, not
        ``resolve``: a symbolic link stays the path the user named."""
        return Path(os.path.abspath(self.store.path))

    def _log_dir(self) -> Path:
        store = self._store_path()
        return Path(os.path.abspath(self.opt.log_dir)) if self.opt.log_dir else store.parent / f"{store.stem}-logs"

    def _settings(self, run, device: str) -> EvalSettings:
        # what the workers may not touch: a denied attempt on these is a hack (mkbench.sandbox.denied_hack)
        confine = {"store": str(self._store_path()), "logs": str(self._log_dir())} if self.opt.confine else None
        return EvalSettings(run_seed=run.seed, seeds=self.opt.seeds, timing=self.opt.timing, timed=self.opt.timed,
                            limits=self.opt.limits, time_roles=tuple(self.opt.time_roles),
                            worker_memory_mb=self.opt.worker_memory_mb, confine=confine, transfer=self.opt.transfer,
                            memory_hold=self.opt.memory_hold, compile_ahead=self.opt.compile_ahead,
                            build_hold=self.opt.build_hold,
                            trace_call=trace_call(self.opt.trace_call, device))

    def _devices(self, hw: HardwareProfile, probe: dict, modules) -> list[Device]:
        cores = os.cpu_count() or 1
        if hw.device != "cuda":
            return [Device(hw.device, None, self.opt.lanes or cores, {}, modules, sharing=self.opt.sharing)]
        count = int(probe.get("device_count") or 1)
        if self.opt.gpus == "all":
            indices = list(range(count))
        else:
            indices = [int(i) for i in self.opt.gpus.split(",")]
            bad = [i for i in indices if i >= count]
            if bad:
                raise BadInput(f"--gpus {self.opt.gpus}: this machine has {count} GPU(s) (0..{count - 1})")
        lanes = self.opt.lanes or default_lanes(cores, len(indices))
        if len(indices) > 1 and not self.opt.lanes:  # the default depends on the GPUs: say what it chose
            self.progress.log(f"{len(indices)} GPUs, {lanes} lanes each: the host's {HOST_LANES} lanes shared "
                              "(CUDA starts queue host-wide; --lanes N per GPU to change)")
        env = {"TRITON_INTERPRET": "0", UNTIMED_WAIT_ENV: self.opt.untimed_wait}
        return [Device("cuda", i, lanes, env, modules, probe.get("memory_bytes"), self.opt.sharing) for i in indices]

    def _jit_cache_env(self) -> dict[str, str]:
        """Where the JIT toolchains cache compiled artifacts, beside the store: keyed by source,
        toolchain and target (each tool's own cache), so a resume or a re-run of the same candidates
        compiles nothing again; and writable by confined workers (:data:`mkbench.sandbox.CACHE_VARS`)."""
        store = self._store_path()  # absolute: a confined worker's cwd is its scratch directory
        cache_dir = store.parent / f"{store.stem}-cache"
        return {"TRITON_CACHE_DIR": str(cache_dir / "triton"), "CUPY_CACHE_DIR": str(cache_dir / "cupy"),
                "TORCH_EXTENSIONS_DIR": str(cache_dir / "torch_extensions"),
                "TORCHINDUCTOR_CACHE_DIR": str(cache_dir / "inductor"),
                # PyOpenCL's compiler cache and PoCL's kernel cache (both under XDG_CACHE_HOME otherwise,
                # which a confined worker may not write)
                "XDG_CACHE_HOME": str(cache_dir / "xdg"), "POCL_CACHE_DIR": str(cache_dir / "pocl"),
                "CUDA_CACHE_PATH": str(cache_dir / "nv")}  # the driver's PTX JIT cache

    def _import_env(self, backend) -> dict[str, str]:
        """The cache variables the backend's preloaded worker modules read when imported
        (``worker_import_env``), set while the fork server imports them. A worker's own environment
        comes too late for those: CuPy 14 builds its kernel cache when imported, so with the server's
        environment every confined CUDA worker tried to write ~/.cupy/kernel_cache, was denied, and
        every CUDA reference on 4 H200s was compile_error (reports/2026-11-27-portability)."""
        wanted = getattr(backend, "worker_import_env", ())
        if not any(importlib.util.find_spec(m.split(".")[0]) for m in getattr(backend, "worker_modules", ())):
            return {}  # nothing is preloaded (CuPy not installed): the workers' own environment serves
        return {k: v for k, v in self._jit_cache_env().items() if k in wanted}

    def _executor(self, hw: HardwareProfile, probe: dict, run, modules, server_env: dict[str, str]):
        log_dir = self._log_dir()
        caches = self._jit_cache_env()

        def log_path(unit: Unit) -> Path:
            return log_dir / f"run{run.id}" / f"{slug(unit.task.name)}__{slug(unit.method)}.log"

        def unit_env(unit: Unit) -> dict[str, str]:
            env = worker_env(unit.backend, hw)
            for k, v in caches.items():
                env.setdefault(k, v)
            # A compile cache per (backend, method), the only one its confined workers may write: in a
            # shared one, a candidate could plant a binary under the key of a baseline's kernel (an
            # Inductor build of torch.compile's, made slow, inflates every speedup over it) or of another
            # method's. One method's units share theirs (a reference set compiles Triton's launchers
            # once, not per unit). CuPy's and PoCL's stay shared: read when the fork server imports them.
            digest = hashlib.sha256(repr((unit.backend.name, unit.method)).encode()).hexdigest()[:10]
            group = f"{slug(unit.backend.name, 40)}__{slug(unit.method, 40)}-{digest}"
            for var in PER_METHOD_CACHES:
                if env.get(var) == caches.get(var):
                    env[var] = str(Path(caches[var]) / group)
            if env.get("TORCH_EXTENSIONS_DIR") == caches.get("TORCH_EXTENSIONS_DIR"):
                # A build folder per unit (the same on a resume: keyed by the unit), the only one its
                # confined worker may write: in a shared one, a candidate could plant an extension under
                # the key of another candidate's sources for that unit to load as its own.
                key = hashlib.sha256(repr(unit.key).encode()).hexdigest()[:10]
                env["TORCH_EXTENSIONS_DIR"] = str(Path(caches["TORCH_EXTENSIONS_DIR"]) /
                                                  f"{slug(unit.task.name, 40)}__{slug(unit.method, 40)}-{key}")
            return env

        settings = self._settings(run, hw.device)
        workers = self.opt.workers or os.cpu_count() or 1
        if self.opt.executor == "ray":
            from .ray_executor import RayExecutor
            return RayExecutor(self.opt.address, hw, probe, self.opt, settings, log_path, unit_env, modules, workers,
                               server_env)
        from .local import LocalExecutor
        return LocalExecutor(self._devices(hw, probe, modules), workers, settings, log_path, unit_env, modules,
                             compile_workers=self.opt.compile_workers)

    def _record(self, run_id: int, unit: Unit, rows: list[dict], overhead: float | None) -> None:
        self.store.record_unit(run_id, *unit.key, rows, owner=self.owner)
        self.store.update_speedups(run_id, unit.task.name, overhead)
        self.progress.unit_done(unit, rows)

    # --- the baseline cache ------------------------------------------------------------------
    def _baseline_env(self, run, hw: HardwareProfile) -> tuple[str | None, dict]:
        if not (self.opt.baseline_cache and self.opt.timed):
            return None, {}
        from .. import timing
        env = {"device": run.machine.get("device_name"), "cpu": run.machine.get("cpu"),
               "driver": run.machine.get("driver"),
               "runtime": run.env.get("torch_runtime"), "profile": hw.name, "timing_settings": asdict(self.opt.timing),
               "seeds": self.opt.seeds,
               "timer_code": hashlib.sha256(inspect.getsource(timing).encode()).hexdigest()[:16]}
        return hashlib.sha256(json.dumps(env, sort_keys=True, default=str).encode()).hexdigest()[:16], env

    def _cached_rows(self, unit: Unit, env_key: str | None) -> list[dict] | None:
        """A baseline already measured in this environment: its rows come from the cache."""
        if env_key is None or not unit.backend.is_baseline or not unit.combos:
            return None
        rows = self.store.cached_baseline(unit.task.name, _task_digest(unit), unit.backend.name, unit.combos, env_key)
        return None if rows is None else rows + skipped_rows(unit)


def _task_digest(unit: Unit) -> str:
    try:
        text = Path(unit.task.source).read_bytes()
    except (OSError, TypeError):
        text = unit.task.name.encode()
    return hashlib.sha256(text).hexdigest()[:16]
