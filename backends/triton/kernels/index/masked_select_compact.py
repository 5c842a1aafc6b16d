"""torch.masked_select(x, mask): the elements of x [R, C] where mask is True, in row-major order,
as a 1-D tensor of length mask.sum().

Stream compaction in three Triton passes over BLOCK-element blocks of the flattened tensors:
  1. count the kept elements of every block (int32);
  2. one program turns the counts into exclusive block offsets (a chunked tl.cumsum with a
     running carry; 32K blocks at the large shape) and the total;
  3. every block re-reads its mask, ranks its kept elements with an in-block exclusive cumsum,
     and writes them to block offset + rank (stable: row-major order is kept).
The output length depends on the data, so the wrapper reads the total back (one 8-byte copy and
a sync, as torch.masked_select does) to allocate the output before pass 3. Offsets are int64.
"""
import torch
import triton
import triton.language as tl

BLOCK = 4096
SCAN_BLOCK = 1024


@triton.jit
def _count_kernel(mask_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = tl.load(mask_ptr + offs, mask=offs < n, other=0).to(tl.int32)
    tl.store(counts_ptr + tl.program_id(0), tl.sum(m, axis=0))


@triton.jit
def _offsets_kernel(counts_ptr, offsets_ptr, total_ptr, n_blocks, SCAN_BLOCK: tl.constexpr):
    lane = tl.arange(0, SCAN_BLOCK)
    carry = tl.zeros((1,), tl.int64)
    for start in range(0, n_blocks, SCAN_BLOCK):
        i = start + lane
        c = tl.load(counts_ptr + i, mask=i < n_blocks, other=0).to(tl.int64)
        incl = tl.cumsum(c, axis=0) + carry
        tl.store(offsets_ptr + i, incl - c, mask=i < n_blocks)
        carry = tl.sum(tl.where(lane == SCAN_BLOCK - 1, incl, 0), axis=0, keep_dims=True)
    tl.store(total_ptr + tl.arange(0, 1), carry)


@triton.jit
def _write_kernel(x_ptr, mask_ptr, offsets_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    keep = tl.load(mask_ptr + offs, mask=ok, other=0).to(tl.int32)
    rank = tl.cumsum(keep, axis=0) - keep
    dst = tl.load(offsets_ptr + tl.program_id(0)) + rank.to(tl.int64)
    tl.store(out_ptr + dst, tl.load(x_ptr + offs, mask=ok), mask=ok & (keep != 0))


def kernel_function(x, mask):
    n = x.numel()
    n_blocks = triton.cdiv(n, BLOCK)
    counts = torch.empty((n_blocks,), dtype=torch.int32, device=x.device)
    offsets = torch.empty((n_blocks,), dtype=torch.int64, device=x.device)
    total = torch.empty((1,), dtype=torch.int64, device=x.device)
    _count_kernel[(n_blocks,)](mask, counts, n, BLOCK=BLOCK, num_warps=8)
    _offsets_kernel[(1,)](counts, offsets, total, n_blocks, SCAN_BLOCK=SCAN_BLOCK, num_warps=4)
    out = torch.empty((int(total.item()),), dtype=x.dtype, device=x.device)
    _write_kernel[(n_blocks,)](x, mask, offsets, out, n, BLOCK=BLOCK, num_warps=8)
    return out
