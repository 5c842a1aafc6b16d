"""Three AdamW steps (torch.optim.AdamW semantics: decoupled weight decay, amsgrad=False,
maximize=False) from a mid-training state, with Llama-style hyperparameters (betas 0.9 / 0.95,
weight decay 0.1).

Inputs: param [N], grads [3, N], exp_avg [N], exp_avg_sq [N] (> 0), step (steps already taken),
lr, beta1, beta2, eps, weight_decay. Output: (param, exp_avg, exp_avg_sq) after the three steps.
Per step t = step + 1 .. step + 3:
    param = param * (1 - lr * weight_decay)
    exp_avg = lerp(exp_avg, g, 1 - beta1);  exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) g^2
    param = param - lr / (1 - beta1^t) * exp_avg / (sqrt(exp_avg_sq) / sqrt(1 - beta2^t) + eps)
The reference is torch.optim.AdamW's single-tensor path written out (bit-identical to
torch.optim.AdamW(foreach=False) in float32 on a small example).

The state is consistent with ``step``: exp_avg_sq carries the (1 - beta2^step) bias of a real
second moment, so each step changes it by ~12%, exp_avg by ~10-30%, and moves the weights (std
0.02) by several percent; returning any output unchanged fails at every dtype's tolerance. The
decoupled decay changes param by 3e-4 relative over the three steps, which float32's tolerance
(rtol 1e-4) resolves: a kernel that skips it, or applies it as L2 (Adam), fails float32.
"""

import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

STEPS = 3
GRAD_SCALE = 1e-3
HYPER = {"step": 10, "lr": 1e-3, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weight_decay": 0.1}


def reference(param, grads, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, weight_decay):
    param, exp_avg, exp_avg_sq = param.clone(), exp_avg.clone(), exp_avg_sq.clone()
    for k in range(grads.shape[0]):
        grad = grads[k]
        t = step + 1 + k
        param.mul_(1 - lr * weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        step_size = lr / (1 - beta1 ** t)
        denom = (exp_avg_sq.sqrt() / math.sqrt(1 - beta2 ** t)).add_(eps)
        param.addcdiv_(exp_avg, denom, value=-step_size)
    return param, exp_avg, exp_avg_sq


def make_inputs(shape, dtype, gen):
    n = shape["n"]
    h = HYPER
    bc2 = 1 - h["beta2"] ** h["step"]
    param = randn(gen, (n,), dtype, scale=0.02, offset=0.005, outliers=1e-3, outlier_scale=5.0)
    grads = randn(gen, (STEPS, n), dtype, scale=GRAD_SCALE, outliers=1e-3, outlier_scale=10.0)
    exp_avg = randn(gen, (n,), dtype, scale=0.5 * GRAD_SCALE)
    v = randn(gen, (n,), torch.float32, scale=1.0).square() + 0.25
    exp_avg_sq = (v * (bc2 * GRAD_SCALE ** 2)).to(dtype)
    return (param, grads, exp_avg, exp_avg_sq, h["step"], h["lr"], h["beta1"], h["beta2"], h["eps"], h["weight_decay"])


def flops(shape):
    # per element and step: decay 1, lerp 3, second moment 4, sqrt 1, bias-correction divide 1,
    # + eps 1, divide 1, step-size multiply 1, subtract 1
    return 14.0 * STEPS * shape["n"]


def nbytes_moved(shape, dtype):
    # param, 3 grads, exp_avg, exp_avg_sq read; param, exp_avg, exp_avg_sq written
    return nbytes((3 + STEPS + 3, shape["n"]), dtype)


TASK = Task(
    name="adamw",
    category="optimizer",
    description="three fused AdamW steps (torch.optim.AdamW: decoupled weight decay 0.1, betas 0.9/0.95) on a flat "
                "parameter from a mid-training state; returns (param, exp_avg, exp_avg_sq)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"n": 1000}, "small"),
        Shape("awkward", {"n": 4097}, "awkward"),
        # param + 3 grads + 2 states read, 3 written: 9 x 64 MiB in float32.
        Shape("large", {"n": 2 ** 24}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
