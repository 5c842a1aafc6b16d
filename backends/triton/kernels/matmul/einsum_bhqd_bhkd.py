"""Attention scores einsum('bhqd,bhkd->bhqk'): for every (batch, head), q [Q, D] times k [K, D]
transposed, a contraction over the head dim D; float32 means IEEE float32 products (no TF32).

A batched tiled tl.dot GEMM: grid axis 1 is the (batch, head) pair, axis 0 the [BLOCK_Q, BLOCK_K]
output tiles of that pair in grouped order. k is read in [BLOCK_D, BLOCK_K] tiles straight from
its [K, D] layout through its strides (the transpose costs nothing: tl.dot takes the tile as it
is loaded), the head dim is consumed in BLOCK_D steps with masks (D = 80 is not a power of two),
and scores accumulate in float32 before one rounding to the output dtype. Any batch, head,
sequence and head-dim strides are accepted. Float32 uses FMA tiles of 128 x 128 x 32; 16-bit
types tensor-core tiles of 128 x 128 x 64 (D <= 128 is at most two steps); a single query row
(decode) gets a 16-row tile.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _scores_kernel(q_ptr, k_ptr, s_ptr, H, SQ, SK, D,
                   sqb, sqh, sqs, sqd, skb, skh, sks, skd,
                   BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                   GROUP_M: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr):
    pid = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = (bh % H).to(tl.int64)
    num_pid_m = tl.cdiv(SQ, BLOCK_Q)
    num_pid_n = tl.cdiv(SK, BLOCK_K)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_q = pid_m * BLOCK_Q + tl.arange(0, BLOCK_Q)
    offs_k = pid_n * BLOCK_K + tl.arange(0, BLOCK_K)
    offs_d = tl.arange(0, BLOCK_D)
    mask_q = offs_q < SQ
    mask_k = offs_k < SK
    q_ptrs = q_ptr + b * sqb + h * sqh + offs_q[:, None].to(tl.int64) * sqs + offs_d[None, :] * sqd
    k_ptrs = k_ptr + b * skb + h * skh + offs_d[:, None] * skd + offs_k[None, :].to(tl.int64) * sks
    acc = tl.zeros((BLOCK_Q, BLOCK_K), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        d_ok = (d0 + offs_d) < D
        a = tl.load(q_ptrs, mask=mask_q[:, None] & d_ok[None, :], other=0.0)
        bt = tl.load(k_ptrs, mask=d_ok[:, None] & mask_k[None, :], other=0.0)
        if UPCAST:
            # Triton interpreter only: its tl.dot multiplies bfloat16 operands as raw uint16 bit
            # patterns; exact float32 copies (bf16 -> fp32 is lossless) give the right products.
            acc = tl.dot(a.to(tl.float32), bt.to(tl.float32), acc, input_precision="ieee")
        elif IEEE:
            acc = tl.dot(a, bt, acc, input_precision="ieee")  # float32: no TF32
        else:
            acc = tl.dot(a, bt, acc)
        q_ptrs += BLOCK_D * sqd
        k_ptrs += BLOCK_D * skd

    s_ptrs = s_ptr + bh.to(tl.int64) * SQ * SK + offs_q[:, None].to(tl.int64) * SK + offs_k[None, :]
    tl.store(s_ptrs, acc.to(s_ptr.dtype.element_ty), mask=mask_q[:, None] & mask_k[None, :])


def kernel_function(q, k):
    B, H, SQ, D = q.shape
    B2, H2, SK, D2 = k.shape
    assert (B, H, D) == (B2, H2, D2), "q and k must share batch, heads and head dim"
    s = torch.empty((B, H, SQ, SK), dtype=q.dtype, device=q.device)
    if s.numel() == 0:
        return s
    assert B * H <= 65535, "(batch, head) pairs run on grid axis 1"
    if q.dtype == torch.float32:
        BLOCK_Q, BLOCK_K, BLOCK_D, warps, stages = 128, 128, 32, 8, 3
    else:
        BLOCK_Q, BLOCK_K, BLOCK_D, warps, stages = 128, 128, 64, 8, 3
    if SQ <= 16:
        BLOCK_Q, BLOCK_K, warps = 16, 64, 4  # decode: one or a few query rows
    grid = (triton.cdiv(SQ, BLOCK_Q) * triton.cdiv(SK, BLOCK_K), B * H)
    _scores_kernel[grid](
        q, k, s, H, SQ, SK, D,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3), k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        BLOCK_Q=BLOCK_Q, BLOCK_K=BLOCK_K, BLOCK_D=BLOCK_D, GROUP_M=8,
        IEEE=q.dtype == torch.float32, UPCAST=q.device.type == "cpu" and q.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    return s
