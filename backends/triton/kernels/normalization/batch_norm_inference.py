import torch
import triton
import triton.language as tl

EPS = 1e-5


@triton.jit
def _bn_inference_kernel(x_ptr, mean_ptr, var_ptr, w_ptr, b_ptr, y_ptr, C, HW, eps, BLOCK: tl.constexpr):
    # Grid: (N * C planes, blocks of H * W). Each program folds its channel's statistics into one
    # scale and shift (in float32) and streams a block of the plane: one multiply-add per element.
    plane = tl.program_id(0)
    c = plane % C
    scale = tl.load(w_ptr + c).to(tl.float32) / tl.sqrt_rn(tl.load(var_ptr + c).to(tl.float32) + eps)
    shift = tl.load(b_ptr + c).to(tl.float32) - tl.load(mean_ptr + c).to(tl.float32) * scale
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    base = plane.to(tl.int64) * HW
    x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + base + offs, (x * scale + shift).to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x, running_mean, running_var, weight, bias):
    x = x.contiguous()
    n, c, h, w = x.shape
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    hw = h * w
    BLOCK = min(triton.next_power_of_2(hw), 2048)
    grid = (n * c, triton.cdiv(hw, BLOCK))
    _bn_inference_kernel[grid](x, running_mean.contiguous(), running_var.contiguous(), weight.contiguous(),
                               bias.contiguous(), y, c, hw, EPS, BLOCK=BLOCK, num_warps=4 if BLOCK <= 1024 else 8)
    return y
