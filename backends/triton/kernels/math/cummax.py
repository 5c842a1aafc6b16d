"""torch.cummax(x, dim=-1) of [R, C] -> (values, int64 indices), with torch's tie and NaN rules.

Each element becomes one int64 key: the float32 value's bits mapped to an order-preserving signed
integer (negative floats have their magnitude bits flipped; every NaN is canonicalised to the
positive quiet NaN, which then ranks above +inf; -0 is folded into +0) in the high 32 bits, its
column in the low 32. The running maximum of the keys is then exactly torch's cummax: a larger
value wins; among equal values the later column wins (ties report the last index, as x >= max
moves it); a NaN wins against every number and the latest NaN against earlier ones, so NaN is
sticky with the index of the latest NaN. Values come back from the key's bits (exact).
Each program scans BLOCK_R rows block by block: tl.associative_scan with a max combine inside the
block (a log-depth warp-shuffle scan on a GPU, memory-bound overall), then the running key of the
blocks before it, carried per row. Triton has no built-in max-scan, so this custom combine runs
element by element in the CPU interpreter (about 2 s per 64K elements there); on a GPU it is one
pass over the data.
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK_C = 1024
TILE = 2048  # int64 keys per tile: BLOCK_R x BLOCK_C


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def _cummax_kernel(x_ptr, v_ptr, i_ptr, R, C, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < R
    cols = tl.arange(0, BLOCK_C)
    base = rows[:, None].to(tl.int64) * C
    carry = tl.full((BLOCK_R,), -9223372036854775807 - 1, tl.int64)
    for start in range(0, C, BLOCK_C):
        offs = start + cols
        mask = row_ok[:, None] & (offs < C)[None, :]
        x = tl.load(x_ptr + base + offs[None, :], mask=mask, other=float("-inf")).to(tl.float32)
        bits = x.to(tl.int32, bitcast=True)
        bits = tl.where((bits & 0x7FFFFFFF) == 0, 0, bits)  # -0 -> +0 (a bit test: no FTZ compare)
        bits = tl.where(x != x, 0x7FC00000, bits)
        key32 = tl.where(bits >= 0, bits, bits ^ 0x7FFFFFFF)
        key = (key32.to(tl.int64) << 32) | offs[None, :].to(tl.int64)
        run = tl.maximum(tl.associative_scan(key, 1, _max_combine), carry[:, None])
        out32 = (run >> 32).to(tl.int32)
        vbits = tl.where(out32 >= 0, out32, out32 ^ 0x7FFFFFFF)
        value = vbits.to(tl.float32, bitcast=True)
        tl.store(v_ptr + base + offs[None, :], value.to(v_ptr.dtype.element_ty), mask=mask)
        tl.store(i_ptr + base + offs[None, :], run & 0x7FFFFFFF, mask=mask)  # column < 2^31
        carry = tl.max(run, axis=1)


def kernel_function(x):
    R, C = x.shape
    values = torch.empty_like(x)
    indices = torch.empty((R, C), dtype=torch.int64, device=x.device)
    block_c = min(triton.next_power_of_2(C), MAX_BLOCK_C)
    block_r = min(max(TILE // block_c, 1), triton.next_power_of_2(R))
    _cummax_kernel[(triton.cdiv(R, block_r),)](x, values, indices, R, C, BLOCK_R=block_r, BLOCK_C=block_c,
                                               num_warps=4)
    return values, indices
