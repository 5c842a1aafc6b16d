"""Three Lion steps (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms",
Algorithm 2, with decoupled weight decay, as in the reference implementation lion-pytorch) from a
mid-training state.

Inputs: param [N], grads [3, N], exp_avg [N], lr, beta1, beta2, weight_decay. Output:
(param, exp_avg) after the three steps. Per step, with g the step's gradient:
    c = beta1 * exp_avg + (1 - beta1) * g
    param = param * (1 - lr * weight_decay) - lr * sign(c)          (sign(0) = 0)
    exp_avg = beta2 * exp_avg + (1 - beta2) * g

Contract: exp_avg within the dtype's default tolerance of the float64 reference (allclose, atol
x rms) plus twice its running first-order rounding bound (see check; it counts the coefficients'
float32 rounding too: 1 - beta formed from a float32 beta). param likewise, except at positions where sign(c) is decided by rounding: where, at some
step, |c| <= tau * (|beta1 exp_avg| + |(1 - beta1) g|) (all in float64 along the reference
trajectory), the sign may come out either way, and param may differ from the reference by up to
2 lr per such step (plus the tolerance). tau = 1e-5 for float32 (c and exp_avg carry a few
float32 roundings, ~1e-7 relative), 2^-5 for bfloat16 (a bfloat16 implementation rounds exp_avg
after each step and c itself, ~4 x 2^-9 relative). About 1e-5 (float32) / 5% (bfloat16) of the
positions are so exempted; everywhere else a wrong sign is an error of 2 lr, 10% of a weight.

The state is consistent with training: exp_avg is an average of zero-mean gradients (std ~0.07
of the gradient scale), changed by ~8% per step; each step moves a weight (std 0.02) by lr =
1e-3, so returning either output unchanged fails at every dtype's tolerance.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, CheckResult, Custom, compare_close
from mkbench.task import DTYPE_NAMES
from mkbench.taskkit import nbytes, randn

STEPS = 3
GRAD_SCALE = 1e-3
HYPER = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.99, "weight_decay": 0.1}
TAU = {torch.float32: 1e-5, torch.bfloat16: 2.0 ** -5}


def reference(param, grads, exp_avg, lr, beta1, beta2, weight_decay):
    param, exp_avg = param.clone(), exp_avg.clone()
    for k in range(grads.shape[0]):
        grad = grads[k]
        update = exp_avg.mul(beta1).add_(grad, alpha=1 - beta1).sign_()
        param.mul_(1 - lr * weight_decay).add_(update, alpha=-lr)
        exp_avg.mul_(beta2).add_(grad, alpha=1 - beta2)
    return param, exp_avg


SLACK = 2.0  # x the first-order rounding bound: it counts one rounding per op, eager's float32 internals add ~2^-24


def check(ctx):
    param, grads, exp_avg, lr, beta1, beta2, weight_decay = ctx.inputs
    p_out, m_out = ctx.outputs
    p_ref, m_ref = ctx.reference()
    tol = DEFAULT_TOLERANCES[DTYPE_NAMES[ctx.dtype]]
    u = torch.finfo(ctx.dtype).eps / 2
    # Running first-order error analysis of eager, which rounds every op's result to the task's
    # dtype: e(v) bounds v's error in units of u (a rounding adds |v|, a * v carries |a| e(v)).
    #   c = beta1 m + (1 - beta1) g       e(c) = beta1 e(m) + |beta1 m| + |c| + cu (|beta1 m| + |beta1 g|)
    #   param = param (1 - lr wd) - lr s  e(p) = (1 - lr wd) e(p) + |param (1 - lr wd)| + |param'|
    #   m = beta2 m + (1 - beta2) g       e(m) = beta2 e(m) + |beta2 m| + |m'| + cu (|beta2 m| + |beta2 g|)
    # exp_avg cancels where an outlier gradient (10x) meets a state of the other sign, so its
    # error is set by |beta2 m| and the gradient term, not by |m'|: on an H200 eager bfloat16
    # missed the rms-scaled default on 6 of 16.8M exp_avg elements (max error 5e-6, atol 1.4e-6).
    # sign(c) is decided by rounding where |c| <= max(tau (|beta1 m| + |(1 - beta1) g|), SLACK u e(c)).
    # The coefficients are rounded too: a kernel takes beta as a float32 and forms 1 - beta from it
    # (every backend's reference does), so beta m carries |beta m| more and (1 - beta) g carries
    # |beta g| more, in float32's units (cu of the dtype's): fl32(1 - fl32(0.99)) is 16 float32 ulps
    # of relative error off 0.01. The momentum carries that across steps, and where the next step's
    # c cancels to 3e-4 of its terms, the sign comes out the other way: 4 of 16.8M elements of the
    # Triton reference on an H200 (reports/2026-11-28-corpus-scaling, calls 48-49).
    cu = torch.finfo(torch.float32).eps / 2 / u
    m = exp_avg.to(torch.float64)
    p = param.to(torch.float64)
    em, ep = torch.zeros_like(m), torch.zeros_like(m)
    ties = torch.zeros(param.shape, dtype=torch.float64, device=param.device)
    for k in range(grads.shape[0]):
        g = grads[k].to(torch.float64)
        a, b = beta1 * m, (1 - beta1) * g
        ec = beta1 * em + a.abs() + (a + b).abs() + cu * (a.abs() + beta1 * g.abs())
        near = (a + b).abs() <= torch.maximum(TAU[ctx.dtype] * (a.abs() + b.abs()), SLACK * u * ec)
        ties += near.to(torch.float64)
        pd = p * (1 - lr * weight_decay)
        p = pd - lr * torch.sign(a + b)
        ep = (1 - lr * weight_decay) * ep + pd.abs() + p.abs()
        m_b = beta2 * m
        m = m_b + (1 - beta2) * g
        em = beta2 * em + m_b.abs() + m.abs() + cu * (m_b.abs() + beta2 * g.abs())
    res_m = compare_close(m_out, m_ref, tol, "rms", "exp_avg", extra=SLACK * u * em)
    if not res_m.ok:
        return res_m
    free = ties == 0
    res_p = compare_close(p_out[free], p_ref[free], tol, "rms", "param", extra=SLACK * u * ep[free])
    if not res_p.ok:
        return res_p
    s = float(p_ref.to(torch.float64).square().mean().sqrt())
    slack = 2 * lr * ties + tol.atol * s + tol.rtol * p_ref.to(torch.float64).abs() + SLACK * u * ep
    err = (p_out.to(torch.float64) - p_ref.to(torch.float64)).abs()
    bad = ~(err <= slack) & ~free
    if bool(bad.any()):
        return CheckResult(False, f"param: {int(bad.sum())} near-tie positions off by more than 2 lr per tie step")
    return CheckResult(True, f"{int((~free).sum())} near-tie positions exempted", max(res_m.max_abs_err or 0.0, res_p.max_abs_err or 0.0),
                       max(res_m.max_rel_err or 0.0, res_p.max_rel_err or 0.0))


def make_inputs(shape, dtype, gen):
    n = shape["n"]
    h = HYPER
    param = randn(gen, (n,), dtype, scale=0.02, offset=0.005)
    grads = randn(gen, (STEPS, n), dtype, scale=GRAD_SCALE, offset=0.05 * GRAD_SCALE, outliers=1e-3, outlier_scale=10.0)
    # an EMA (beta2 = 0.99) of zero-mean gradients: std sqrt((1 - beta2) / (1 + beta2)) ~ 0.07 g
    exp_avg = randn(gen, (n,), dtype, scale=0.07 * GRAD_SCALE, offset=0.01 * GRAD_SCALE)
    return (param, grads, exp_avg, h["lr"], h["beta1"], h["beta2"], h["weight_decay"])


def flops(shape):
    # per element and step: interpolation 3, sign 1, decay + update 3, EMA 3
    return 10.0 * STEPS * shape["n"]


def nbytes_moved(shape, dtype):
    # param, 3 grads, exp_avg read; param and exp_avg written
    return nbytes((2 + STEPS + 2, shape["n"]), dtype)


TASK = Task(
    name="lion",
    category="optimizer",
    description="three fused Lion steps (sign of the beta1-interpolated momentum, decoupled weight decay, beta2 EMA) on "
                "a flat parameter from a mid-training state; returns (param, exp_avg)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"n": 1000}, "small"),
        Shape("awkward", {"n": 4097}, "awkward"),
        # param + 3 grads + exp_avg read, 2 written: 7 x 64 MiB in float32.
        Shape("large", {"n": 2 ** 24}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, description=(
        "exp_avg: allclose vs float64 (default tolerances, atol x rms) plus 2 u e(m), e the running first-order rounding "
        "bound (with 1 - beta formed in float32); param: likewise (2 u e(p)) except where |c| <= max(tau(|b1 m| + |(1-b1) g|), 2 u e(c)) at some step "
        "(tau 1e-5 fp32, 2^-5 bf16), where up to 2 lr per such step is allowed")),
    flops=flops,
    bytes=nbytes_moved,
)
