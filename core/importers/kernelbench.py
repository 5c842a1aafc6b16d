"""Worker-side runtime of KernelBench problems and candidates: what the task files and candidate
wrappers written by `mkbench import kernelbench` call in the worker. Names, categories and file
generation live in :mod:`mkbench.importers.kernelbench_naming` and
:mod:`mkbench.importers.kernelbench_generate` (import time only; the formats are described there).

KernelBench (ScalingIntelligence) problems define ``class Model(nn.Module)`` built as
``Model(*get_init_inputs())`` and called as ``forward(*get_inputs())``; candidates define
``ModelNew`` with the same interface. What this runtime does, as KernelBench's
``eval_kernel_against_ref`` does with its default seed:

* weights: ``torch.manual_seed(42)`` before ``get_init_inputs()`` and again before
  ``Model(*init_inputs)`` (and before ``ModelNew(...)``), built on the CPU, then moved to the
  inputs' device and floating dtype (init-input tensors are moved first); one model per (device,
  dtype), cached. Models stay in training mode, as in KernelBench (in eval mode where the task and
  its candidates were imported with ``--contract cuda-l1``, as CUDA-L1's evaluation puts them:
  ``eval_mode``); ``forward`` runs under ``torch.no_grad()``;
* inputs: ``get_inputs()`` under ``torch.manual_seed(s)`` (``random`` and numpy seeded with ``s``
  too), ``s`` drawn from mkbench's generator, with the worker's device as torch's default device;
  top-level tensors are then moved to the device and floating ones cast to the task dtype (nested
  containers of tensors are passed through unchanged);
* bytes: every input read once and every output written once, from the shapes measured at import
  time (:func:`io_bytes`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Iterable

import torch

from ..pyutil import import_path
from .common import cuda_devices, identifier, seeded

#: KernelBench's default ``seed_num`` in ``eval_kernel_against_ref``: set before
#: ``get_init_inputs()``, before ``Model(...)`` and before ``ModelNew(...)``.
WEIGHT_SEED = 42


def load_problem_module(path: str | Path):
    """Import a KernelBench problem (or any Python file) by path, once per process."""
    return import_path(path, prefix="mkbench_kb_problem")


def device_dtype(inputs: Iterable[Any]) -> tuple[torch.device, torch.dtype]:
    """The first tensor's device (CPU if none) and the first floating tensor's dtype (float32 if none)."""
    device, dtype = None, None
    for v in inputs:
        if isinstance(v, torch.Tensor):
            device = device or v.device
            if dtype is None and v.is_floating_point():
                dtype = v.dtype
    return device or torch.device("cpu"), dtype or torch.float32


def _to(v: Any, device: torch.device, dtype: torch.dtype) -> Any:
    if isinstance(v, torch.Tensor):
        v = v.to(device)
        if v.is_floating_point():
            v = v.to(dtype)
    return v


def build_model(model_cls: type, init_inputs_fn: Callable[[], Any], device: torch.device | str,
                dtype: torch.dtype, seed: int = WEIGHT_SEED, eval_mode: bool = False) -> torch.nn.Module:
    """KernelBench's construction: seed, ``get_init_inputs()`` (tensors moved to device/dtype), seed
    again, ``model_cls(*init_inputs)`` on the CPU, then ``.to(device, dtype)``; ``.eval()`` with
    ``eval_mode``. The global RNG state is restored afterwards."""
    device = torch.device(device)
    with torch.random.fork_rng(devices=cuda_devices(device)), torch.no_grad():
        torch.manual_seed(seed)
        init = [_to(v, device, dtype) for v in init_inputs_fn()]
        torch.manual_seed(seed)
        model = model_cls(*init)
    model = model.to(device=device, dtype=dtype)
    return model.eval() if eval_mode else model


class _ModelCache:
    def __init__(self, model_cls: Callable[[], type], init_inputs_fn: Callable[[], Callable], seed: int,
                 eval_mode: bool = False):
        self._model_cls, self._init_inputs_fn, self.seed = model_cls, init_inputs_fn, seed
        self.eval_mode = eval_mode
        self._models: dict[tuple[str, torch.dtype], torch.nn.Module] = {}

    def prebuild(self) -> None:
        """Construct the model once on the CPU and drop it: what its constructor builds (a
        ``load_inline`` extension, seconds to minutes of nvcc) is then built and cached before the
        first call, which runs while the GPU is held. The first call constructs it again, finding
        the build done."""
        build_model(self._model_cls(), self._init_inputs_fn(), "cpu", torch.float32, self.seed)

    def __call__(self, *inputs):
        device, dtype = device_dtype(inputs)
        key = (str(device), dtype)
        model = self._models.get(key)
        if model is None:
            model = build_model(self._model_cls(), self._init_inputs_fn(), device, dtype, self.seed, self.eval_mode)
            self._models[key] = model
        with torch.no_grad():
            return model(*inputs)


def call_seeded(fn: Callable[[], Any], seed: int, device: torch.device | str) -> Any:
    """``fn()`` with torch, ``random`` and numpy seeded from ``seed`` and ``device`` as torch's
    default device; every global RNG state is restored afterwards."""
    with seeded(seed, device), torch.device(device):
        return fn()


class ProblemRuntime:
    """What a generated task file delegates to: the problem is imported lazily (listing tasks
    does not run problem code), models are built once per (device, dtype)."""

    def __init__(self, source: str | Path, task_name: str, seed: int = WEIGHT_SEED, eval_mode: bool = False):
        self.source, self.task_name, self.seed = Path(source), task_name, seed
        self._module = None
        self._reference = _ModelCache(lambda: self.module.Model, lambda: self.module.get_init_inputs, seed,
                                      eval_mode)

    @property
    def module(self):
        if self._module is None:
            self._module = load_problem_module(self.source)
            for attr in ("Model", "get_inputs", "get_init_inputs"):
                if not hasattr(self._module, attr):
                    raise ImportError(f"{self.source}: KernelBench problem defines no `{attr}`")
        return self._module

    def reference(self, *inputs):
        return self._reference(*inputs)

    def make_inputs(self, shape, dtype: torch.dtype, gen: torch.Generator) -> tuple:
        from ..taskkit import seed_from
        seed = seed_from(gen)
        values = call_seeded(self.module.get_inputs, seed, gen.device)
        return tuple(_to(v, gen.device, dtype) for v in values)


def io_bytes(io: dict | None, dtype: torch.dtype) -> float:
    """Bytes moved according to an I/O description measured at import time
    (:func:`mkbench.importers.kernelbench_generate.measure_io`)."""
    if not io:
        return 0.0
    itemsize = torch.empty((), dtype=dtype).element_size()
    total = 0
    for shape, is_float, own in io["inputs"] + io["outputs"]:
        size = itemsize if is_float else torch.empty((), dtype=getattr(torch, own)).element_size()
        total += math.prod(shape) * size
    return float(total)


def init_inputs_from_source(source: str, label: str) -> Callable[[], Any]:
    """A ``get_init_inputs`` taken from a problem's source text, executed once, lazily, in a
    namespace of its own (candidate wrappers embed the problem this way)."""
    ns: dict[str, Any] = {}

    def get_init_inputs():
        if not ns:
            ns.update(__name__=f"mkbench_kb_problem_{identifier(label)}", __builtins__=__builtins__)
            exec(compile(source, f"<KernelBench problem {label}>", "exec"), ns)
            if "get_init_inputs" not in ns:
                raise ImportError(f"KernelBench problem {label} defines no get_init_inputs")
        return ns["get_init_inputs"]()
    return get_init_inputs


def model_new_kernel_function(model_cls: type | None, init_inputs_fn: Callable[[], Any],
                              seed: int = WEIGHT_SEED, eval_mode: bool = False) -> Callable[..., Any]:
    """The mkbench entry point for a KernelBench candidate: ``ModelNew`` built with the same seed
    and init inputs as the reference's ``Model`` (see :func:`build_model`), once per (device,
    dtype) of the inputs, then ``forward(*inputs)`` under ``torch.no_grad()``."""
    if model_cls is None:
        raise ImportError("the candidate defines no `ModelNew` class (a KernelBench candidate must)")
    if not isinstance(model_cls, type):
        raise ImportError(f"`ModelNew` is a {type(model_cls).__name__}, not a class")
    cache = _ModelCache(lambda: model_cls, lambda: init_inputs_fn, seed, eval_mode)

    def kernel_function(*inputs):
        return cache(*inputs)
    kernel_function.model_cls = model_cls  # type: ignore[attr-defined]
    kernel_function.prebuild = cache.prebuild  # type: ignore[attr-defined]  # see core.worker's compile step
    return kernel_function


#: import-time functions that older callers reach through this module; loaded on first use
#: only, so the worker never imports file generation
_IMPORT_TIME = {"candidate_module_source": "kernelbench_generate", "import_kernelbench": "kernelbench_generate",
                "measure_io": "kernelbench_generate", "infer_category": "kernelbench_naming",
                "task_name_for": "kernelbench_naming"}


def __getattr__(name: str):
    if name in _IMPORT_TIME:
        import importlib
        return getattr(importlib.import_module(f"{__package__}.{_IMPORT_TIME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ProblemRuntime", "WEIGHT_SEED", "build_model", "call_seeded", "device_dtype", "init_inputs_from_source",
           "io_bytes", "load_problem_module", "model_new_kernel_function"]
