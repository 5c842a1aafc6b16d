"""Pack signed int4 values (int8 [N, K] in [-8, 7], K even) two to a byte: out[n, i] =
(v[n, 2i] & 0xF) | ((v[n, 2i+1] & 0xF) << 4) as uint8 [N, K/2], two's complement nibbles, element 2i
in the low nibble.

Memory-bound bit manipulation. The input is read through an int16 view of the int8 tensor (a
reinterpretation, no copy): on a little-endian GPU each int16 holds v[2i] in its low byte and
v[2i+1] in its high byte, so one coalesced 16-bit load per output byte replaces two stride-2
byte loads, and the packed byte is (w & 0x0F) | ((w >> 4) & 0xF0). Each program packs BLOCK
bytes of one row.
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK = 4096


@triton.jit
def _pack_rows(w_ptr, out_ptr, H, COL_BLOCKS, stride_wr, stride_wc, stride_or, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row = (pid // COL_BLOCKS).to(tl.int64)
    cols = (pid % COL_BLOCKS) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < H
    w = tl.load(w_ptr + row * stride_wr + cols * stride_wc, mask=mask, other=0).to(tl.int32)
    packed = (w & 0x0F) | ((w >> 4) & 0xF0)
    tl.store(out_ptr + row * stride_or + cols, packed.to(tl.uint8), mask=mask)


def kernel_function(v):
    N, K = v.shape
    assert K % 2 == 0, "K must be even"
    out = torch.empty((N, K // 2), dtype=torch.uint8, device=v.device)
    if out.numel() == 0:
        return out
    pairs = v.view(torch.int16)  # [N, K/2]: byte 2i low, byte 2i+1 high (little-endian)
    H = K // 2
    BLOCK = min(triton.next_power_of_2(H), MAX_BLOCK)
    col_blocks = triton.cdiv(H, BLOCK)
    _pack_rows[(N * col_blocks,)](pairs, out, H, col_blocks, pairs.stride(0), pairs.stride(1), out.stride(0),
                                  BLOCK=BLOCK, num_warps=4)
    return out
