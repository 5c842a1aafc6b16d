"""3x3 conv2d with dilation 2, stride 1, zero padding 2, with bias, NCHW (float32 means IEEE
float32: no TF32).

Implicit GEMM: out[co, p] = sum_k W[co, k] X[k, p] + bias[co], with M = Cout, the GEMM's N = every
output pixel of every image (p -> n, oh, ow), and K = Cin * 9 in the weight's own order
(k -> ci, kh, kw), so the [BLOCK_CO, BLOCK_K] weight tile is a contiguous slice of each weight
row. The [BLOCK_K, BLOCK_P] input tile is gathered on the fly: X[k, p] = x[n, ci, oh + 2 kh - 2,
ow + 2 kw - 2], zero where that falls in the padding (masked load), contiguous along the output
row for each k. tl.dot accumulates in float32 (tensor cores for bfloat16; FMA for IEEE
float32); the bias is added and the result rounded once. Co blocks vary fastest across programs,
so the programs that share an input tile run together and find it in L2. Index math for the
gathers is per K step on BLOCK_K vectors only. int64 image offsets.
"""
import torch
import triton
import triton.language as tl

KSIZE, PAD, DIL = 3, 2, 2


@triton.jit
def _conv2d_igemm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, Cin, H, W, Cout, OH, OW, P, KTOT,
                         KSIZE: tl.constexpr, PAD: tl.constexpr, DIL: tl.constexpr,
                         BLOCK_CO: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_K: tl.constexpr,
                         IEEE: tl.constexpr, UPCAST: tl.constexpr):
    num_co = tl.cdiv(Cout, BLOCK_CO)
    pid_co = tl.program_id(0) % num_co
    pid_p = tl.program_id(0) // num_co
    co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    p = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    co_ok = co < Cout
    p_ok = p < P
    ohw = OH * OW
    n = (p // ohw).to(tl.int64)
    rem = p % ohw
    ih0 = rem // OW - PAD
    iw0 = rem % OW - PAD
    x_img = x_ptr + n * Cin * H * W
    acc = tl.zeros((BLOCK_CO, BLOCK_P), dtype=tl.float32)
    for k0 in range(0, KTOT, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        k_ok = k < KTOT
        ci = k // (KSIZE * KSIZE)
        tap = k % (KSIZE * KSIZE)
        kh = tap // KSIZE
        kw = tap % KSIZE
        w = tl.load(w_ptr + co[:, None] * KTOT + k[None, :], mask=co_ok[:, None] & k_ok[None, :], other=0.0)
        ih = ih0[None, :] + (kh * DIL)[:, None]
        iw = iw0[None, :] + (kw * DIL)[:, None]
        ok = (k_ok[:, None] & p_ok[None, :]) & ((ih >= 0) & (ih < H) & (iw >= 0) & (iw < W))
        x = tl.load(x_img[None, :] + (ci[:, None] * H + ih) * W + iw, mask=ok, other=0.0)
        if UPCAST:
            # Triton interpreter only: its tl.dot mishandles bfloat16 operands; exact fp32 copies.
            acc = tl.dot(w.to(tl.float32), x.to(tl.float32), acc, input_precision="ieee")
        elif IEEE:
            acc = tl.dot(w, x, acc, input_precision="ieee")  # float32: no TF32
        else:
            acc = tl.dot(w, x, acc)
    acc += tl.load(b_ptr + co, mask=co_ok, other=0.0).to(tl.float32)[:, None]
    y_ptrs = y_ptr + (n * Cout * ohw + rem)[None, :] + co[:, None].to(tl.int64) * ohw
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=co_ok[:, None] & p_ok[None, :])


def kernel_function(x, weight, bias):
    N, Cin, H, W = x.shape
    Cout = weight.shape[0]
    OH = H + 2 * PAD - DIL * (KSIZE - 1)
    OW = W + 2 * PAD - DIL * (KSIZE - 1)
    y = torch.empty((N, Cout, OH, OW), dtype=x.dtype, device=x.device)
    P = N * OH * OW
    KTOT = Cin * KSIZE * KSIZE
    ieee = x.dtype == torch.float32
    block_co = 128 if Cout > 64 else max(16, triton.next_power_of_2(Cout))
    block_p = 128
    block_k = 64 if (not ieee and KTOT >= 512) else 32
    grid = (triton.cdiv(Cout, block_co) * triton.cdiv(P, block_p),)
    _conv2d_igemm_kernel[grid](
        x, weight, bias, y, Cin, H, W, Cout, OH, OW, P, KTOT,
        KSIZE=KSIZE, PAD=PAD, DIL=DIL, BLOCK_CO=block_co, BLOCK_P=block_p, BLOCK_K=block_k,
        IEEE=ieee, UPCAST=x.device.type == "cpu" and x.dtype == torch.bfloat16,
        num_warps=8 if block_co * block_p >= 16384 else 4, num_stages=3,
    )
    return y
