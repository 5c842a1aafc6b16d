"""Per-image mean NLL with an ignore label: out[b] = sum over pixels with t != ignore of
-logp[b, t, h, w], divided by the number of such pixels (0 / 0 = NaN for an all-ignored image),
for logp [B, C, H, W] and int64 targets [B, H, W].

A gather plus a per-image reduction over up to 2M pixels, with only B = 24 images: one program
per image would leave most of an H100 idle. So it is a two-pass split reduction:
  1. grid (pixel chunks, B): each program walks CHUNK pixels of one image in BLOCK-wide steps,
     reads the targets (coalesced), gathers logp[b, t, pixel] from plane t (masked for ignored
     pixels), and writes its float32 partial sum and int32 count;
  2. one program per image adds its chunks' partials in a fixed order and divides once
     (deterministic; count 0 gives 0 / 0 = NaN, as torch's 'mean').
int64 offsets: B C H W reaches 956M elements.
"""
import torch
import triton
import triton.language as tl

BLOCK = 1024
CHUNK = 16384  # pixels per program in pass 1: 128 programs per 1024 x 2048 image


@triton.jit
def _nll_partial_kernel(logp_ptr, t_ptr, psum_ptr, pcnt_ptr, C, HW, ignore_index, n_chunks,
                        CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    chunk = tl.program_id(0)
    b = tl.program_id(1).to(tl.int64)
    img = logp_ptr + b * C * HW
    acc = tl.zeros((BLOCK,), tl.float32)
    cnt = tl.zeros((BLOCK,), tl.int32)
    for start in range(chunk * CHUNK, tl.minimum(chunk * CHUNK + CHUNK, HW), BLOCK):
        p = start + tl.arange(0, BLOCK)
        in_img = p < HW
        t = tl.load(t_ptr + b * HW + p, mask=in_img, other=ignore_index)
        keep = in_img & (t != ignore_index)
        lp = tl.load(img + t * HW + p, mask=keep, other=0.0).to(tl.float32)
        acc += -lp
        cnt += keep.to(tl.int32)
    tl.store(psum_ptr + b * n_chunks + chunk, tl.sum(acc, axis=0))
    tl.store(pcnt_ptr + b * n_chunks + chunk, tl.sum(cnt, axis=0))


@triton.jit
def _nll_finish_kernel(psum_ptr, pcnt_ptr, out_ptr, n_chunks, CHUNKS_PAD: tl.constexpr):
    b = tl.program_id(0)
    i = tl.arange(0, CHUNKS_PAD)
    ok = i < n_chunks
    s = tl.sum(tl.load(psum_ptr + b * n_chunks + i, mask=ok, other=0.0), axis=0)
    c = tl.sum(tl.load(pcnt_ptr + b * n_chunks + i, mask=ok, other=0), axis=0)
    tl.store(out_ptr + b, (s / c.to(tl.float32)).to(out_ptr.dtype.element_ty))


def kernel_function(logp, target, ignore_index):
    B, C, H, W = logp.shape
    HW = H * W
    n_chunks = triton.cdiv(HW, CHUNK)
    psum = torch.empty((B, n_chunks), dtype=torch.float32, device=logp.device)
    pcnt = torch.empty((B, n_chunks), dtype=torch.int32, device=logp.device)
    out = torch.empty((B,), dtype=logp.dtype, device=logp.device)
    _nll_partial_kernel[(n_chunks, B)](logp, target, psum, pcnt, C, HW, ignore_index, n_chunks,
                                       CHUNK=CHUNK, BLOCK=BLOCK, num_warps=4)
    _nll_finish_kernel[(B,)](psum, pcnt, out, n_chunks, CHUNKS_PAD=triton.next_power_of_2(n_chunks), num_warps=4)
    return out
