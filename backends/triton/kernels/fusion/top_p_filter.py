"""Nucleus (top-p) filter: keep token i iff the softmax mass of tokens with strictly larger logits is < top_p.

No sort. Token i's mass above, G(logit_i) with G(v) = sum of probs of tokens whose logit is > v,
never increases as its logit grows, so the kept set is every token whose logit is at least a
threshold: the smallest value v with G(v) < p. The threshold is searched in the space of
order-preserving integer keys of the logits (the float's bits with the magnitude bits of
negatives flipped; -0.0 and +0.0 share key 0; bfloat16 logits use the top 16 bits, so ties are
exact in the dtype and the search space is 2^16), where it is an exact integer. One program
per row:
1. one streaming pass: running max and sum of exp for the softmax of z = logits / T (float32,
   unrounded), and the row's smallest and largest key;
2. a multi-way bisection: each pass evaluates G at 16 evenly spaced keys of the current
   interval (lo, hi] at once (a [BLOCK, 16] compare-and-sum over the row), and keeps the
   sub-interval where G crosses p, about 17x narrower, until it holds one key (about 8 passes
   for float32 rows, 4 for bfloat16);
3. a write pass: z rounded to the dtype where the key is at least the threshold, -inf elsewhere.
The rule depends only on values, not on an order among equal logits, so tied tokens are kept or
removed together, as the contract requires. All passes read the row again (the large shape's
rows are 0.5 MiB and are partly served from L2); nothing but the output is written.
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK = 1024  # row elements per step (the bisection's compare tile is BLOCK x 16)
NUM_PIVOTS: tl.constexpr = tl.constexpr(16)


@triton.jit
def _order_key(x, SHIFT: tl.constexpr):
    # Monotone integer image of a float32 value: non-negative floats keep their bits, negative
    # ones get their magnitude bits flipped; both zeros map to 0. SHIFT = 16 keeps the bits a
    # bfloat16 has (an arithmetic shift keeps the order).
    bits = x.to(tl.int32, bitcast=True)
    key = bits ^ ((bits >> 31) & 0x7FFFFFFF)
    key = tl.where(x == 0.0, 0, key)
    return (key >> SHIFT).to(tl.int64)


@triton.jit
def _top_p_kernel(x_ptr, temp_ptr, p_ptr, y_ptr, V, stride_xb, stride_xv, stride_yb,
                  SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xb
    y_row = y_ptr + row * stride_yb
    inv_t = 1.0 / tl.load(temp_ptr + row).to(tl.float32)
    top_p = tl.load(p_ptr + row).to(tl.float32)
    cols = tl.arange(0, BLOCK)

    x0 = tl.load(x_row).to(tl.float32)
    m = x0 * inv_t
    z_sum = 0.0
    k_min = _order_key(x0, SHIFT)
    k_max = k_min
    for start in range(0, V, BLOCK):
        offs = start + cols
        ok = offs < V
        x = tl.load(x_row + offs * stride_xv, mask=ok, other=0.0).to(tl.float32)
        z = x * inv_t
        m_new = tl.maximum(m, tl.max(tl.where(ok, z, float("-inf")), axis=0))
        z_sum = z_sum * tl.exp(m - m_new) + tl.sum(tl.where(ok, tl.exp(z - m_new), 0.0), axis=0)
        m = m_new
        key = _order_key(x, SHIFT)
        k_min = tl.minimum(k_min, tl.min(tl.where(ok, key, k_min), axis=0))
        k_max = tl.maximum(k_max, tl.max(tl.where(ok, key, k_max), axis=0))
    inv_sum = 1.0 / z_sum

    # Invariant: the threshold key lies in (lo, hi]; G(hi) = mass above the row max = 0 < p.
    lo = k_min - 1
    hi = k_max
    j = tl.arange(0, NUM_PIVOTS) + 1
    while hi - lo > 1:
        pivots = lo + (hi - lo) * j // (NUM_PIVOTS + 1)
        mass = tl.zeros((NUM_PIVOTS,), dtype=tl.float32)
        for start in range(0, V, BLOCK):
            offs = start + cols
            ok = offs < V
            x = tl.load(x_row + offs * stride_xv, mask=ok, other=0.0).to(tl.float32)
            prob = tl.where(ok, tl.exp(x * inv_t - m) * inv_sum, 0.0)
            above = _order_key(x, SHIFT)[:, None] > pivots[None, :]
            mass += tl.sum(tl.where(above, prob[:, None], 0.0), axis=0)
        hi = tl.minimum(hi, tl.min(tl.where(mass < top_p, pivots, hi), axis=0))
        lo = tl.maximum(lo, tl.max(tl.where(mass < top_p, lo, pivots), axis=0))

    for start in range(0, V, BLOCK):
        offs = start + cols
        ok = offs < V
        x = tl.load(x_row + offs * stride_xv, mask=ok, other=0.0).to(tl.float32)
        y = tl.where(_order_key(x, SHIFT) >= hi, x * inv_t, float("-inf"))
        tl.store(y_row + offs, y.to(y_ptr.dtype.element_ty), mask=ok)


def kernel_function(logits, temperature, top_p):
    B, V = logits.shape
    assert logits.dtype in (torch.float32, torch.bfloat16), "order keys are defined for float32 and bfloat16 logits"
    out = torch.empty((B, V), dtype=logits.dtype, device=logits.device)
    if out.numel() == 0:
        return out
    BLOCK = min(triton.next_power_of_2(V), MAX_BLOCK)
    _top_p_kernel[(B,)](logits, temperature, top_p, out, V, logits.stride(0), logits.stride(1), out.stride(0),
                        SHIFT=16 if logits.dtype == torch.bfloat16 else 0, BLOCK=BLOCK, num_warps=8)
    return out
