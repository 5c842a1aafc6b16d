"""Three centered RMSprop steps with momentum and L2 weight decay (torch.optim.RMSprop
semantics: centered=True, momentum > 0, maximize=False) from an early-training state.

Inputs: param [N], grads [3, N], square_avg [N], grad_avg [N], momentum_buffer [N], lr, alpha,
eps, weight_decay, momentum. Output: (param, square_avg, grad_avg, momentum_buffer) after the
three steps. Per step, with g the step's gradient:
    g = g + weight_decay * param
    square_avg = alpha * square_avg + (1 - alpha) * g^2
    grad_avg = lerp(grad_avg, g, 1 - alpha)
    avg = sqrt(square_avg - grad_avg^2) + eps
    buf = momentum * buf + g / avg
    param = param - lr * buf
The reference is torch.optim.RMSprop's single-tensor path written out (bit-identical to
torch.optim.RMSprop(foreach=False, centered=True) in float32 on a small example).

The state is that of step 10 from zero-initialized averages (RMSprop has no bias correction):
square_avg is about (1 - alpha^10) E[g^2] ~ 0.1 E[g^2], so each step changes it by ~8%;
grad_avg is the matching average of zero-mean gradients (std ~0.03 g), changed by ~20% per step;
square_avg - grad_avg^2 >= 0.024 E[g^2] by construction (no cancellation to zero). Returning any
output unchanged, or the uncentered variant, fails at every dtype's tolerance.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import RoundingBound
from mkbench.taskkit import nbytes, randn

STEPS = 3
GRAD_SCALE = 1e-3
HYPER = {"lr": 2e-4, "alpha": 0.99, "eps": 1e-8, "weight_decay": 1e-2, "momentum": 0.9}
STATE_STEP = 10


def reference(param, grads, square_avg, grad_avg, momentum_buffer, lr, alpha, eps, weight_decay, momentum):
    param, sq, ga, buf = param.clone(), square_avg.clone(), grad_avg.clone(), momentum_buffer.clone()
    for k in range(grads.shape[0]):
        grad = grads[k].add(param, alpha=weight_decay)
        sq.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        ga.lerp_(grad, 1 - alpha)
        avg = sq.addcmul(ga, ga, value=-1).sqrt_().add_(eps)
        buf.mul_(momentum).addcdiv_(grad, avg)
        param.add_(buf, alpha=-lr)
    return param, sq, ga, buf


def rounding_magnitude(param, grads, square_avg, grad_avg, momentum_buffer, lr, alpha, eps, weight_decay, momentum):
    """Running first-order error analysis of eager, which rounds the result of every op (add_,
    mul_, addcmul, lerp_, sqrt_, addcdiv, each computed in float32 inside) to the task's dtype:
    alongside each value v of the float64 trajectory, e(v) bounds its error in units of u (the
    output dtype's unit roundoff): a rounding adds |v|; a + b carries e(a) + e(b); a * b carries
    |a| e(b) + |b| e(a); sqrt(d) carries e(d) / (2 sqrt d); g / a carries e(g) / a + |g| e(a) / a^2.
    The state is carried three steps, and g / avg amplifies the relative error of avg (~4 u,
    from square_avg's three roundings halved by the sqrt, plus the sqrt and eps roundings) by
    |g / avg|, ~30 for a 10x outlier gradient: the momentum buffer (rms ~5) then carries ~100 u,
    0.4 at bfloat16, twice its atol (0.02 x rms): on an H200 eager bfloat16 missed the default
    tolerance on 3 of 16.8M elements (max error 0.29). Returns e for (param, square_avg,
    grad_avg, momentum_buffer)."""
    p, sq, ga, buf = param, square_avg, grad_avg, momentum_buffer
    ep, esq, ega, ebuf = (torch.zeros_like(p) for _ in range(4))
    for k in range(grads.shape[0]):
        t = weight_decay * p
        g = grads[k] + t
        eg = weight_decay * ep + t.abs() + g.abs()
        sq_a = alpha * sq
        sq = sq_a + (1 - alpha) * g * g
        esq = alpha * esq + sq_a.abs() + 2 * (1 - alpha) * g.abs() * eg + sq.abs()
        ga = ga + (1 - alpha) * (g - ga)
        ega = alpha * ega + (1 - alpha) * eg + ga.abs()
        d = sq - ga * ga
        ed = esq + 2 * ga.abs() * ega + d.abs()
        r = d.sqrt()
        avg = r + eps
        eavg = ed / (2 * r) + r.abs() + avg.abs()
        q = g / avg
        eq = eg / avg + g.abs() * eavg / avg ** 2 + q.abs()
        b_m = momentum * buf
        buf = b_m + q
        ebuf = momentum * ebuf + b_m.abs() + eq + buf.abs()
        p = p - lr * buf
        ep = ep + lr * ebuf + p.abs()
    return ep, esq, ega, ebuf


def make_inputs(shape, dtype, gen):
    n = shape["n"]
    h = HYPER
    bc = 1 - h["alpha"] ** STATE_STEP
    param = randn(gen, (n,), dtype, scale=0.02, offset=0.005)
    grads = randn(gen, (STEPS, n), dtype, scale=GRAD_SCALE, outliers=1e-3, outlier_scale=10.0)
    # EMA of 10 zero-mean gradients from 0: std (1 - alpha) sqrt(sum alpha^2k) ~ 0.03 g
    ga = randn(gen, (n,), torch.float32, scale=0.03 * GRAD_SCALE)
    v = randn(gen, (n,), torch.float32, scale=1.0).square() + 0.25
    sq = ga.square() + v * (bc * GRAD_SCALE ** 2)
    # g / avg is O(3) at this state; its momentum sum is O(5)
    buf = randn(gen, (n,), dtype, scale=5.0, offset=0.2)
    return (param, grads, sq.to(dtype), ga.to(dtype), buf, h["lr"], h["alpha"], h["eps"], h["weight_decay"], h["momentum"])


def flops(shape):
    # per element and step: decay 2, square_avg 4, grad_avg 3, centered sqrt 3, + eps 1,
    # buffer 3, update 2
    return 18.0 * STEPS * shape["n"]


def nbytes_moved(shape, dtype):
    # param, 3 grads and 3 states read; param and 3 states written
    return nbytes((4 + STEPS + 4, shape["n"]), dtype)


TASK = Task(
    name="rmsprop",
    category="optimizer",
    description="three fused centered RMSprop steps with momentum and weight decay (torch.optim.RMSprop) on a flat "
                "parameter; returns (param, square_avg, grad_avg, momentum_buffer)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"n": 1000}, "small"),
        Shape("awkward", {"n": 4097}, "awkward"),
        # param + 3 grads + 3 states read, 4 written: 11 x 64 MiB in float32.
        Shape("large", {"n": 2 ** 24}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    # slack 2: the analysis is first order and counts one rounding per op where eager's float32
    # internals add a few 2^-24 relative; 2x keeps a faithful implementation off the edge. At
    # float32 (u = 2^-24) the allowance is far under what the bf16_compute control misses by.
    contract=RoundingBound(magnitudes=rounding_magnitude, slack=2.0, description=(
        "allclose vs float64 (default tolerances, atol x rms) plus 2 u e per element, e the running first-order "
        "rounding-error bound of each op rounded to the output dtype along the float64 trajectory")),
    flops=flops,
    bytes=nbytes_moved,
)
