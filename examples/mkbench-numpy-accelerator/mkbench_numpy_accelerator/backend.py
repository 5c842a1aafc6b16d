"""The numpy backend: candidates are NumPy functions, run on the host CPU.

mkbench pickles the backend object into a worker process (forked from the fork server) for ``compile``, ``run`` and
``time``, so the class lives at module level and keeps no unpicklable state; the worker re-imports
this module to rebuild it. The "toolchain" (numpy) is imported inside the methods that need it, so
loading the plugin to list it stays cheap.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from mkbench import Backend, Unavailable
from mkbench.candidate import ENTRY_POINT, load_python_candidate, static_entry_problem

# BLAS libraries read their thread count once, when numpy is first imported.
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class NumpyBackend(Backend):
    name = "numpy"
    language = "numpy"
    suffix = ".py"
    candidate_contract = (
        f"One Python file per task at <category>/<task>.py defining a top-level callable `{ENTRY_POINT}` "
        "(or one named after the task). It is called with the task's inputs as positional arguments: "
        "numpy arrays that are zero-copy views of the harness's CPU tensors (writing into one modifies "
        "the input and is judged incorrect) and Python scalars, unchanged. It returns a numpy array, or "
        "a tuple of them in the reference's order, with the reference's shapes and dtypes; each is "
        "wrapped with torch.from_numpy, keeping its dtype, so return float32 for float32 inputs, not "
        "numpy's default float64. NumPy only: no torch calls. bfloat16 cases are skipped (numpy has no "
        "bfloat16 type)."
    )

    # --- parent side: called while planning a run -----------------------------------
    def availability(self, hw):
        if hw.device != "cpu":
            raise Unavailable(f"the numpy backend runs on the host CPU; profile {hw.name} is a {hw.device} device")
        if importlib.util.find_spec("numpy") is None:
            raise Unavailable("the numpy package is not installed")

    def worker_env(self, hw):
        # Set before the worker imports anything: MKBENCH_NUMPY_THREADS=N pins the BLAS thread pool.
        threads = os.environ.get("MKBENCH_NUMPY_THREADS")
        return {var: threads for var in _THREAD_VARIABLES} if threads else {}

    def reference_dir(self):
        return Path(__file__).parent / "kernels"

    def unsupported(self, task, dtype):
        if dtype == "bfloat16":
            return "numpy has no bfloat16 type"
        return None

    def static_problem(self, task, source):
        return static_entry_problem(source, task.name)

    # --- worker side: called in the spawned worker -----------------------------------
    def compile(self, task, source, hw):
        # NumPy has nothing to compile: importing the file is the build, and a file that fails to
        # import, or defines no entry point, raises CompileError with the cause.
        return load_python_candidate(source, task.name)

    def run(self, fn, inputs):
        import torch

        args = [v.numpy() if isinstance(v, torch.Tensor) else v for v in inputs]
        out = fn(*args)
        if isinstance(out, (tuple, list)):
            return tuple(_to_tensor(o, i) for i, o in enumerate(out))
        return _to_tensor(out, 0)

    # time(): the inherited Backend.time calls run() in a perf_counter loop on a CPU profile,
    # conversions included. is_compile_error(): nothing is compiled at call time, so the default
    # (False) stands.


def _to_tensor(value, index):
    import numpy as np
    import torch

    if isinstance(value, np.generic):  # a numpy scalar, e.g. from a full reduction
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"output[{index}] is {type(value).__name__}; a numpy kernel must return numpy arrays")
    if not value.flags.writeable:  # e.g. np.broadcast_to views; torch.from_numpy wants writable memory
        value = value.copy()
    return torch.from_numpy(value)
