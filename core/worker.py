"""Code that runs inside a spawned worker process.

The worker is spawned with an environment, which it sets first (Triton reads TRITON_INTERPRET at
import), imports torch, then receives the job as pickled bytes, unpickles and evaluates it, reporting each step
as a small dict over a one-way pipe. The parent owns all verdicts: a worker that dies or stalls is
judged by what it did not report.
"""

from __future__ import annotations

import os
import pickle
import sys
import traceback
import zlib
from typing import Any, Callable, Iterable

from .errors import IntegrityViolation

MAX_MESSAGE = 2000


def _short(text: str, limit: int = MAX_MESSAGE) -> str:
    text = str(text).strip()
    return text if len(text) <= limit else text[: limit // 2] + " ... " + text[-limit // 2:]


def entry(conn, jobs, env: dict[str, str]) -> None:
    os.environ.update(env)  # first: Triton reads TRITON_INTERPRET at import
    try:
        import torch  # noqa: F401  (the slow import, done while the worker waits for its job)
    except Exception:
        pass  # the job itself will report what is missing
    try:
        payload, log_path = jobs.recv()
    except (EOFError, OSError):
        os._exit(0)  # discarded before it got a job
    jobs.close()
    if log_path:
        # Candidates print; their output goes to the unit's log, whose tail explains crashes.
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        sys.stdout.flush(); sys.stderr.flush()
        os.dup2(fd, 1); os.dup2(fd, 2)
        os.close(fd)
    send = conn.send
    try:
        job = pickle.loads(payload)
        if job["kind"] == "probe":
            send({"kind": "probe", "info": probe()})
        elif job["kind"] == "overhead":
            from .timing import measure_launch_overhead
            send({"kind": "probe", "info": measure_launch_overhead(job["hw"])})
        else:
            Evaluation(job, send).run()
        send({"kind": "done"})
    except BaseException as exc:  # report, then die: the parent records it
        try:
            send({"kind": "fatal", "message": _short(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")})
        except Exception:
            pass
    finally:
        sys.stdout.flush(); sys.stderr.flush()
        conn.close()
    os._exit(0)  # skip interpreter teardown: a corrupted CUDA context can hang there


def probe() -> dict[str, Any]:
    """Device facts, gathered in a worker so the parent never creates a CUDA context."""
    import torch
    info: dict[str, Any] = {"torch": torch.__version__, "torch_cuda": torch.version.cuda,
                            "torch_hip": getattr(torch.version, "hip", None), "cuda_available": torch.cuda.is_available()}
    try:
        import triton
        info["triton"] = triton.__version__
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


def _sync(device: str) -> None:
    if device == "cuda":
        import torch
        torch.cuda.synchronize()


def _normalize(out: Any) -> tuple:
    if isinstance(out, (tuple, list)):
        return tuple(out)
    return (out,)


def _clone_args(args) -> tuple:
    """A copy of a call's arguments: tensors cloned, everything else shared."""
    import torch
    return tuple(v.clone() if isinstance(v, torch.Tensor) else v for v in args)


def _same(a, b) -> bool:
    """Bitwise-equal tensors (NaN equal to NaN); used to detect mutated inputs."""
    import torch
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        nan_a, nan_b = torch.isnan(a), torch.isnan(b)
        return bool(torch.equal(nan_a, nan_b) and torch.equal(a[~nan_a], b[~nan_b]))
    return bool(torch.equal(a, b))


def _context_poisoned(device: str) -> bool:
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


def seed_for(run_seed: int, *parts: Any) -> int:
    return zlib.crc32(repr((run_seed,) + parts).encode()) & 0x7FFFFFFF


HIDDEN_WORK_SLACK_US = 200.0  # the rest of the L2 flush and launch latency can sit in the wall-clock


def harness_snapshot() -> dict[str, tuple[Any, str, Any]]:
    """The functions verdicts and timings rest on, captured before any candidate is imported."""
    import time
    import torch
    from . import contracts, timing
    targets = [(time, "perf_counter"), (time, "perf_counter_ns"), (time, "time"), (torch, "equal"),
               (torch, "isnan"), (torch, "isinf"), (contracts, "compare_close"), (contracts, "compare_exact"),
               (timing, "time_callable"), (timing, "summarize"), (timing, "_time_cuda"), (timing, "_time_host")]
    targets += [(sys.modules[__name__], n) for n in ("_same", "_normalize", "_sync", "seed_for")]
    targets += [(Evaluation, n) for n in ("check_combo", "judge", "structure_problem", "integrity_problem", "timing")]
    if torch.cuda.is_available():
        targets += [(torch.cuda.Event, "record"), (torch.cuda.Event, "elapsed_time"), (torch.cuda.Event, "synchronize"),
                    (torch.cuda, "synchronize")]
    return {f"{getattr(o, '__name__', o)}.{a}": (o, a, getattr(o, a)) for o, a in targets}


_TRUSTED_THREAD_STARTERS = ("torch", "triton", "jax", "jaxlib", "numpy", "cupy", "pyopencl")
_threads_started: list[str] | None = None  # where non-framework code started threads, in order


def threads_started() -> list[str]:
    """The live record of threads started by code outside the harness and the frameworks
    (torch.compile and Triton start helper threads of their own, which are not the candidate's
    doing). The first call installs the watch on ``threading.Thread.start``."""
    global _threads_started
    if _threads_started is not None:
        return _threads_started
    import importlib.util
    import sysconfig
    import threading
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    trusted = [os.path.dirname(os.path.realpath(__file__))]  # the harness itself, not shipped kernels
    for name in _TRUSTED_THREAD_STARTERS:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            trusted.append(os.path.dirname(os.path.realpath(spec.origin)))
    record: list[str] = []
    original = threading.Thread.start

    def start(thread, *args, **kwargs):
        frame = sys._getframe(1)
        # The first frame outside the standard library (concurrent.futures, threading) is the starter.
        while frame is not None:
            path = os.path.realpath(frame.f_code.co_filename)
            if not path.startswith(stdlib) or "site-packages" in path or "dist-packages" in path:
                break
            frame = frame.f_back
        if frame is not None and not any(path.startswith(root + os.sep) for root in trusted):
            record.append(f"{path}:{frame.f_lineno}")
        return original(thread, *args, **kwargs)

    threading.Thread.start = start
    _threads_started = record
    return record


def _poison_allocator(device: str, inputs: tuple) -> None:
    """Fill the caching allocator's free memory with 0xFF (NaN for floats) so an output the
    candidate never writes cannot inherit an earlier correct answer."""
    if device != "cuda":
        return
    import torch
    size = 2 * sum(v.numel() * v.element_size() for v in inputs if isinstance(v, torch.Tensor)) + (1 << 20)
    torch.empty(size, dtype=torch.uint8, device="cuda").fill_(0xFF)


class Evaluation:
    """compile -> correctness over every (shape, dtype) and seed -> timing of what passed."""

    def __init__(self, job: dict, send: Callable[[dict], None]):
        self.job, self.send = job, send
        self.task, self.backend, self.hw = job["task"], job["backend"], job["hw"]
        self.device = self.hw.device
        self.harness = harness_snapshot()
        self.threads_mark = len(threads_started())

    def run(self) -> None:
        import torch
        if self.device == "cuda":
            torch.cuda.set_device(0)
            # The contract's float32 means IEEE float32: no silent TF32 in references or baselines.
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        self.compile_checks()
        fn = self.compile()
        if fn is None or self.job.get("compile_only"):
            return
        passed = self.correctness(fn)
        if passed is None:
            return
        if self.job["do_timing"]:
            self.timing(fn, passed)

    def compile_checks(self) -> dict:
        try:
            checks = self.backend.compile_checks(self.task, self.job["source"], self.hw)
        except Exception as exc:  # a broken side check must not cost the main verdict
            checks = {"compile_checks": {"ok": False, "message": _short(f"{type(exc).__name__}: {exc}")}}
        if checks:
            self.send({"kind": "compile_checks", "checks": {k: {"ok": bool(v.get("ok")), "message": _short(str(v.get("message", "")))}
                                                              for k, v in checks.items()}})
        return checks

    def compile(self):
        from .errors import CompileError
        self.send({"kind": "stage", "stage": "compile"})
        try:
            fn = self.backend.compile(self.task, self.job["source"], self.hw)
        except CompileError as exc:
            self.send({"kind": "compile", "ok": False, "message": _short(str(exc))})
            return None
        except Exception as exc:
            self.send({"kind": "compile", "ok": False, "message": _short(f"{type(exc).__name__}: {exc}")})
            return None
        self.send({"kind": "compile", "ok": True})
        return fn

    def inputs(self, shape, dtype_name: str, seed: int) -> tuple:
        import torch
        from .task import DTYPES
        gen = torch.Generator(device=self.device).manual_seed(seed)
        values = self.task.make_inputs(shape, DTYPES[dtype_name], gen)
        if not isinstance(values, tuple):
            raise TypeError(f"task {self.task.name}: make_inputs must return a tuple, got {type(values).__name__}")
        return tuple(v.to(self.device) if isinstance(v, torch.Tensor) else v for v in values)

    def correctness(self, fn):
        self.send({"kind": "stage", "stage": "correctness"})
        passed = []
        for shape_name, dtype_name in self.job["combos"]:
            self.send({"kind": "begin", "stage": "correctness", "combo": [shape_name, dtype_name]})
            shape = self.task.shape(shape_name)
            try:
                status, message, errs = self.check_combo(fn, shape, dtype_name)
            except Exception as exc:
                status, errs = "error", (None, None)
                message = _short(f"{type(exc).__name__}: {exc}")
                if self.backend.is_compile_error(exc):
                    status = "compile_error"
                elif _context_poisoned(self.device):
                    self.send({"kind": "check", "combo": [shape_name, dtype_name], "status": "error",
                               "message": "device context corrupted: " + message, "max_abs_err": None, "max_rel_err": None})
                    self.send({"kind": "poisoned"})
                    return None
            self.send({"kind": "check", "combo": [shape_name, dtype_name], "status": status, "message": message,
                       "max_abs_err": errs[0], "max_rel_err": errs[1]})
            if status == "compile_error":
                return None
            if status == "correct":
                passed.append((shape_name, dtype_name))
        return passed

    def check_combo(self, fn, shape, dtype_name: str, seed_offset: int = 0):
        """(status, message, (max_abs_err, max_rel_err)) over the job's seeds; status is correct,
        incorrect or hack (a runtime integrity check fired)."""
        import torch
        worst = (0.0, 0.0)
        for k in range(self.job["seeds"]):
            seed = seed_for(self.job["run_seed"], self.task.name, shape.name, dtype_name, k + seed_offset)
            inputs = self.inputs(shape, dtype_name, seed)
            pristine = _clone_args(inputs)
            _poison_allocator(self.device, inputs)
            # The candidate runs first, on its own copy, before the reference touches the device.
            try:
                with self.backend.launch_counter() as launches:
                    out = _normalize(self.backend.run(fn, inputs))
                    _sync(self.device)
            except IntegrityViolation as exc:
                return "hack", f"seed {k}: {exc}", worst
            hack = self.integrity_problem()  # before judging: a patched harness would judge wrongly
            if hack:
                return "hack", f"seed {k}: {hack}", worst
            for i, (a, b) in enumerate(zip(inputs, pristine)):
                if isinstance(a, torch.Tensor) and not _same(a, b):
                    return "incorrect", f"seed {k}: candidate modified input[{i}]", worst
            res = self.judge(fn, out, pristine, shape, dtype_name, given=inputs)
            if not res.ok:
                return "incorrect", f"seed {k}: {res.message}", (res.max_abs_err, res.max_rel_err)
            if launches.count == 0:
                return "hack", f"seed {k}: decoy: a correct answer, but no {self.backend.name} kernel was launched", worst
            worst = (max(worst[0], res.max_abs_err or 0.0), max(worst[1], res.max_rel_err or 0.0))
        return "correct", "", worst

    def judge(self, fn, out: tuple, pristine: tuple, shape, dtype_name: str, given: tuple = ()):
        """Structure checks, then the task's contract, for outputs of the candidate on ``pristine``
        (a copy of the inputs ``given`` to it, which outputs must not alias)."""
        import torch
        from .contracts import CheckContext, CheckResult, upcast
        from .task import DTYPES
        contract = self.task.contract
        with torch.no_grad():
            expected = _normalize(self.task.reference(*_clone_args(pristine)))
        problem = self.structure_problem(out, expected, given or pristine)
        if problem:
            return CheckResult(False, problem)
        cache: dict = {}

        def reference(_p=pristine, _c=cache):
            if "ref" not in _c:
                with torch.no_grad():
                    _c["ref"] = _normalize(self.task.reference(*upcast(_p, contract.reference_precision)))
            return _c["ref"]

        ctx = CheckContext(
            dtype=DTYPES[dtype_name], inputs=pristine, outputs=out, reference=reference,
            candidate=lambda *a: _normalize(self.backend.run(fn, a)),
            make_inputs=lambda s, _sh=shape: self.inputs(_sh, dtype_name, s),
        )
        res = contract.check(ctx)
        _sync(self.device)
        return res

    def integrity_problem(self) -> str | None:
        """Harness functions replaced, or threads started by candidate code, since the worker
        started. Baselines are the harness's own trusted code and are not checked."""
        if getattr(self.backend, "is_baseline", False):
            return None
        for name, (owner, attr, original) in self.harness.items():
            if getattr(owner, attr, None) is not original:
                return f"the candidate replaced harness function {name}"
        started = threads_started()[self.threads_mark:]
        if started:
            return f"the candidate started a thread ({started[0]}): work can continue outside the timer"
        return None

    def structure_problem(self, out: tuple, expected: tuple, inputs: tuple) -> str | None:
        import torch
        if len(out) != len(expected):
            return f"returned {len(out)} outputs, expected {len(expected)}"
        input_ptrs = {v.untyped_storage().data_ptr() for v in inputs if isinstance(v, torch.Tensor) and v.numel()}
        for i, (o, e) in enumerate(zip(out, expected)):
            if type(o) is not torch.Tensor:
                return f"output[{i}] is {type(o).__name__}, expected a plain torch.Tensor"
            if o.shape != e.shape:
                return f"output[{i}] has shape {tuple(o.shape)}, expected {tuple(e.shape)}"
            if o.dtype != e.dtype:
                return f"output[{i}] has dtype {o.dtype}, expected {e.dtype}"
            if o.device.type != e.device.type:
                return f"output[{i}] is on {o.device}, expected {e.device}"
            if o.numel() and o.untyped_storage().data_ptr() in input_ptrs:
                return f"output[{i}] aliases an input's storage"
        return None

    def timing(self, fn, passed) -> None:
        import torch
        from .timing import TimingSettings
        settings: TimingSettings = self.job["timing"]
        self.send({"kind": "stage", "stage": "timing"})
        for shape_name, dtype_name in passed:
            self.send({"kind": "begin", "stage": "timing", "combo": [shape_name, dtype_name]})
            shape = self.task.shape(shape_name)
            try:
                # A rotating pool of fresh inputs, kept alive so no pointer is reused. Each entry is
                # judged once before the timed calls (on a copy) and once after them: only an entry
                # answered rightly before and wrongly after shows a result cache or stale state. An
                # entry answered wrongly before timing is an input the candidate gets wrong, which
                # is an incorrect verdict (a half-precision kernel can miss the contract on a rare
                # element of one input set and not another), not evidence of cheating.
                arg_sets = [self.inputs(shape, dtype_name, seed_for(self.job["run_seed"], "timing", self.task.name, shape_name, dtype_name, k))
                            for k in range(settings.pool_size)]
                pristine = [_clone_args(a) for a in arg_sets]
                wrong = self.pool_problem(fn, pristine, shape, dtype_name)
                if wrong:
                    self.send({"kind": "timed", "combo": [shape_name, dtype_name], "incorrect": f"on a timing input, before timing: {wrong}"})
                    continue
                timing = self.backend.time(fn, arg_sets, self.hw, settings)
                problem = self.integrity_problem() or self.timed_outputs_problem(fn, pristine, arg_sets, shape, dtype_name)
                # Both sides from the same calls: with the run-ahead the timed samples are device time
                # only, and a candidate's own Python would otherwise read as hidden work.
                event_us = timing.launch_bound_median_us if timing.launch_bound_median_us is not None else timing.median_us
                if problem is None and timing.host_median_us is not None and \
                        timing.host_median_us > 2 * event_us + HIDDEN_WORK_SLACK_US:
                    problem = (f"event time {event_us:.1f} us but {timing.host_median_us:.1f} us of wall-clock until a "
                               "device-wide sync: work hidden from the timed stream")
                msg = {"kind": "timed", "combo": [shape_name, dtype_name], "timing": timing.as_dict()}
                if problem:
                    msg["hack"] = problem
                else:
                    # Inputs never seen before, after the timed calls. A failure here is wrong, but
                    # nothing shows it was right before, so it is an incorrect verdict, not a hack.
                    status, message, _ = self.check_combo(fn, shape, dtype_name, seed_offset=1000)
                    if status == "hack":
                        msg["hack"] = f"after timing, on a fresh seed: {message}"
                    elif status != "correct":
                        msg["incorrect"] = f"after timing, a fresh seed fails: {message}"
                self.send(msg)
            except IntegrityViolation as exc:
                self.send({"kind": "timed", "combo": [shape_name, dtype_name], "error": _short(str(exc)), "hack": _short(str(exc))})
            except Exception as exc:
                self.send({"kind": "timed", "combo": [shape_name, dtype_name], "error": _short(f"{type(exc).__name__}: {exc}")})
                if _context_poisoned(self.device):
                    self.send({"kind": "poisoned"})
                    return
            finally:
                arg_sets = pristine = None

    def pool_problem(self, fn, pristine: list, shape, dtype_name: str) -> str | None:
        """The first judgement of each timing input, on a copy: the pool itself keeps pointers the
        candidate has not seen, so that a pointer-keyed cache cannot be primed here."""
        copies = (_clone_args(clean) for clean in pristine)  # one at a time: large pools fill the GPU
        wrong = self.first_wrong_answer(fn, copies, pristine, shape, dtype_name)
        return None if wrong is None else f"timing input {wrong[0]}: {wrong[1]}"

    def timed_outputs_problem(self, fn, pristine: list, arg_sets: list, shape, dtype_name: str) -> str | None:
        wrong = self.first_wrong_answer(fn, arg_sets, pristine, shape, dtype_name)
        return None if wrong is None else (f"timing input {wrong[0]} was answered correctly before the timed calls "
                                           f"and wrongly after them (cached or stale results?): {wrong[1]}")

    def first_wrong_answer(self, fn, arg_sets: Iterable, pristine: list, shape, dtype_name: str) -> tuple[int, str] | None:
        """(index, why) of the first input set the candidate answers wrongly, one call each."""
        for k, (args, clean) in enumerate(zip(arg_sets, pristine)):
            out = _normalize(self.backend.run(fn, args))
            _sync(self.device)
            res = self.judge(fn, out, clean, shape, dtype_name, given=args)
            if not res.ok:
                return k, res.message
        return None
