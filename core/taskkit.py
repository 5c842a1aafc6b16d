"""Helpers for writing tasks: input generators that are not just rand in [0, 1), byte counts."""

from __future__ import annotations

import math
from typing import Sequence

import torch


def randn(gen: torch.Generator, shape: Sequence[int], dtype: torch.dtype, *, scale: float = 1.0,
          offset: float = 0.0, outliers: float = 0.0, outlier_scale: float = 20.0) -> torch.Tensor:
    """Normal draws scaled and offset, with a fraction ``outliers`` of values ``outlier_scale``
    times larger, then rounded to ``dtype``. Drawn in float32 on the generator's device (the
    worker's device: generating large inputs on a host CPU would dominate a GPU run), so every
    dtype of a shape sees the same values."""
    x = torch.randn(tuple(shape), generator=gen, dtype=torch.float32, device=gen.device) * scale + offset
    if outliers > 0 and x.numel():
        mask = torch.rand(tuple(shape), generator=gen, device=gen.device) < outliers
        x = torch.where(mask, x * outlier_scale, x)
    return x.to(dtype)


def uniform(gen: torch.Generator, shape: Sequence[int], dtype: torch.dtype, low: float, high: float) -> torch.Tensor:
    return (torch.rand(tuple(shape), generator=gen, dtype=torch.float32, device=gen.device) * (high - low) + low).to(dtype)


def randint(gen: torch.Generator, shape: Sequence[int], low: int, high: int, dtype: torch.dtype = torch.int64) -> torch.Tensor:
    return torch.randint(low, high, tuple(shape), generator=gen, dtype=torch.int64, device=gen.device).to(dtype)


def seed_from(gen: torch.Generator) -> int:
    """A Python int seed drawn from ``gen`` (for tasks whose op takes an explicit seed)."""
    return int(torch.randint(0, 2**31 - 2, (1,), generator=gen, device=gen.device).item())


def itemsize(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def nbytes(shape: Sequence[int], dtype: torch.dtype) -> int:
    return math.prod(shape) * itemsize(dtype)
