"""Worker-side plumbing of the Pallas backend: JAX set-up, torch <-> JAX through DLPack, counting
Pallas kernels, classifying failures.

The parent imports this module (for ``env_for``) but calls nothing that imports JAX: there, JAX
would cost start-up time and, on a GPU machine, could create a CUDA context the parent must never
hold. Everything else runs in the worker.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from mkbench.errors import CompileError

# What the worker forces on every pl.pallas_call: True where Pallas can only interpret (a CPU).
INTERPRET = False


@dataclass
class Candidate:
    """A loaded candidate: its entry point, where it came from, and whether kernels that run
    through the Pallas interpreter count as launches here (only where nothing else can run)."""

    fn: Callable[..., Any]
    source: Path | None
    interpret: bool

    def __call__(self, *args):
        return self.fn(*args)


class PallasRunError(Exception):
    """A failure of a candidate call, located in the candidate's file where the traceback says;
    ``compile`` tells the worker whether it was a (JIT) compile failure."""

    def __init__(self, message: str, compile: bool):
        super().__init__(message)
        self.compile = compile


# --- set-up --------------------------------------------------------------------------------

def setup(device: str) -> None:
    """Configure JAX for this worker; idempotent. int64 inputs (indices, targets) must arrive
    as int64 without a copy, which needs x64 mode (JAX_ENABLE_X64 from worker_env, set here too
    in case JAX was imported before the environment was)."""
    global INTERPRET
    import jax
    jax.config.update("jax_enable_x64", True)
    try:  # jax 0.10.2 defaults to the Mosaic GPU lowering; the contract is written for Triton's
        jax.config.update("jax_pallas_use_mosaic_gpu", False)
    except (AttributeError, KeyError, ValueError):  # the flag is gone: nothing to choose
        pass
    INTERPRET = device == "cpu"
    if INTERPRET:
        _install_interpret()
    elif device == "cuda":
        platforms = {d.platform for d in jax.devices()}
        if not platforms & {"gpu", "cuda", "rocm"}:
            raise RuntimeError(f"JAX sees no GPU (devices: {jax.devices()}); install a CUDA build of jax")


def _install_interpret() -> None:
    """Make ``pl.pallas_call`` interpret on a CPU, whatever the candidate passes, so one
    candidate file serves both machines. The public attribute is replaced (candidates are loaded
    after this); the original stays reachable for the lowering check."""
    import jax.experimental.pallas as pl
    if getattr(pl.pallas_call, "__mkbench_original__", None) is not None:
        return
    original = pl.pallas_call

    @functools.wraps(original)
    def pallas_call(*args, **kwargs):
        if INTERPRET:
            kwargs["interpret"] = True
        return original(*args, **kwargs)

    pallas_call.__mkbench_original__ = original
    pl.pallas_call = pallas_call


def load(task_name: str, source: Path, device: str) -> Candidate:
    from mkbench.candidate import load_python_candidate
    setup(device)
    return Candidate(load_python_candidate(source, task_name), Path(source), interpret=device == "cpu")


# --- torch <-> JAX -------------------------------------------------------------------------

def to_jax(value: Any) -> Any:
    """A torch tensor becomes a JAX array on the same memory (DLPack; on a GPU, JAX's stream
    waits for torch's); anything else (Python scalars) passes unchanged."""
    import torch
    if not isinstance(value, torch.Tensor):
        return value
    import jax.dlpack
    if not value.is_contiguous():  # harness inputs are contiguous; JAX arrays carry no strides
        value = value.contiguous()
    return jax.dlpack.from_dlpack(value)


def to_torch(value: Any, index: int):
    import jax
    import torch.utils.dlpack
    if not isinstance(value, jax.Array):
        raise TypeError(f"output[{index}] is {type(value).__name__}; a Pallas candidate returns JAX arrays")
    return torch.utils.dlpack.from_dlpack(value)


def outputs_of(out: Any) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


# --- a call, as the worker makes it ------------------------------------------------------------

class Counter:
    """The launch counter of the block being run, if any (set by PallasLaunchCounter)."""

    active = None


def call(cand: Candidate, inputs: Sequence[Any]):
    args = tuple(to_jax(v) for v in inputs)
    counter = Counter.active
    try:
        out = outputs_of(cand.fn(*args))
        result = tuple(to_torch(o, i) for i, o in enumerate(out))
    except Exception as exc:
        raise located(exc, cand.source) from exc
    if counter is not None:
        counter.count += count_kernels(cand, args)
    return result if len(result) != 1 else result[0]


def poison_jax_allocator(inputs: Sequence[Any]) -> None:
    """Before a checked call (the worker calls it outside the call's trace, which would otherwise
    count XLA's fill as framework work)."""
    _poison_jax_allocator(tuple(to_jax(v) for v in inputs))


def _poison_jax_allocator(args: tuple) -> None:
    """Fill memory JAX's allocator will hand out next with 0xFF, so that an output the kernel
    never writes cannot hold an earlier correct answer (the worker does the same for torch)."""
    import jax
    import jax.numpy as jnp
    size = 2 * sum(a.size * a.dtype.itemsize for a in args if isinstance(a, jax.Array)) + (1 << 20)
    jnp.full((size,), 255, dtype=jnp.uint8).block_until_ready()


# --- counting kernels ------------------------------------------------------------------------

def count_kernels(cand: Candidate, args: tuple) -> int:
    """Pallas kernels in the program the call runs: the candidate is traced (Python scalars
    static, as they arrive) and the live ``pallas_call`` sites of the traced program are counted.
    Tracing reuses JAX's caches, so nothing is recompiled, and the count does not depend on
    whether the call hit a jit cache. A kernel whose result is never used does not count; nor,
    on a GPU, does one run through the interpreter."""
    import jax
    static = tuple(i for i, a in enumerate(args) if not isinstance(a, jax.Array))
    try:
        closed = jax.make_jaxpr(cand.fn, static_argnums=static)(*args)
    except Exception as exc:
        raise PallasRunError(
            f"{_where(exc, cand.source)}: the call succeeded but could not be traced to count its Pallas kernels "
            f"({type(exc).__name__}: {_first_line(exc)}); a candidate must be a traceable JAX function of its "
            "array arguments (no host-side computation on their values)", compile=False) from None
    return live_kernels(closed.jaxpr, count_interpreted=cand.interpret)


def _subjaxprs(params: dict):
    for value in params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            inner = getattr(item, "jaxpr", item)  # ClosedJaxpr -> Jaxpr
            if hasattr(inner, "eqns") and hasattr(inner, "outvars"):
                yield inner


def _is_var(v) -> bool:
    return not hasattr(v, "val")  # Literals carry a value; Vars (and DropVars) do not


def live_kernels(jaxpr, count_interpreted: bool) -> int:
    live = {v for v in jaxpr.outvars if _is_var(v)}
    count = 0
    for eqn in reversed(jaxpr.eqns):
        if not (any(v in live for v in eqn.outvars) or eqn.effects):
            continue
        live.update(v for v in eqn.invars if _is_var(v))
        if eqn.primitive.name == "pallas_call":
            if count_interpreted or not eqn.params.get("interpret"):
                count += 1
            continue  # the kernel body is not a program of its own
        for sub in _subjaxprs(eqn.params):
            count += live_kernels(sub, count_interpreted)
    return count


# --- failures --------------------------------------------------------------------------------

# Frames that only appear while a JAX program is traced, lowered or compiled: an exception raised
# under one of them on the first call is a (JIT) compile failure, not a runtime one.
_COMPILE_FRAMES = {
    "_trace_kernel_to_jaxpr", "trace_to_jaxpr_dynamic", "lower_jaxpr_to_triton_module", "lower_jaxpr_to_triton_ir",
    "pallas_call_lowering", "_pallas_call_lowering", "lower_jaxpr_to_module", "_cached_lowering_to_hlo",
    "lower_sharding_computation", "backend_compile", "backend_compile_and_load", "compile_or_get_cached",
}


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _frames(exc: BaseException):
    for e in _chain(exc):
        tb = e.__traceback__
        while tb is not None:
            yield tb.tb_frame.f_code.co_filename, tb.tb_frame.f_code.co_name, tb.tb_lineno
            tb = tb.tb_next


def is_compile_failure(exc: BaseException) -> bool:
    if isinstance(exc, PallasRunError):
        return exc.compile
    for e in _chain(exc):
        name = type(e).__name__
        if name == "LoweringError" or (isinstance(e, NotImplementedError) and "lowering" in str(e).lower()):
            return True
        if name in ("XlaRuntimeError", "JaxRuntimeError") and any(
                w in str(e) for w in ("ompil", "Triton", "ptxas", "PTX", "Mosaic")):
            return True
    return any(name in _COMPILE_FRAMES for _, name, _ in _frames(exc))


def _where(exc: BaseException, source: Path | None) -> str:
    """file:line of the deepest frame in the candidate's file (JAX attaches the traceback of the
    traced source line to lowering errors), else the file alone."""
    if source is None:
        return "<candidate>"
    path = str(source)
    last = None
    for filename, _, line in _frames(exc):
        if filename == path:
            last = line
    return f"{path}:{last}" if last is not None else path


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def located(exc: Exception, source: Path | None) -> Exception:
    if isinstance(exc, PallasRunError):
        return exc
    return PallasRunError(f"{_where(exc, source)}: {type(exc).__name__}: {exc}", is_compile_failure(exc))


# --- the CUDA lowering check (CPU machines) ------------------------------------------------------

def lower_for_cuda(task, source: Path, roles_skipped: Sequence[str]) -> dict[str, Any]:
    """Lower the candidate for CUDA at every shape (but the skipped roles) and dtype of the task:
    Pallas turns each kernel into Triton IR here, which catches what the interpreter does not
    (primitives the Triton lowering lacks, tiles that are not powers of two). Nothing is compiled
    to PTX or run. The candidate is loaded afresh and JAX's caches are cleared afterwards, so no
    program traced without the interpreter is reused by the run."""
    global INTERPRET
    import jax
    import torch

    from mkbench.candidate import load_python_candidate
    from mkbench.task import DTYPES
    setup("cpu")
    INTERPRET = False
    done = 0
    try:
        fn = load_python_candidate(source, task.name)
        for shape in task.shapes:
            if shape.role in roles_skipped:
                continue
            for dtype in task.dtypes:
                gen = torch.Generator().manual_seed(0)
                inputs = task.make_inputs(shape, DTYPES[dtype], gen)
                specs = tuple(jax.ShapeDtypeStruct(tuple(v.shape), str(v.dtype).removeprefix("torch."))
                              if isinstance(v, torch.Tensor) else v for v in inputs)
                static = tuple(i for i, v in enumerate(specs) if not isinstance(v, jax.ShapeDtypeStruct))
                try:
                    text = jax.jit(fn,
                                   static_argnums=static).trace(*specs).lower(lowering_platforms=("cuda",)).as_text()
                except Exception as exc:
                    return {"ok": False, "message": f"{shape.name}/{dtype}: {located(exc, source)}"}
                if "triton" not in text:
                    return {"ok": False,
                            "message": f"{shape.name}/{dtype}: the lowered program holds no Pallas (Triton) kernel"}
                done += 1
    except CompileError as exc:
        return {"ok": False, "message": str(exc)}
    except Exception as exc:
        return {"ok": False, "message": str(located(exc, source))}
    finally:
        INTERPRET = True
        jax.clear_caches()
    return {"ok": True, "message": f"{done} (shape, dtype) combinations lowered to Triton IR for CUDA by jax "
                                   f"{jax.__version__}; not compiled to PTX, not run"}


def env_for(device: str, vendor: str) -> dict[str, str]:
    env = {
        # torch shares the GPU: JAX must not take 75% of its memory up front.
        "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
        "JAX_ENABLE_X64": "1",
        # Tracebacks keep JAX's frames: they tell compile failures from runtime ones.
        "JAX_TRACEBACK_FILTERING": "off",
        # pallas_call without compiler_params lowers through Triton, as the contract describes
        # (jax 0.10.2 defaults to Mosaic GPU); Mosaic GPU stays one CompilerParams away.
        "JAX_PALLAS_USE_MOSAIC_GPU": "0",
    }
    if device == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
    elif device == "cuda":
        # Named explicitly, so a JAX that cannot reach the GPU fails instead of quietly using the CPU.
        env["JAX_PLATFORMS"] = ("rocm" if vendor == "amd" else "cuda") + ",cpu"
    return env
