"""The candidate's worker process: it executes steps, it decides nothing.

One worker process serves one unit (a candidate, or a baseline, on one task). It is forked from
multiprocessing's fork server, which has already imported torch, Triton, JAX and CuPy, so a worker
starts in a fraction of a second yet shares no state with any other candidate. The orchestrator's
lane (:mod:`mkbench.engine.lane`, its steps in :mod:`mkbench.engine.steps`) sends it commands
(``setup``, ``compile``, ``run``, ``call``, ``time``) and it answers each with plain data
(:mod:`mkbench.wire`): outputs as tensor descriptors for the judge, launch counts, traces, timings,
and anything it noticed the candidate tampering with. What the answers mean (correct, hack,
framework...) is decided by the orchestrator and the judge, never here: a candidate controls this
process and could make it say anything, so nothing it says is trusted beyond what other evidence
confirms.
"""

from __future__ import annotations

import os
import pickle
import sys
import time
import traceback
from contextlib import contextmanager
from typing import Any, Iterator

from . import wire
from .errors import CompiledNotLaunched, IntegrityViolation

MAX_MESSAGE = 2000


def short(text: str, limit: int = MAX_MESSAGE) -> str:
    text = str(text).strip()
    return text if len(text) <= limit else text[: limit // 2] + " ... " + text[-limit // 2:]


def entry(conn, env: dict[str, str], log_path: str | None, memory_mb: int | None = None,
          confine: dict | None = None) -> None:
    os.environ.update(env)  # first: Triton reads TRITON_INTERPRET when a kernel is decorated
    from . import procguard
    procguard.detach_and_guard()
    if memory_mb:
        # Private writable memory (malloc, anonymous mmap), enforced by the kernel at allocation: a
        # candidate that hogs host memory gets a MemoryError at the cap, however fast it allocates
        # (a poll of the resident size would see it too late). Shared memory (the tensors handed to
        # the judge) does not count. Soft and hard limit alike: the candidate cannot raise it (unless
        # the worker runs as root).
        import resource
        resource.setrlimit(resource.RLIMIT_DATA, (memory_mb << 20, memory_mb << 20))
    if log_path:
        # Candidates print; their output goes to the unit's log, whose tail explains crashes.
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        sys.stdout.flush(); sys.stderr.flush()
        os.dup2(fd, 1); os.dup2(fd, 2)
        os.close(fd)
    steps = Steps()
    if confine is not None:  # before any candidate code is imported (see mkbench.sandbox)
        from . import sandbox
        t = time.monotonic()
        try:
            confinement = sandbox.confine(confine, log_path)
        except Exception as exc:  # never fail the unit for want of confinement: record it
            confinement = f"none: {type(exc).__name__}: {exc}"
        steps.start_seconds["confine"] = round(time.monotonic() - t, 3)
        print(f"mkbench: confinement: {confinement}", file=sys.stderr, flush=True)
    try:
        while True:
            try:
                cmd = pickle.loads(conn.recv_bytes())  # from the orchestrator: trusted
            except (EOFError, OSError):
                break
            if cmd["op"] == "stop":
                break
            _STEP_OUT[0] = conn if cmd.get("step_out") else None  # see host_work
            try:
                reply = getattr(steps, cmd["op"])(cmd)
            except BaseException as exc:  # report, then carry on: the lane decides what happens next
                reply = steps.failure(exc)
            finally:
                _STEP_OUT[0] = None
            wire.send(conn, reply)
    finally:
        sys.stdout.flush(); sys.stderr.flush()
    os._exit(0)  # skip interpreter teardown: a corrupted CUDA context can hang there


#: the pipe to the lane while a step that may step out of its device hold runs (``step_out`` in the
#: command: a check of the candidate under a shared hold, with ``--build-hold release``)
_STEP_OUT: list = [None]


@contextmanager
def host_work(what: str) -> Iterator[None]:
    """Around host-only work inside a candidate's call (load_inline's nvcc): where the step allows it,
    the lane lets go of its shared hold on the device while the block runs (a timing phase need not
    wait for a build) and takes it again before the call goes on; elsewhere, and nested, nothing
    changes. The lane trusts the worker's word that the block launches nothing, which is why it is
    an option (``--build-hold``)."""
    conn = _STEP_OUT[0]
    if conn is None:
        yield
        return
    _STEP_OUT[0] = None  # nested host work: one step out
    try:  # the call's device work so far ends inside the hold it was launched under
        import torch
        if torch.cuda.is_initialized():
            torch.cuda.synchronize()
    except Exception:  # noqa: BLE001 - a broken context fails the call's next launch, where it is reported
        pass
    wire.send(conn, {"kind": "host_work", "begin": str(what)[:200]})
    try:
        yield
    finally:
        wire.send(conn, {"kind": "host_work", "end": str(what)[:200]})
        pickle.loads(conn.recv_bytes())  # {"op": "resume"}: the lane holds the device again
        _STEP_OUT[0] = conn


# --- device facts (run in a worker so the orchestrator never creates a CUDA context) ----------------

def probe() -> dict[str, Any]:
    import torch
    info: dict[str, Any] = {"torch": str(torch.__version__), "torch_cuda": torch.version.cuda,
                            "torch_hip": getattr(torch.version, "hip", None),
                            "cuda_available": torch.cuda.is_available()}
    try:
        import triton
        info["triton"] = str(triton.__version__)
    except Exception as exc:
        info["triton"] = f"unavailable ({type(exc).__name__})"
    info["accelerator"] = None
    if info["cuda_available"]:
        info["accelerator"] = "cuda"
        p = torch.cuda.get_device_properties(0)
        info.update(
            device_name=p.name, device_count=torch.cuda.device_count(),
            vendor="amd" if info["torch_hip"] else "nvidia",
            compute_capability=f"{p.major}.{p.minor}", multiprocessors=p.multi_processor_count,
            l2_cache_bytes=int(getattr(p, "L2_cache_size", 0) or 0), memory_gb=round(p.total_memory / 2**30, 1),
            memory_bytes=int(p.total_memory),
        )
    elif getattr(torch, "xpu", None) is not None and torch.xpu.is_available():
        info.update(accelerator="xpu", vendor="intel", device_name=torch.xpu.get_device_name(0),
                    device_count=torch.xpu.device_count())
    elif os.path.exists("/dev/accel0") or os.environ.get("TPU_NAME"):
        try:
            import jax
            tpus = [d for d in jax.devices() if d.platform == "tpu"]
        except Exception:
            tpus = []
        if tpus:
            info.update(accelerator="tpu", vendor="google", device_name=tpus[0].device_kind, device_count=len(tpus))
    return info


# --- tamper watch --------------------------------------------------------------------------------

_WATCHED_MODULES = ("mkbench.contracts", "mkbench.timing", "mkbench.transfer", "mkbench.inputs", "mkbench.worker",
                    "mkbench.trace", "mkbench.wire", "mkbench.judge", "mkbench.backend", "mkbench.procguard")


def harness_snapshot() -> dict[str, tuple[Any, str, Any, Any]]:
    """Every function and method the worker's steps rest on, captured before any candidate is
    imported: the mkbench modules loaded here (the contract classes included: replacing
    ``AllClose.check`` cannot change a verdict any more, since the judge runs elsewhere, but it is
    evidence of intent), the backends' runtime modules, the clocks and CUDA event methods."""
    import time

    import torch
    targets: list[tuple[Any, str]] = [(time, "perf_counter"), (time, "perf_counter_ns"), (time, "time"),
                                      (time, "time_ns"), (time, "monotonic"), (time, "monotonic_ns"),
                                      (torch, "equal"),
                                      (torch, "isnan"), (torch.Tensor, "clone"), (torch.Tensor, "data_ptr"),
                                      # what copies an answer into a transfer area (--transfer area)
                                      (torch.Tensor, "copy_"), (torch.Tensor, "view")]
    # The CUDA timing functions are watched on every device: replacing them is intent whether or not
    # they run here (and a CPU test can show it). The class itself too: a candidate that puts its
    # own Event class in its place leaves the original's methods untouched.
    targets += [(torch.cuda, "Event"), (torch.cuda.Event, "record"), (torch.cuda.Event, "elapsed_time"),
                (torch.cuda.Event, "synchronize"), (torch.cuda.Event, "query"), (torch.cuda, "synchronize"),
                (torch.cuda, "_sleep")]
    from . import timing
    targets.append((timing, "_clock"))  # the timer's own clock, bound before any candidate ran
    names = [n for n in sys.modules if n in _WATCHED_MODULES
             or (n.startswith("mkbench.backends.") and "kernels" not in n)]
    for name in names:
        module = sys.modules[name]
        for attr, value in list(vars(module).items()):
            if attr.startswith("__"):
                continue
            if callable(value) and getattr(value, "__module__", None) == name:
                targets.append((module, attr))
                if isinstance(value, type):
                    targets += [(value, a) for a, v in vars(value).items() if callable(v) and not a.startswith("__")]
    snapshot = {}
    for o, a in targets:
        value = getattr(o, a, None)
        # a function's code can be swapped in place (``f.__code__ = ...``), keeping its identity
        snapshot[f"{getattr(o, '__name__', type(o).__name__)}.{a}"] = (o, a, value, getattr(value, "__code__", None))
    return snapshot


def tampered(snapshot: dict, threads_mark: int) -> str | None:
    """What the candidate changed in the harness since :func:`harness_snapshot`: every function
    replaced (named, so that the evidence says what), or the first thread it started."""
    replaced = [name for name, (owner, attr, original, code) in snapshot.items()
                if getattr(owner, attr, None) is not original or getattr(original, "__code__", None) is not code]
    if replaced:
        more = f" (and {len(replaced) - 1} more: {', '.join(replaced[1:6])})" if len(replaced) > 1 else ""
        return f"the candidate replaced harness function {replaced[0]}{more}"
    started = threads_started()[threads_mark:]
    if started:
        return f"the candidate started a thread ({started[0]}): work can continue outside the timer"
    return None


_threads_started: list[str] | None = None


def threads_started() -> list[str]:
    """The live record of threads started by the candidate's own code. The starter is the first frame
    on the stack outside the standard library (so a candidate that hands its work to
    ``concurrent.futures`` is found through the pool's caller). Where that frame belongs to an
    installed package, the thread is the library's own (torch.compile's autotuning workers, Triton's,
    tqdm's monitor: each seen on an H100 inside CUDA-L1's KernelBench models, each called ``hack``
    when the candidate line that called into the library was blamed) and is not counted. A
    candidate that has a library run its work on a thread is not caught here but by what the work
    leaves: the device trace's other streams and busy time, and the answers judged after the timed
    calls. The harness itself is trusted. The first call installs the watch on
    ``threading.Thread.start``.
    """
    global _threads_started
    if _threads_started is not None:
        return _threads_started
    import sysconfig
    import threading
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    harness = os.path.dirname(os.path.realpath(__file__))
    record: list[str] = []
    original = threading.Thread.start

    def start(thread, *args, **kwargs):
        frame = sys._getframe(1)
        while frame is not None:
            path = os.path.realpath(frame.f_code.co_filename)
            if not (path.startswith(stdlib) or path.startswith("<")):
                break
            frame = frame.f_back
        installed = frame is not None and ("site-packages" in path or "dist-packages" in path)
        if frame is not None and not installed and not path.startswith(harness + os.sep):
            record.append(f"{path}:{frame.f_lineno}")
        return original(thread, *args, **kwargs)

    threading.Thread.start = start
    _threads_started = record
    return record


def warm_libraries() -> None:
    """torch's cuBLAS and cuDNN handles on the current device, made by one tiny matmul and one tiny
    convolution, as any program that has run those ops has them: a candidate that captures PyTorch
    ops in a CUDA graph without a warm-up call first would otherwise make them during its capture,
    which invalidates it (``cudaErrorStreamCaptureInvalidated``)."""
    import torch
    a = torch.ones(8, 8, device="cuda")
    a @ a
    torch.nn.functional.conv2d(torch.ones(1, 1, 4, 4, device="cuda"), torch.ones(1, 1, 3, 3, device="cuda"))
    torch.cuda.synchronize()


def poison_allocator(device: str, inputs: tuple) -> None:
    """Fill the caching allocator's free memory with 0xFF (NaN for floats) so an output the candidate
    never writes cannot inherit an earlier correct answer: every free block the allocator holds, in
    both of its pools (a scalar loss lives in the small pool, where a bfloat16 answer to the previous
    seed can pass for this seed's: a decoy run once looked right that way), and then a fresh block
    twice the inputs' size, for the memory an output may be given from a new segment."""
    if device != "cuda":
        return
    import torch
    poison_free_blocks()
    size = 2 * sum(v.numel() * v.element_size() for v in inputs if isinstance(v, torch.Tensor)) + (1 << 20)
    torch.empty(size, dtype=torch.uint8, device="cuda").fill_(0xFF)


def poison_free_blocks() -> int:
    """0xFF into every inactive block of the current device's caching allocator (through the CUDA
    runtime torch loaded); the bytes filled, 0 where the runtime cannot be reached."""
    import ctypes

    import torch

    from .timing import cudart
    lib = cudart()
    if lib is None:
        return 0
    device, stream = torch.cuda.current_device(), torch.cuda.current_stream().cuda_stream
    filled = 0
    for segment in torch.cuda.memory_snapshot():
        if segment.get("device", device) != device:
            continue
        address = segment["address"]
        for block in segment["blocks"]:
            start, size = block.get("address", address), block["size"]
            if block["state"] == "inactive" and lib.cudaMemsetAsync(ctypes.c_void_p(start), 0xFF,
                                                                     ctypes.c_size_t(size),
                                                                     ctypes.c_void_p(stream)) == 0:
                filled += size
            address = start + size
    torch.cuda.synchronize()
    return filled


def context_poisoned(device: str) -> bool:
    """After an exception: does the device still work? A CUDA error poisons the context."""
    if device != "cuda":
        return False
    try:
        import torch
        torch.cuda.synchronize()
        torch.ones(1, device="cuda").add_(1).item()
        return False
    except Exception:
        return True


def _raising(exc: BaseException):
    def fn(*args, **kwargs):
        raise exc
    return fn


# --- the steps ----------------------------------------------------------------------------------

class Steps:
    def __init__(self):
        self.job: dict | None = None
        self.fn = None
        self.held: list = []  # what the last answer exported: alive until the next step
        self.pool_key: tuple | None = None  # the timing pool's (shape, dtype, seeds) and input sets
        self.pool_sets: list | None = None
        #: seconds of the worker's start-up before any candidate code, by part (reported by setup;
        #: on 4 H200s a worker's start took 16-19 s where one GPU's took 2-3, cause unmeasured)
        self.start_seconds: dict[str, float] = {}
        self.area = None  # a TransferArea, where the run asks for one (setup's "transfer")

    # setup -----------------------------------------------------------------------------------
    def setup(self, cmd: dict) -> dict:
        import torch
        self.job = cmd["job"]
        self.task, self.backend, self.hw = self.job["task"], self.job["backend"], self.job["hw"]
        self.device = self.hw.device
        if self.device == "cuda":
            t = time.monotonic()
            if cmd.get("untimed"):  # a compile-ahead worker: never timed, its waits need no core
                from .timing import wait_untimed
                wait_untimed()
            torch.cuda.set_device(0)  # creates the process's CUDA context
            self.start_seconds["cuda_init"] = round(time.monotonic() - t, 3)
            # torch.compile in a candidate compiles its kernels here, in this process, not in a pool of
            # subprocesses: a confined worker's subprocesses found no GPU backend ("Could not find an
            # active GPU backend", CUDA-L1's kb_l2_49 on every H100 and H200 run, recorded as the
            # candidate's error), and twelve lanes each starting a pool of compile processes is the
            # host's cores many times over
            import torch._inductor.config as inductor_config
            inductor_config.compile_threads = 1
            from .contracts import use_ieee_float32
            use_ieee_float32()
        if cmd.get("transfer") == "area" and self.device == "cuda":
            from .transfer import TransferArea
            self.area = TransferArea()
        self.snapshot = harness_snapshot()
        self.threads_mark = len(threads_started())
        return {"kind": "ready", "pid": os.getpid(), "start_seconds": dict(self.start_seconds)}

    def reset(self, cmd: dict) -> dict:
        """Everything of the unit let go of, for the next unit's ``setup`` in this process (a trusted
        baseline's worker, kept between units: :mod:`mkbench.engine.kept`): the entry point, the values
        exported, the timing pool, the transfer area (the judge has unmapped it), and the allocator's cache,
        so that an idle worker holds its CUDA context only; its peak statistic starts again."""
        import gc

        import torch
        self.job = self.fn = self.pool_key = self.pool_sets = self.area = None
        self.held = []
        self.start_seconds = {}
        gc.collect()
        reserved = 0
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()
            torch.cuda.ipc_collect()  # blocks a judge mapped through IPC: freed once it let go
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            reserved = int(torch.cuda.memory_reserved())
        return {"kind": "reset", "reserved_bytes": reserved}

    def _export(self, *groups, area: bool = True) -> list[list[dict]]:
        """Descriptors of each group of values (an answer's outputs, its inputs after the call): through
        the worker's transfer area where the run asks for one (``--transfer area``) and ``area``, all groups
        of a step at once so that none overwrites another, else tensor by tensor
        (:func:`mkbench.transfer.export`)."""
        from . import transfer
        flat = [v for g in groups for v in g]
        use_area = self.area is not None and area
        descs = self.area.export_all(flat) if use_area else transfer.export_all(flat)
        out, k = [], 0
        for g in groups:
            out.append(descs[k:k + len(g)])
            k += len(g)
        return out

    def probe(self, cmd: dict) -> dict:
        return {"kind": "probe", "info": probe()}

    def memory(self, cmd: dict) -> dict:
        """The most device memory torch's allocator held in this worker (the engine's memory plan is
        compared with it; said by a process that ran candidate code, so a statistic, never evidence)."""
        from .judge import peak_reserved
        return {"kind": "memory", "peak_bytes": peak_reserved(reset=False)}

    def warm(self, cmd: dict) -> dict:
        """Start-up costs of the traced calls, paid before the unit holds any share of the device; and
        the framework's library handles where the backend asks for them (``Backend.warm_libraries``)."""
        from . import trace as tracing
        tracing.warm_up(self.device)
        if self.device == "cuda" and self.backend.warm_libraries:
            warm_libraries()
        return {"kind": "warm"}

    def overhead(self, cmd: dict) -> dict:
        from .timing import measure_launch_overhead
        return {"kind": "probe", "info": measure_launch_overhead(cmd["hw"])}

    def failure(self, exc: BaseException) -> dict:
        from .errors import CompileError
        tb = traceback.format_exc()
        print(tb, file=sys.stderr, flush=True)  # the unit's log keeps the whole traceback
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
        compile_error = isinstance(exc, CompileError) or (self.job is not None and self.backend.is_compile_error(exc))
        from .sandbox import denied_hack
        hack = short(str(exc)) if isinstance(exc, IntegrityViolation) else denied_hack(exc)
        return {"kind": "failed", "message": short(f"{type(exc).__name__}: {exc}{where}"),
                "traceback": short(tb, 4000), "compile_error": compile_error,
                "hack": hack and short(hack),
                "poisoned": self.job is not None and context_poisoned(self.device)}

    # compile ---------------------------------------------------------------------------------
    def compile(self, cmd: dict) -> dict:
        from .errors import CompileError
        source = self.job["source"]
        try:
            checks = self.backend.compile_checks(self.task, source, self.hw)
        except Exception as exc:  # a broken side check must not cost the main verdict
            checks = {"compile_checks": {"ok": False, "message": short(f"{type(exc).__name__}: {exc}")}}
        checks = {k: {"ok": bool(v.get("ok")), "message": short(str(v.get("message", "")))} for k, v in checks.items()}
        try:
            self.fn = self.backend.compile(self.task, source, self.hw)
        except Exception as exc:
            from .sandbox import denied_hack
            if denied_hack(exc) is None:
                message = str(exc) if isinstance(exc, CompileError) else f"{type(exc).__name__}: {exc}"
                return {"kind": "compiled", "ok": False, "message": short(message), "checks": checks}
            # stopped by confinement on the store, the key, another process...: a hack, not a compile
            # error; the first call raises it again, and failure() reports it as such
            self.fn = _raising(exc)
        self._prebuild()
        failed = self.backend.build_failures()
        if failed:
            checks["candidate's own build"] = {"ok": False, "message": short("; ".join(failed))}
        # Importing the candidate ran its module-level code: a timing function replaced there (directly
        # or through an alias of its module or class) is reported now, before any call or timing could
        # run on it. The lane ends the unit on it.
        tamper = None if self.backend.is_baseline else tampered(self.snapshot, self.threads_mark)
        return {"kind": "compiled", "ok": True, "message": "", "checks": checks, "tamper": tamper}

    def _prebuild(self) -> None:
        """An entry point may carry ``prebuild()``: work its first call would otherwise do while
        the GPU is held (a KernelBench ``ModelNew`` builds its load_inline extension in its
        constructor). The compile step runs outside every GPU lock, so doing it here keeps a minute
        of nvcc from stalling the other lanes. Its failure is not a verdict: the first call repeats
        the work and fails there, as it would have."""
        prebuild = getattr(self.fn, "prebuild", None)
        if callable(prebuild):
            try:
                prebuild()
            except Exception as exc:  # noqa: BLE001 - see the docstring
                print(f"prebuild failed (the first call will repeat it): {type(exc).__name__}: {exc}",
                      file=sys.stderr, flush=True)

    def prewarm(self, cmd: dict) -> dict:
        """Call the candidate once per (shape, dtype) on shape-only inputs with the backend's
        compile-only patch (:meth:`mkbench.backend.Backend.prewarm`): its JIT kernels land in the
        on-disk cache. Only ever asked of a throwaway worker (what the call leaves behind in the
        candidate's module, a buffer kept on the ``meta`` device, must not reach an evaluation).
        A combination that cannot be called so is skipped: its first real call compiles as before."""
        from . import inputs as io
        done, skipped = 0, []
        for shape_name, dtype in cmd["combos"]:
            patch = self.backend.prewarm(self.hw)
            if patch is None:
                break
            try:
                values = io.generate_meta(self.task, self.task.shape(shape_name), dtype)
                with patch:
                    # a backend may want them as something else than meta tensors (the cuda backend: fake
                    # CUDA tensors, since candidates check the device before they build)
                    convert = getattr(patch, "inputs", None)
                    self.backend.run(self.fn, convert(values) if callable(convert) else values)
                done += 1
            except CompiledNotLaunched:  # stopped at its first launch, its build done
                done += 1
            except Exception as exc:  # noqa: BLE001 - see the docstring
                skipped.append(short(f"{shape_name}/{dtype}: {type(exc).__name__}: {exc}", 300))
        print(f"prewarm: {done} combination(s) compiled ahead; {len(skipped)} skipped" +
              "".join(f"\n  {m}" for m in skipped), file=sys.stderr, flush=True)
        return {"kind": "prewarmed", "done": done, "skipped": skipped}

    # one candidate call ----------------------------------------------------------------------
    def _call(self, inputs: tuple, trace: bool, suppress: bool) -> dict:
        """Run the candidate once on ``inputs`` (its own copy), counted, maybe traced; export what the
        judge needs."""
        from . import inputs as io
        from . import trace as tracing
        self.held = []
        poison_allocator(self.device, inputs)
        self.backend.prepare_call(inputs)
        # Only a backend that can suppress its launches is asked to (the decoy check, see engine.steps)
        counter = self.backend.launch_counter(suppress=True) if suppress else self.backend.launch_counter()
        with counter, tracing.make_tracer(self.device, counter, trace and not self.backend.is_baseline) as tracer:
            with tracer.call():
                out = io.normalize(self.backend.run(self.fn, inputs))
            io.sync(self.device)
        tamper = None if self.backend.is_baseline else tampered(self.snapshot, self.threads_mark)
        from .judge import alias_problem
        structure = alias_problem(out, inputs)
        exported, after = self._export([] if structure else out, inputs)
        self.held = [out, inputs]
        return {"kind": "ran", "outputs": exported, "inputs_after": after, "structure": structure,
                "launches": counter.count, "trace": tracer.summary(), "tamper": tamper}

    def run(self, cmd: dict) -> dict:
        from . import inputs as io
        shape = self.task.shape(cmd["shape"])
        warm_s = None
        if cmd.get("warm_seed") is not None:
            warm_s = self._warm_call(shape, cmd["dtype"], cmd["warm_seed"])
        values = io.generate(self.task, shape, cmd["dtype"], cmd["seed"], self.device)
        reply = self._call(values, cmd.get("trace", False), cmd.get("suppress", False))
        return reply if warm_s is None else dict(reply, warm_s=round(warm_s, 4))

    def _warm_call(self, shape, dtype: str, seed: int) -> float:
        """One untraced call on ``seed``'s inputs before the traced one (EvalSettings.trace_call), its
        answer dropped: what a first call of this (shape, dtype) does once (JIT compile, autotuning, a
        lazy build) is done before the profiler starts. Its seconds. A failure is the run's failure: the
        candidate failed on inputs of the task."""
        from . import inputs as io
        t = time.perf_counter()
        values = io.generate(self.task, shape, dtype, seed, self.device)
        self.backend.prepare_call(values)
        try:
            out = self.backend.run(self.fn, values)
            io.sync(self.device)
        except BaseException:
            print(f"the untraced call before the traced one (seed {seed}) failed:", file=sys.stderr, flush=True)
            raise
        del out, values
        return time.perf_counter() - t

    def call(self, cmd: dict) -> dict:
        """A contract's re-run of the candidate on inputs the judge made."""
        from . import transfer
        values = transfer.materialize_all(cmd["args"], self.device)
        return self._call(values, False, False)

    # timing ----------------------------------------------------------------------------------
    # The timed calls (``time``) hold the device exclusively; the answers after them (``answers``)
    # and the traced calls (``trace``) share it with other lanes. All three use one pool of inputs.
    def _arg_sets(self, cmd: dict) -> list:
        """The timing pool of ``cmd``'s (shape, dtype, seeds), made when it is not the one held (one
        pool at a time: a unit's later steps on an earlier combination make it again, from the same
        seeds)."""
        from . import inputs as io
        key = (cmd["shape"], cmd["dtype"], tuple(cmd["seeds"]))
        if self.pool_key != key:
            self.pool_key, self.pool_sets = None, None  # the old pool's memory goes before the new one is made
            shape = self.task.shape(cmd["shape"])
            self.pool_sets = [io.generate(self.task, shape, cmd["dtype"], s, self.device) for s in cmd["seeds"]]
            self.pool_key = key
            io.sync(self.device)
        return self.pool_sets

    def pool(self, cmd: dict) -> dict:
        """Make the timing pool of ``cmd`` now, so that the timed step that follows finds it made:
        making inputs is device work that needs no device of its own (power_iteration's and
        qr_householder's generators run a float64 QR for seconds), and inside the timing hold every
        other lane would wait for it."""
        self._arg_sets(cmd)
        return {"kind": "pooled"}

    def time(self, cmd: dict) -> dict:
        """Time the candidate over the pool of input sets."""
        timing = self.backend.time(self.fn, self._arg_sets(cmd), self.hw, cmd["settings"])
        tamper = None if self.backend.is_baseline else tampered(self.snapshot, self.threads_mark)
        return {"kind": "timed", "timing": timing.as_dict(), "tamper": tamper}

    def answers(self, cmd: dict) -> dict:
        """One more answer per pool entry, after the timed calls: the judge compares them with its
        judgement of the same entries before (a result cache, or stale state, shows as right before
        and wrong after)."""
        from . import inputs as io
        self.held = []
        groups = []
        for args in self._arg_sets(cmd):
            # cloned here: a candidate that writes every answer into one buffer it keeps (honest) would
            # otherwise hand the judge the last answer three times
            out = io.clone_args(io.normalize(self.backend.run(self.fn, args)))
            io.sync(self.device)
            groups += [out, args]
            self.held.append(out)
        # Not through the area: it would hold a copy of every pool entry's outputs and inputs at once (on
        # an H100 main job the workers' peaks went from 0.94 to 1.28 times their plan, and judges ran out
        # of memory), where the area planned for is one call's answer (memory.footprint)
        descs = self._export(*groups, area=False)
        answers = [{"outputs": descs[k], "inputs_after": descs[k + 1]} for k in range(0, len(descs), 2)]
        return {"kind": "answers", "answers": answers, "tamper": tampered(self.snapshot, self.threads_mark)}

    def trace(self, cmd: dict) -> dict:
        """A few calls as the timer makes them (the pool's inputs, one after another), traced: the
        device's view of the timed calls, without the profiler's cost inside the timed span. Run
        after the timed calls, with the device shared again."""
        from . import inputs as io
        from . import trace as tracing
        arg_sets = self._arg_sets(cmd)
        counter = self.backend.launch_counter()
        with counter, tracing.make_tracer(self.device, counter) as tracer:
            for k in range(cmd["calls"]):
                with tracer.call():
                    self.backend.run(self.fn, arg_sets[k % len(arg_sets)])
            io.sync(self.device)
        return {"kind": "traced", "trace": tracer.summary(), "tamper": tampered(self.snapshot, self.threads_mark)}
