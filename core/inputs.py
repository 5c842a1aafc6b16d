"""Task inputs and outputs, the same way in every process: the worker (which hands inputs to the
candidate), the judge (which regenerates them to compute the reference and to see whether the
candidate modified its copy) and ``mkbench validate``. Input generation is deterministic for a
seed, so the judge never needs the worker's word for what the inputs were."""

from __future__ import annotations

import zlib
from typing import Any

import torch

from .task import DTYPES, Shape, Task


def seed_for(run_seed: int, *parts: Any) -> int:
    return zlib.crc32(repr((run_seed,) + parts).encode()) & 0x7FFFFFFF


def generate(task: Task, shape: Shape, dtype_name: str, seed: int, device: str) -> tuple:
    gen = torch.Generator(device=device).manual_seed(seed)
    values = task.make_inputs(shape, DTYPES[dtype_name], gen)
    if not isinstance(values, tuple):
        raise TypeError(f"task {task.name}: make_inputs must return a tuple, got {type(values).__name__}")
    return tuple(v.to(device) if isinstance(v, torch.Tensor) else v for v in values)


class _MetaGenerator(torch.Generator):
    """A generator on the ``meta`` device as far as the task's draws can tell (``taskkit`` draws on
    ``gen.device``): they make shapes, dtypes and strides, and compute nothing."""

    @property
    def device(self) -> torch.device:  # type: ignore[override]
        return torch.device("meta")


def generate_meta(task: Task, shape: Shape, dtype_name: str) -> tuple:
    """The shapes, dtypes and strides of ``generate``'s inputs with no data (``meta`` tensors), made
    in no time whatever the size. Drawn on ``meta`` where the generator allows it: drawn on the CPU,
    a large ill-conditioned matrix (``qr_householder``, ``power_iteration``: a float64 QR per batch)
    took seconds on an idle core and, in a compile-ahead worker on a busy host, 300 s and the compile
    limit, with nothing compiled. A generator that needs values (``.item()``, a size drawn from the
    data) is drawn on the CPU on one thread, as before; one that needs them even there raises."""
    try:
        with torch.device("meta"):
            values = task.make_inputs(shape, DTYPES[dtype_name], _MetaGenerator().manual_seed(0))
    except Exception:  # noqa: BLE001 - values needed: drawn for real below
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # a throwaway worker's draws: no thread pool contending for a busy host
        try:
            with torch.device("meta"):
                values = task.make_inputs(shape, DTYPES[dtype_name], torch.Generator().manual_seed(0))
        finally:
            torch.set_num_threads(threads)
    if not isinstance(values, tuple):
        raise TypeError(f"task {task.name}: make_inputs must return a tuple, got {type(values).__name__}")
    return tuple(v.to("meta") if isinstance(v, torch.Tensor) else v for v in values)


def clone_args(args) -> tuple:
    """A copy of a call's arguments: tensors cloned, everything else shared."""
    return tuple(v.clone() if isinstance(v, torch.Tensor) else v for v in args)


def normalize(out: Any) -> tuple:
    """A candidate's return value as a tuple of outputs."""
    if isinstance(out, (tuple, list)):
        return tuple(out)
    return (out,)


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise-equal tensors (NaN equal to NaN); used to detect mutated inputs."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        # No boolean-mask indexing (``a[~nan_a]``): it builds the index of the selected elements, 8 bytes
        # per dimension per element, which no memory budget counts. On 4 H200s a judge asked for 28.50
        # GiB checking nll_loss_ignore_index's large float32 input (956,301,312 elements x 4 dims x 8 B)
        # and another for 1024 MiB on cumsum's (8192 x 8192 x 2 dims x 8 B), both out of memory. Here
        # every temporary is a bool per element: same NaN positions, equal everywhere else.
        # One value read back (a judge's reads wait for a device every lane shares): the same NaN
        # positions, and equal wherever ``a`` is not NaN.
        nan_a = torch.isnan(a)
        return bool(((nan_a == torch.isnan(b)) & torch.logical_or(a == b, nan_a)).all())
    return bool(torch.equal(a, b))


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()
