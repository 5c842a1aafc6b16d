"""Row-wise random shuffle from an explicit seed: y[r, j] = x[r, perm[r, j]], every row permuted by
its own uniformly random permutation; returns (y, perm int64).

Shuffle by random keys, one pass, everything in registers: each element (r, j) draws a 64-bit
Philox word from (seed, r * n + j), and the row's permutation is the order of its keys (i.i.d.
keys sort into a uniformly random order). The low IDX_BITS of each key are replaced by j, so keys
are distinct and carry their own column, and the remaining >= 47 random bits make the fallback to
column order on equal random parts negligibly rare. Padding lanes (j >= n) get the largest int64,
which real keys (top bit cleared) never reach. The same (seed, x) always gives the same output;
another seed gives another permutation.

Two ways to turn keys into a permutation, by row length:
  * short rows (BLOCK_N <= RANK_MAX_N): the rank of each key, rank_j = #{i : key_i < key_j}, from a
    [BLOCK_R, BLOCK_N, BLOCK_N] comparison in registers, then a scatter y[r, rank_j] = x[r, j],
    perm[r, rank_j] = j. Quadratic, but at n <= 64 it is fewer operations than a sorting network;
  * longer rows: tl.sort of the keys along the row (a bitonic network, O(n log^2 n)); the sorted
    keys' low bits are perm, and y is gathered from x.
Rows are limited to MAX_N elements (sorted in registers).
"""
import torch
import triton
import triton.language as tl

MAX_N = 16384
RANK_MAX_N = 64
TILE = 4096  # keys per program on the sort path: BLOCK_R rows x BLOCK_N columns
RANK_TILE = 16384  # comparisons per program on the rank path: BLOCK_R x BLOCK_N x BLOCK_N


@triton.jit
def _shuffle_rows(x_ptr, y_ptr, perm_ptr, seed, R, n, stride_xr, stride_xc,
                  BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr, IDX_BITS: tl.constexpr, SORT: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_N)
    row_ok = rows < R
    mask = row_ok[:, None] & (cols < n)[None, :]
    counter = rows[:, None] * n + cols[None, :]  # distinct per element (R * n < 2^31)
    hi, lo, _, _ = tl.randint4x(seed, counter)
    hi64 = (hi & 0x7FFFFFFF).to(tl.int64)
    lo64 = ((lo >> IDX_BITS) << IDX_BITS).to(tl.int64)
    key = (hi64 << 32) | lo64 | cols[None, :].to(tl.int64)
    key = tl.where(mask, key, 0x7FFFFFFFFFFFFFFF)
    x_row = x_ptr + rows[:, None].to(tl.int64) * stride_xr
    out_row = rows[:, None].to(tl.int64) * n
    if SORT:
        key = tl.sort(key, dim=1)
        perm = key & (BLOCK_N - 1)
        y = tl.load(x_row + perm * stride_xc, mask=mask)
        tl.store(y_ptr + out_row + cols[None, :], y, mask=mask)
        tl.store(perm_ptr + out_row + cols[None, :], perm, mask=mask)
    else:
        rank = tl.sum((key[:, None, :] < key[:, :, None]).to(tl.int32), axis=2)
        x = tl.load(x_row + cols[None, :] * stride_xc, mask=mask)
        tl.store(y_ptr + out_row + rank, x, mask=mask)
        tl.store(perm_ptr + out_row + rank, tl.broadcast_to(cols[None, :], (BLOCK_R, BLOCK_N)).to(tl.int64), mask=mask)


def kernel_function(x, seed):
    R, n = x.shape
    assert n <= MAX_N, f"rows of up to {MAX_N} elements are sorted in registers"
    assert R * n < 2 ** 31, "Philox counters are 32-bit here"
    y = torch.empty((R, n), dtype=x.dtype, device=x.device)
    perm = torch.empty((R, n), dtype=torch.int64, device=x.device)
    if R * n == 0:
        return y, perm
    BLOCK_N = max(2, triton.next_power_of_2(n))
    sort = BLOCK_N > RANK_MAX_N
    per_row = BLOCK_N if sort else BLOCK_N * BLOCK_N
    BLOCK_R = min(max((TILE if sort else RANK_TILE) // per_row, 1), triton.next_power_of_2(R))
    _shuffle_rows[(triton.cdiv(R, BLOCK_R),)](x, y, perm, seed, R, n, x.stride(0), x.stride(1),
                                              BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N, IDX_BITS=BLOCK_N.bit_length() - 1,
                                              SORT=sort, num_warps=8 if BLOCK_R * per_row >= 4096 else 4)
    return y, perm
