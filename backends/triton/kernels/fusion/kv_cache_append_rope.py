"""KV-cache append with RoPE: copies of both caches with rows start[b] .. start[b] + T - 1 replaced by
the rotated new keys and the new values (flash_attn_with_kvcache's rotary_cos/rotary_sin path).

The outputs must be new tensors, so the copy of the caches is most of the work: one kernel
writes every output row exactly once and reads each element from exactly one source. A program
owns BLOCK_S consecutive cache rows of one sequence (each row is the Hkv * D elements of one
position, contiguous) for both caches. Per row it decides whether the position is new
(start <= s < start + T): old rows are loaded from the input caches, new rows from k_new / v_new
(the other source's load is masked off, so it costs no bandwidth). The rotate-half rotation of a
new key element at head offset i uses its partner i +/- D/2 in the same head:
y = x cos + sign * x_partner sin (sign -1 in the first half, +1 in the second), in float32 with
cos/sin of position s, rounded once. Copied elements are bit-exact.
"""
import torch
import triton
import triton.language as tl

TILE = 4096  # elements per program: BLOCK_S rows x ROW_PAD


@triton.jit
def _kv_append_rope_kernel(kc_ptr, vc_ptr, kn_ptr, vn_ptr, start_ptr, cos_ptr, sin_ptr, ko_ptr, vo_ptr,
                           SMAX, T, ROW, HALF, BLOCKS_PER_SEQ,
                           stride_cb, stride_cs, stride_nb, stride_nt, stride_ob, stride_os, stride_cp, stride_sp,
                           BLOCK_S: tl.constexpr, ROW_PAD: tl.constexpr):
    b = (tl.program_id(0) // BLOCKS_PER_SEQ).to(tl.int64)
    s = (tl.program_id(0) % BLOCKS_PER_SEQ) * BLOCK_S + tl.arange(0, BLOCK_S)
    e = tl.arange(0, ROW_PAD)
    st = tl.load(start_ptr + b).to(tl.int32)
    s_ok = s < SMAX
    new = s_ok & (s >= st) & (s < st + T)
    e_ok = e < ROW
    old_mask = (s_ok & (new == 0))[:, None] & e_ok[None, :]
    new_mask = new[:, None] & e_ok[None, :]

    # element e of a row: head dimension i = e % (2 HALF); partner i + HALF (first half) or i - HALF
    i = e % (2 * HALF)
    first_half = i < HALF
    partner = tl.where(first_half, e + HALF, e - HALF)
    sign = tl.where(first_half, -1.0, 1.0)
    t = (s - st).to(tl.int64)
    src = kn_ptr + b * stride_nb + t[:, None] * stride_nt
    x = tl.load(src + e[None, :], mask=new_mask, other=0.0).to(tl.float32)
    xp = tl.load(src + partner[None, :], mask=new_mask, other=0.0).to(tl.float32)
    f = tl.where(first_half, i, i - HALF)
    pos = s.to(tl.int64)[:, None]
    c = tl.load(cos_ptr + pos * stride_cp + f[None, :], mask=new_mask, other=0.0).to(tl.float32)
    sn = tl.load(sin_ptr + pos * stride_sp + f[None, :], mask=new_mask, other=0.0).to(tl.float32)
    k_rot = (x * c + sign[None, :] * xp * sn).to(ko_ptr.dtype.element_ty)

    cache_offs = b * stride_cb + s.to(tl.int64)[:, None] * stride_cs + e[None, :]
    out_offs = b * stride_ob + s.to(tl.int64)[:, None] * stride_os + e[None, :]
    k_old = tl.load(kc_ptr + cache_offs, mask=old_mask, other=0.0)
    tl.store(ko_ptr + out_offs, tl.where(new[:, None], k_rot, k_old), mask=s_ok[:, None] & e_ok[None, :])
    v_old = tl.load(vc_ptr + cache_offs, mask=old_mask, other=0.0)
    v_new = tl.load(vn_ptr + b * stride_nb + t[:, None] * stride_nt + e[None, :], mask=new_mask, other=0.0)
    tl.store(vo_ptr + out_offs, tl.where(new[:, None], v_new, v_old), mask=s_ok[:, None] & e_ok[None, :])


def kernel_function(k_cache, v_cache, k_new, v_new, start, cos_table, sin_table):
    B, SMAX, HKV, D = k_cache.shape
    T = k_new.shape[1]
    ROW = HKV * D
    # rows are addressed as [B, S, Hkv * D]: each position's heads must be contiguous, and the
    # two caches (and the two new tensors) must share a layout
    assert k_cache.stride()[2:] == (D, 1) and k_cache.stride() == v_cache.stride()
    assert k_new.stride()[2:] == (D, 1) and k_new.stride() == v_new.stride()
    assert D % 2 == 0 and cos_table.stride(1) == 1 and sin_table.stride(1) == 1
    k_out = torch.empty((B, SMAX, HKV, D), dtype=k_cache.dtype, device=k_cache.device)
    v_out = torch.empty((B, SMAX, HKV, D), dtype=v_cache.dtype, device=v_cache.device)
    if k_out.numel() == 0:
        return k_out, v_out
    ROW_PAD = triton.next_power_of_2(ROW)
    BLOCK_S = max(1, TILE // ROW_PAD)
    blocks_per_seq = triton.cdiv(SMAX, BLOCK_S)
    _kv_append_rope_kernel[(B * blocks_per_seq,)](
        k_cache, v_cache, k_new, v_new, start, cos_table, sin_table, k_out, v_out,
        SMAX, T, ROW, D // 2, blocks_per_seq,
        k_cache.stride(0), k_cache.stride(1), k_new.stride(0), k_new.stride(1), k_out.stride(0), k_out.stride(1),
        cos_table.stride(0), sin_table.stride(0),
        BLOCK_S=BLOCK_S, ROW_PAD=ROW_PAD, num_warps=8,
    )
    return k_out, v_out
