"""Three Adagrad steps with learning-rate decay and L2 weight decay (torch.optim.Adagrad
semantics, maximize=False) from a mid-training state.

Inputs: param [N], grads [3, N], state_sum [N] (> 0), step (steps already taken), lr, lr_decay,
weight_decay, eps. Output: (param, state_sum) after the three steps. Per step t = step + 1 ..
step + 3, with g the step's gradient:
    g = g + weight_decay * param
    clr = lr / (1 + (t - 1) * lr_decay)
    state_sum = state_sum + g^2
    param = param - clr * g / (sqrt(state_sum) + eps)
The reference is torch.optim.Adagrad's single-tensor path written out (bit-identical to
torch.optim.Adagrad(foreach=False) in float32 on a small example).

The state is that of step 10 from a zero accumulator: state_sum ~ 10 E[g^2] (spread over a
decade), so each step adds ~10% to it, and each step moves the weights (std 0.02) by ~8%:
returning either output unchanged fails at every dtype's tolerance.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

STEPS = 3
GRAD_SCALE = 1e-3
HYPER = {"step": 10, "lr": 1e-2, "lr_decay": 1e-2, "weight_decay": 1e-2, "eps": 1e-10}


def reference(param, grads, state_sum, step, lr, lr_decay, weight_decay, eps):
    param, state_sum = param.clone(), state_sum.clone()
    for k in range(grads.shape[0]):
        t = step + 1 + k
        grad = grads[k].add(param, alpha=weight_decay)
        clr = lr / (1 + (t - 1) * lr_decay)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)
    return param, state_sum


def make_inputs(shape, dtype, gen):
    n = shape["n"]
    h = HYPER
    param = randn(gen, (n,), dtype, scale=0.02, offset=0.005)
    grads = randn(gen, (STEPS, n), dtype, scale=GRAD_SCALE, offset=0.1 * GRAD_SCALE, outliers=1e-3, outlier_scale=10.0)
    v = randn(gen, (n,), torch.float32, scale=1.0).square() + 0.25
    state_sum = (v * (h["step"] * GRAD_SCALE ** 2)).to(dtype)
    return (param, grads, state_sum, h["step"], h["lr"], h["lr_decay"], h["weight_decay"], h["eps"])


def flops(shape):
    # per element and step: decay 2, accumulate 2, sqrt 1, + eps 1, divide 1, update 2
    return 9.0 * STEPS * shape["n"]


def nbytes_moved(shape, dtype):
    # param, 3 grads, state_sum read; param and state_sum written
    return nbytes((2 + STEPS + 2, shape["n"]), dtype)


TASK = Task(
    name="adagrad",
    category="optimizer",
    description="three fused Adagrad steps with lr decay and weight decay (torch.optim.Adagrad) on a flat parameter from "
                "a mid-training state; returns (param, state_sum)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"n": 1000}, "small"),
        Shape("awkward", {"n": 4097}, "awkward"),
        # param + 3 grads + state read, 2 written: 7 x 64 MiB in float32.
        Shape("large", {"n": 2 ** 24}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
