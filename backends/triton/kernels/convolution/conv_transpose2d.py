"""conv_transpose2d, kernel 4, stride 2, padding 1, with bias (2x learned upsampling): x [N, Cin,
H, W], weight [Cin, Cout, 4, 4] -> [N, Cout, 2H, 2W] (float32 means IEEE float32: no TF32).

Sub-pixel decomposition: output pixel (2i + ph, 2j + pw) receives exactly 2 x 2 taps, kh = 1 - ph
+ 2a and kw = 1 - pw + 2b (a, b in {0, 1}) from input pixel (i + ph - a, j + pw - b). So each of
the four parity classes (ph, pw) is an ordinary 2x2 convolution, computed as an implicit GEMM:
out[co, p] = sum_k Wp[co, k] X[k, p] + bias[co] with p over that class's N H W output pixels and
K = Cin * 4 (k -> ci, a, b). No multiply by a structural zero, no scatter, no atomics (each
output is written once by one program).
  1. A small kernel repacks the weight into Wp [4, Cout, Cin * 4] (2 MB at the large shape), so
     every [BLOCK_CO, BLOCK_K] weight tile is contiguous along K (the original layout would
     gather it with a 16-element stride).
  2. grid (co blocks x pixel blocks, 4 classes): the [BLOCK_K, BLOCK_P] input tile is gathered
     on the fly (zero outside the image), tl.dot accumulates in float32 (tensor cores for
     bfloat16, FMA for IEEE float32), the bias is added and the result rounded once; stores are
     stride-2 along the output row, the other parity class fills the gaps while the lines are
     still in L2.
int64 image offsets (N Cout 2H 2W = 134M).
"""
import torch
import triton
import triton.language as tl

PACK_BLOCK = 1024


@triton.jit
def _pack_weight_kernel(w_ptr, wp_ptr, Cin, Cout, BLOCK: tl.constexpr):
    # wp[par, co, ci * 4 + a * 2 + b] = w[ci, co, 1 - ph + 2a, 1 - pw + 2b], par = 2 ph + pw
    e = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    K = Cin * 4
    ok = e < 4 * Cout * K
    par = e // (Cout * K)
    co = (e // K) % Cout
    k = e % K
    ci = k // 4
    kh = 1 - par // 2 + 2 * ((k // 2) % 2)
    kw = 1 - par % 2 + 2 * (k % 2)
    v = tl.load(w_ptr + ((ci * Cout + co) * 4 + kh) * 4 + kw, mask=ok, other=0.0)
    tl.store(wp_ptr + e, v, mask=ok)


@triton.jit
def _conv_transpose_igemm_kernel(x_ptr, wp_ptr, b_ptr, y_ptr, Cin, H, W, Cout, P,
                                 BLOCK_CO: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_K: tl.constexpr,
                                 IEEE: tl.constexpr, UPCAST: tl.constexpr):
    par = tl.program_id(1)
    ph = par // 2
    pw = par % 2
    num_co = tl.cdiv(Cout, BLOCK_CO)
    pid_co = tl.program_id(0) % num_co
    pid_p = tl.program_id(0) // num_co
    co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    p = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    co_ok = co < Cout
    p_ok = p < P
    HW = H * W
    n = (p // HW).to(tl.int64)
    i = (p % HW) // W
    j = p % W
    K = Cin * 4
    x_img = x_ptr + n * Cin * HW
    w_par = wp_ptr + par * Cout * K
    acc = tl.zeros((BLOCK_CO, BLOCK_P), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        k_ok = k < K
        ci = k // 4
        a = (k // 2) % 2
        b = k % 2
        w = tl.load(w_par + co[:, None] * K + k[None, :], mask=co_ok[:, None] & k_ok[None, :], other=0.0)
        ih = i[None, :] + (ph - a)[:, None]
        iw = j[None, :] + (pw - b)[:, None]
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
    OW = 2 * W
    pix = (2 * i + ph) * OW + 2 * j + pw
    y_ptrs = y_ptr + (n * Cout * 4 * HW + pix)[None, :] + co[:, None].to(tl.int64) * (4 * HW)
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=co_ok[:, None] & p_ok[None, :])


def kernel_function(x, weight, bias):
    N, Cin, H, W = x.shape
    Cout = weight.shape[1]
    y = torch.empty((N, Cout, 2 * H, 2 * W), dtype=x.dtype, device=x.device)
    K = Cin * 4
    wp = torch.empty((4, Cout, K), dtype=weight.dtype, device=weight.device)
    _pack_weight_kernel[(triton.cdiv(4 * Cout * K, PACK_BLOCK),)](weight, wp, Cin, Cout, BLOCK=PACK_BLOCK, num_warps=4)
    P = N * H * W
    ieee = x.dtype == torch.float32
    block_co = 128 if Cout > 64 else max(16, triton.next_power_of_2(Cout))
    block_p = 128
    block_k = 64 if (not ieee and K >= 512) else 32
    grid = (triton.cdiv(Cout, block_co) * triton.cdiv(P, block_p), 4)
    _conv_transpose_igemm_kernel[grid](
        x, wp, bias, y, Cin, H, W, Cout, P,
        BLOCK_CO=block_co, BLOCK_P=block_p, BLOCK_K=block_k,
        IEEE=ieee, UPCAST=x.device.type == "cpu" and x.dtype == torch.bfloat16,
        num_warps=8 if block_co * block_p >= 16384 else 4, num_stages=3,
    )
    return y
