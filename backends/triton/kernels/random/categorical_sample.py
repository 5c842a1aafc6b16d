import torch
import triton
import triton.language as tl


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def _categorical_kernel(w_ptr, cdf_ptr, smp_ptr, lp_ptr, K, S, seed, stride_w, stride_o,
                        BLOCK_K: tl.constexpr, BLOCK_S: tl.constexpr, NBITS: tl.constexpr):
    # One program per row, inverse-CDF sampling: (1) stream the row once, writing its CDF to a
    # scratch row; (2) per sample, a Philox uniform scaled by the CDF's top, located by a
    # branchless binary search over the scratch row (L2-resident: this program just wrote it).
    row = tl.program_id(0).to(tl.int64)
    w_row = w_ptr + row * stride_w
    cdf_row = cdf_ptr + row * K
    kk = tl.arange(0, BLOCK_K)
    carry = tl.full([], 0.0, tl.float32)
    top = tl.full([], float("-inf"), tl.float32)
    last_nz = tl.full([], -1, tl.int32)
    for start in range(0, K, BLOCK_K):
        offs = start + kk
        mask = offs < K
        w = tl.load(w_row + offs, mask=mask, other=0.0).to(tl.float32)
        c = carry + tl.cumsum(w, axis=0)
        # A float scan is not monotone in general (each prefix has its own summation tree), so a
        # zero weight could see its CDF step up and be sampled. Zero-weight entries instead repeat
        # the running max of the CDF before them: the CDF is then non-decreasing and only steps
        # up at nonzero weights, which is where the search below can land.
        c = tl.where(w > 0, c, float("-inf"))
        c = tl.maximum(tl.associative_scan(c, 0, _max_combine), top)
        tl.store(cdf_row + offs, c, mask=mask)
        carry += tl.sum(w, axis=0)
        top = tl.max(c, axis=0)
        last_nz = tl.maximum(last_nz, tl.max(tl.where(w > 0, offs, -1), axis=0))
    # the search reads CDF entries written by other threads of this program
    tl.debug_barrier()
    ss = tl.arange(0, BLOCK_S)
    for s0 in range(0, S, BLOCK_S):
        s = s0 + ss
        smask = s < S
        # Philox is counter-based: sample (row, s) depends only on (seed, row * S + s)
        target = tl.rand(seed, row * S + s) * top
        # pos = number of CDF entries <= target = first index whose CDF exceeds target; it steps
        # up there, so its weight is nonzero
        pos = tl.zeros([BLOCK_S], dtype=tl.int32)
        for b in tl.static_range(NBITS):
            cand = pos + (1 << (NBITS - 1 - b))
            c = tl.load(cdf_row + cand - 1, mask=smask & (cand <= K), other=float("inf"))
            pos = tl.where(c <= target, cand, pos)
        # u * top can round up to top itself (then pos = K): take the last nonzero category
        idx = tl.maximum(tl.minimum(pos, last_nz), 0)
        w = tl.load(w_row + idx, mask=smask, other=1.0).to(tl.float32)
        lp = tl.log(tl.math.div_rn(w, carry))
        tl.store(smp_ptr + row * stride_o + s, idx.to(tl.int64), mask=smask)
        tl.store(lp_ptr + row * stride_o + s, lp, mask=smask)


def kernel_function(weights, num_samples, seed):
    weights = weights.contiguous()
    R, K = weights.shape
    S = num_samples
    samples = torch.empty((R, S), dtype=torch.int64, device=weights.device)
    logprobs = torch.empty((R, S), dtype=torch.float32, device=weights.device)
    if R == 0 or S == 0:
        return samples, logprobs
    cdf = torch.empty((R, K), dtype=torch.float32, device=weights.device)  # scratch
    BLOCK_K = min(triton.next_power_of_2(K), 4096)
    BLOCK_S = min(triton.next_power_of_2(S), 1024)
    _categorical_kernel[(R,)](weights, cdf, samples, logprobs, K, S, seed, weights.stride(0), samples.stride(0),
                              BLOCK_K=BLOCK_K, BLOCK_S=BLOCK_S, NBITS=K.bit_length(), num_warps=8)
    return samples, logprobs
