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
    return (torch.rand(tuple(shape), generator=gen, dtype=torch.float32,
                       device=gen.device) * (high - low) + low).to(dtype)


def log_uniform(gen: torch.Generator, shape: Sequence[int], low: float, high: float) -> torch.Tensor:
    """float32 values whose log is uniform on [log low, log high]: every binade in the range gets
    the same share, where a plain uniform draw would put almost all values in the top one (special
    functions change regime by magnitude: near-pole offsets, small x, asymptotic x)."""
    return torch.exp(uniform(gen, shape, torch.float32, float(torch.log(torch.tensor(low))),
                             float(torch.log(torch.tensor(high)))))


def randint(gen: torch.Generator, shape: Sequence[int], low: int, high: int,
            dtype: torch.dtype = torch.int64) -> torch.Tensor:
    return torch.randint(low, high, tuple(shape), generator=gen, dtype=torch.int64, device=gen.device).to(dtype)


def seed_from(gen: torch.Generator) -> int:
    """A Python int seed drawn from ``gen`` (for tasks whose op takes an explicit seed)."""
    return int(torch.randint(0, 2**31 - 2, (1,), generator=gen, device=gen.device).item())


def itemsize(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def nbytes(shape: Sequence[int], dtype: torch.dtype) -> int:
    return math.prod(shape) * itemsize(dtype)


#: score-sized matrices an attention reference holds at its peak: scores, the mask's fill, softmax's
#: output and its temporaries, and the contract's bound terms in the judge. Measured with the allocators'
#: peaks on H200s (reports/2026-11-28-kept-workers, calls 39-40): the judges of sdpa_causal and sdpa_gqa held
#: 6.4 float64 score matrices (27.3 GiB), attention_alibi's 4.6-4.9; eager's workers 5.3 and 4.4 float32 ones.
#: Seven covers the most held
SCORE_COPIES = 7


def attention_working_bytes(score_elements: int, dtype: torch.dtype) -> float:
    """An attention reference's intermediates (``Task.working_bytes``): ``SCORE_COPIES`` matrices of the
    ``score_elements`` it materializes at once, at ``dtype`` or float32, whichever is wider (its
    accumulation type)."""
    return float(SCORE_COPIES * score_elements * max(itemsize(dtype), 4))


def total_nbytes(shapes: Sequence[Sequence[int]], dtype: torch.dtype) -> int:
    """Bytes of several tensors of one dtype: the compulsory traffic of an op that reads its
    inputs and writes its outputs once each (inputs, weights, bias, output of a convolution)."""
    return sum(nbytes(s, dtype) for s in shapes)


def fan_in_weight(gen: torch.Generator, shape: Sequence[int], dtype: torch.dtype, fan_in: int,
                  offset: float = 0.1) -> torch.Tensor:
    """Weights at the 1/sqrt(fan_in) init scale, with a mean of ``offset`` / sqrt(fan_in).

    Why: outputs of a fan_in-term dot product stay O(1) at every layer size, so one tolerance
    means the same at every shape; the small nonzero mean keeps the sums from cancelling to
    nothing (a dropped or doubled tap shifts every output)."""
    return randn(gen, shape, dtype, scale=fan_in ** -0.5, offset=offset * fan_in ** -0.5)


def gemm_operands(gen: torch.Generator, a_shape: Sequence[int], b_shape: Sequence[int],
                  dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """The matmul tasks' operands: A ~ N(0.05, 1), B ~ N(-0.02, 0.5^2), each with 0.1% outliers
    8x larger, drawn in that order (A, then B).

    Why: near-zero means make products cancel, so atol (x rms) and rtol both matter; the small
    mean product adds a drift of about K * -1e-3 to every output, so a lost or doubled partial sum
    (split-K, a skipped K tile) is visible everywhere; outliers catch kernels that saturate."""
    a = randn(gen, a_shape, dtype, scale=1.0, offset=0.05, outliers=1e-3, outlier_scale=8.0)
    b = randn(gen, b_shape, dtype, scale=0.5, offset=-0.02, outliers=1e-3, outlier_scale=8.0)
    return a, b


def gemm_flops(m: int, n: int, k: int, batch: int = 1) -> float:
    """2 M N K per product (one multiply and one add per term), times ``batch`` products."""
    return 2.0 * batch * m * n * k


def gemm_nbytes(m: int, k: int, n: int, dtype: torch.dtype, batch: int = 1) -> float:
    """A [M, K] and B [K, N] read once and C [M, N] written once, per batch: the compulsory traffic
    (scratch such as split-K partials is the method's, not the problem's)."""
    return float(batch * (m * k + k * n + m * n) * itemsize(dtype))


def strided_subsample(t: torch.Tensor, k: int) -> torch.Tensor:
    """At most ``k`` values taken at evenly spaced flat positions (all of them when there are
    fewer). Why: statistical tests on a fixed subsample cost the same at every shape, and even
    spacing samples every row rather than the first few."""
    flat = t.flatten()
    if flat.numel() <= k:
        return flat
    return flat[even_positions(flat.numel(), k, flat.device)]


def even_positions(n: int, k: int, device=None) -> torch.Tensor:
    """``k`` (>= 2) evenly spaced indices from 0 to n - 1 inclusive, in exact integer arithmetic.
    Why not linspace: a float32 linspace over 2**27 positions rounds its last point up to n, which
    indexed out of bounds on an H100 (normal_fill's large shape)."""
    return torch.arange(k, dtype=torch.int64, device=device) * (n - 1) // max(k - 1, 1)


def pearson(a: torch.Tensor, b: torch.Tensor, if_constant: float) -> float:
    """Pearson correlation of two equally long vectors; ``if_constant`` where either is constant
    (the caller decides whether a constant stream counts as correlated)."""
    a, b = a - a.mean(), b - b.mean()
    denom = float((a * a).sum().sqrt() * (b * b).sum().sqrt())
    return float((a * b).sum()) / denom if denom > 0 else if_constant


def mx_shared_exponent(blocks: torch.Tensor, emax_elem: int) -> torch.Tensor:
    """OCP MX v1.0 shared exponent per block (last dim): floor(log2(amax)) - emax_elem, clamped
    to [-127, 127]; an all-zero block gives -127. frexp gives floor(log2) exactly:
    amax = m * 2^e with m in [0.5, 1), so floor(log2 amax) = e - 1."""
    amax = blocks.abs().amax(dim=-1)
    _, e = torch.frexp(amax)
    exp = torch.where(amax > 0, e.to(torch.int32) - 1 - emax_elem, torch.full_like(e, -127, dtype=torch.int32))
    return exp.clamp(-127, 127)


def mx_block_scaled(gen: torch.Generator, rows: int, cols: int, block: int) -> torch.Tensor:
    """float32 [rows, cols] for the MX tasks: heavy-tailed values whose block magnitudes spread
    over 2^-12 .. 2^12, so shared exponents differ from block to block, and whose first block of
    row 0 is all zeros (the -127 scale)."""
    x = randn(gen, (rows, cols), torch.float32, scale=1.0, offset=0.1, outliers=3e-3, outlier_scale=25.0)
    block_scale = torch.exp2(uniform(gen, (rows, cols // block), torch.float32, -12.0, 12.0))
    x = (x.reshape(rows, cols // block, block) * block_scale[:, :, None]).reshape(rows, cols)
    x[0, :block] = 0.0
    return x
