"""Worker-side runtime of KernelBench-X tasks: what a task file written by `mkbench import
kernelbench-x --as-tasks` calls in the worker. File generation lives in
:mod:`mkbench.importers.kernelbench_x_generate`, source rewriting in
:mod:`mkbench.importers.kernelbench_x_rewrite`; both run at import time only.

KernelBench-X (github.com/BonnieW05/KernelBenchX) task files hold a PyTorch reference, a line of
146 ``#``, and a test harness ``test_<name>()`` that calls the reference on fixed and random
inputs and returns the outputs collected in a dict. An imported task keeps both parts as files
next to it and runs the harness itself:

* inputs: a one-element int64 seed tensor on the worker's device and ``run_harness(seed, impl)``
  (a Python object: the pipeline passes non-tensor inputs through untouched);
* ``reference(seed, run_harness)`` runs the harness with the reference part's definitions
  (:class:`Harness`, its own instance, never the function handed to a candidate); a candidate
  calls ``run_harness(seed, impl)`` with its own implementation. ``impl`` is one callable (bound
  to the task's primary entry name) or a mapping ``{name: object}`` for every *entry* the harness
  uses: the names the reference part defines and the harness calls, e.g. ``gelu``, an optimizer's
  ``adamw_step`` whose file is ``AdamW.py``, or a class ``SGD`` the harness instantiates;
* the harness runs with torch, ``random`` and numpy seeded from the seed, autograd enabled, in a
  fresh namespace whose ``__file__`` is its copy next to the task; the helper modules it imports
  (KernelBench-X's ``utils/data_utils.py``) are the copies vendored at import time, loaded once
  per device with their ``"cuda"`` literals pointing at the worker's device, and visible under
  their own names in ``sys.modules`` for the duration of the run only;
* its result is flattened into a tuple of tensors (:func:`flatten_results`), which the task's
  contract compares.
"""

from __future__ import annotations

import builtins
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

import torch

from ..pyutil import import_path, module_name_for
from .common import seeded

SEPARATOR = "#" * 146

#: global name that rewritten sources use for the worker's device (set before their code runs)
DEVICE_NAME = "__kbx_device__"
#: global name that rewritten sources call instead of ``torch.cuda.synchronize()``
SYNC_NAME = "__kbx_sync__"


def harness_inputs(gen: torch.Generator, harness: "Harness") -> tuple:
    """The inputs of a harness task: an int64 seed on the generator's device, and a function
    ``run_harness(seed, impl)`` that runs the task's harness with ``impl`` (a new function per
    input set, so a candidate has no handle on the harness object the reference uses)."""
    from ..taskkit import seed_from

    def run_harness(seed, impl):
        return harness.run(impl, seed)
    return (torch.tensor([seed_from(gen)], dtype=torch.int64, device=gen.device), run_harness)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def device_globals(device: torch.device) -> dict[str, Any]:
    """The globals a rewritten source refers to (see :mod:`kernelbench_x_rewrite`)."""
    return {DEVICE_NAME: str(device), SYNC_NAME: lambda *a, **k: sync(device)}


def flatten_results(value: Any, device: torch.device | str) -> tuple:
    """Every value a harness collected, as a flat tuple of plain tensors: dicts by sorted key,
    lists and tuples in order; Python bools/ints/floats/complex become bool/int64/float32/
    complex64 tensors on the device, strings uint8 tensors of their UTF-8 bytes, dtypes their
    name, None an empty tensor, numpy arrays tensors."""
    device = torch.device(device)
    out: list[torch.Tensor] = []

    def walk(v: Any) -> None:
        if isinstance(v, torch.Tensor):
            out.append(v.detach())
        elif isinstance(v, dict):
            for k in sorted(v, key=lambda k: (type(k).__name__, str(k))):
                walk(v[k])
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, bool):
            out.append(torch.tensor(v, dtype=torch.bool, device=device))
        elif isinstance(v, int):
            out.append(torch.tensor(v, dtype=torch.int64, device=device))
        elif isinstance(v, float):
            out.append(torch.tensor(v, dtype=torch.float32, device=device))
        elif isinstance(v, complex):
            out.append(torch.tensor(v, dtype=torch.complex64, device=device))
        elif v is None:
            out.append(torch.zeros(0, dtype=torch.bool, device=device))
        elif isinstance(v, str):
            out.append(torch.tensor(list(v.encode()), dtype=torch.uint8, device=device))
        elif isinstance(v, torch.dtype):
            walk(str(v))
        else:
            import numpy as np
            if isinstance(v, (np.ndarray, np.generic)):
                out.append(torch.as_tensor(np.asarray(v)).to(device))
            else:
                raise TypeError(f"the test harness returned a {type(v).__name__}, which cannot be compared")
    walk(value)
    return tuple(out)


class HelperModules:
    """Helper modules a harness imports (KernelBench-X's ``data_utils``), vendored next to the
    tasks with their device literals rewritten: imported once per device, each with
    ``__kbx_device__`` set to that device."""

    def __init__(self, files: Mapping[str, str | Path] | None = None):
        self.files = {name: Path(path) for name, path in (files or {}).items()}
        self._loaded: dict[str, dict[str, Any]] = {}

    def for_device(self, device: torch.device) -> dict[str, Any]:
        key = str(device)
        if key not in self._loaded:
            modules = {}
            for name, path in self.files.items():
                unique = module_name_for(path, f"mkbench_kbx_helper_{key.replace(':', '_')}")
                modules[name] = import_path(path, unique, preset=device_globals(device))
            self._loaded[key] = modules
        return self._loaded[key]


class ReferenceFunction:
    """The reference part of a KernelBench-X file, imported lazily once per device (its device
    literals may have been rewritten to the global ``__kbx_device__``). ``for_device`` gives the
    task's entries, name -> object."""

    def __init__(self, path: str | Path, stem: str, entries: tuple[str, ...] | None = None):
        self.path, self.stem = Path(path), stem
        self.entries = tuple(entries or (stem,))
        self._by_device: dict[str, dict[str, Any]] = {}

    def for_device(self, device: torch.device) -> dict[str, Any]:
        key = str(device)
        if key not in self._by_device:
            module = import_path(self.path, module_name_for(self.path, f"mkbench_kbx_ref_{key.replace(':', '_')}"),
                                 preset=device_globals(device))
            missing = [n for n in self.entries if not hasattr(module, n)]
            if missing:
                raise ImportError(f"{self.path}: defines no {', '.join(missing)}")
            self._by_device[key] = {n: getattr(module, n) for n in self.entries}
        return self._by_device[key]


class Harness:
    """A KernelBench-X ``test_*()`` harness, run with a given implementation of its entries.

    ``entries``: the names the harness uses that the task's reference defines; ``primary``: the
    one a single callable stands for (default: the first entry). ``helpers``: module name ->
    vendored helper file."""

    def __init__(self, stem: str, test_fn: str, *, test_source: str | None = None,
                 test_path: str | Path | None = None, origin: str | None = None,
                 entries: tuple[str, ...] | None = None, primary: str | None = None,
                 helpers: Mapping[str, str | Path] | None = None):
        if test_source is None and test_path is None:
            raise ValueError("Harness needs test_source or test_path")
        self.stem, self.test_fn, self.origin = stem, test_fn, origin
        self.entries = tuple(entries or (stem,))
        self.primary = primary or self.entries[0]
        self.helpers = HelperModules(helpers)
        self._source, self._path, self._code = test_source, Path(test_path) if test_path else None, None

    @property
    def test_source(self) -> str:
        if self._source is None:
            self._source = self._path.read_text()
        return self._source

    def _compiled(self):
        if self._code is None:
            filename = str(self._path) if self._path else f"<KernelBench-X {self.test_fn}>"
            self._code = compile(self.test_source, filename, "exec")
        return self._code

    def bindings(self, impl: Any, device: torch.device) -> dict[str, Any]:
        """Entry name -> object for one run: a :class:`ReferenceFunction` gives every entry, a
        mapping gives the entries it holds (a missing one fails in the harness, as a prediction
        that does not define it fails in KernelBench-X), anything else stands for the primary."""
        if isinstance(impl, ReferenceFunction):
            return impl.for_device(device)
        if isinstance(impl, Mapping):
            return {name: impl[name] for name in self.entries if name in impl}
        return {self.primary: impl}

    def run(self, impl: Callable[..., Any] | Mapping[str, Any] | ReferenceFunction, seed: torch.Tensor) -> tuple:
        if not isinstance(seed, torch.Tensor):
            raise TypeError(f"a KernelBench-X harness task takes a seed tensor, not {type(seed).__name__}")
        device = seed.device
        bound = self.bindings(impl, device)
        helpers = self.helpers.for_device(device)
        ns: dict[str, Any] = {
            "__name__": f"kbx_harness_{self.stem}", "__builtins__": builtins,
            "__file__": str(self._path) if self._path else (self.origin or "<KernelBench-X harness>"),
            **device_globals(device),
        }
        value = int(seed.reshape(-1)[0].item())
        saved_path = list(sys.path)
        saved_modules = {name: sys.modules.get(name) for name in helpers}
        try:
            sys.modules.update(helpers)
            with seeded(value, device), torch.enable_grad():
                exec(self._compiled(), ns)
                ns.update(bound)  # the implementation under test
                test = ns.get(self.test_fn)
                if not callable(test):
                    raise RuntimeError(f"the harness defines no {self.test_fn}()")
                results = test()
        finally:
            sys.path[:] = saved_path
            for name, previous in saved_modules.items():
                if previous is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = previous
        return flatten_results(results, device)


__all__ = ["DEVICE_NAME", "Harness", "HelperModules", "ReferenceFunction", "SEPARATOR", "SYNC_NAME", "device_globals",
           "flatten_results", "harness_inputs"]
