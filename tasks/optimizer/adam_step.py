"""Three Adam steps (torch.optim.Adam semantics: no weight decay, amsgrad=False, maximize=False)
from a mid-training state.

Inputs: param [N], grads [3, N] (the gradient of each step), exp_avg [N], exp_avg_sq [N] (> 0),
step (steps already taken), lr, beta1, beta2, eps. Output: (param, exp_avg, exp_avg_sq) after the
three steps, with bias corrections for steps step+1 .. step+3. The reference below is the update
of torch.optim.Adam's single-tensor path written out; it matches torch.optim.Adam(foreach=False)
to the last bit in float32 and to 1e-16 in float64 on a small example.

The state is drawn consistent with ``step``: exp_avg_sq is about (1 - beta2**step) * E[g^2], as a
real optimizer's second moment is, so the bias-corrected update is about lr per step, the second
moment changes by ~10% per step, and param is at the scale of a typical weight init (std 0.02):
three steps move each weight by several percent, far outside every dtype's tolerance, so returning
the unchanged parameter (or a single step) fails.
"""

import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

STEPS = 3
GRAD_SCALE = 1e-3
HYPER = {"step": 10, "lr": 2e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}


def reference(param, grads, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps):
    param, exp_avg, exp_avg_sq = param.clone(), exp_avg.clone(), exp_avg_sq.clone()
    for k in range(grads.shape[0]):
        grad = grads[k]
        t = step + 1 + k
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** t
        bias_correction2 = 1 - beta2 ** t
        step_size = lr / bias_correction1
        denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(eps)
        param.addcdiv_(exp_avg, denom, value=-step_size)
    return param, exp_avg, exp_avg_sq


def make_inputs(shape, dtype, gen):
    n = shape["n"]
    h = HYPER
    bc2 = 1 - h["beta2"] ** h["step"]
    param = randn(gen, (n,), dtype, scale=0.02, offset=0.005)
    grads = randn(gen, (STEPS, n), dtype, scale=GRAD_SCALE, outliers=1e-3, outlier_scale=10.0)
    exp_avg = randn(gen, (n,), dtype, scale=0.5 * GRAD_SCALE)
    # Positive second moment, spread over a range of magnitudes (0.25 .. ~10 times the mean g^2),
    # carrying the (1 - beta2**step) bias of a real optimizer's state.
    v = randn(gen, (n,), torch.float32, scale=1.0).square() + 0.25
    exp_avg_sq = (v * (bc2 * GRAD_SCALE ** 2)).to(dtype)
    return (param, grads, exp_avg, exp_avg_sq, h["step"], h["lr"], h["beta1"], h["beta2"], h["eps"])


def flops(shape):
    # Per element and step: lerp 3, second moment 4, sqrt 1, bias-correction divide 1, + eps 1,
    # divide 1, step-size multiply 1, subtract 1.
    return 13.0 * STEPS * shape["n"]


def nbytes_moved(shape, dtype):
    n = shape["n"]
    # param, 3 grads, exp_avg, exp_avg_sq read; param, exp_avg, exp_avg_sq written.
    return nbytes((6 + 3, n), dtype)


TASK = Task(
    name="adam_step",
    category="optimizer",
    description="three fused Adam steps (torch.optim.Adam, no weight decay) on a flat parameter from "
                "a mid-training state; returns (param, exp_avg, exp_avg_sq)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"n": 1000}, "small"),
        Shape("awkward", {"n": 4097}, "awkward"),
        # param + 3 grads + 2 states = 6 x 64 MiB = 384 MiB read in fp32.
        Shape("large", {"n": 2 ** 24}, "large"),
    ],
    # bfloat16: param, grads and states all stored in bf16 (the state dtype torch.optim.Adam uses
    # for bf16 params), judged against the float64 Adam of the same bf16 inputs at bf16 tolerance.
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
