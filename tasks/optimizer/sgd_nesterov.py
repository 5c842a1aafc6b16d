"""Three SGD steps with Nesterov momentum and L2 weight decay (torch.optim.SGD semantics:
nesterov=True, dampening=0, maximize=False) from a mid-training state.

Inputs: param [N], grads [3, N] (the gradient of each step), momentum_buffer [N], lr, momentum,
weight_decay. Output: (param, momentum_buffer) after the three steps. Per step, with g the step's
gradient:
    g = g + weight_decay * param
    buf = momentum * buf + g
    param = param - lr * (g + momentum * buf)
The reference below is torch.optim.SGD's single-tensor path written out (it matches
torch.optim.SGD(foreach=False) bit for bit in float32 on a small example).

The state is drawn consistent with training: the buffer is a momentum sum of gradients (about
2.3x the gradient scale), param is at the scale of a weight init (std 0.02); three steps move
each weight by ~20% and change the buffer by ~75%, far outside every dtype's tolerance, so a
kernel that skips the update of either output fails, and so does one without the Nesterov term.
"""

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

STEPS = 3
GRAD_SCALE = 1e-2
HYPER = {"lr": 0.05, "momentum": 0.9, "weight_decay": 1e-2}


def reference(param, grads, momentum_buffer, lr, momentum, weight_decay):
    param, buf = param.clone(), momentum_buffer.clone()
    for k in range(grads.shape[0]):
        grad = grads[k].add(param, alpha=weight_decay)
        buf.mul_(momentum).add_(grad)
        param.add_(grad.add(buf, alpha=momentum), alpha=-lr)
    return param, buf


def make_inputs(shape, dtype, gen):
    n = shape["n"]
    h = HYPER
    param = randn(gen, (n,), dtype, scale=0.02, offset=0.005)
    grads = randn(gen, (STEPS, n), dtype, scale=GRAD_SCALE, offset=0.1 * GRAD_SCALE, outliers=1e-3, outlier_scale=10.0)
    # a momentum sum of past gradients: std sqrt(1 / (1 - momentum^2)) ~ 2.3 gradient scales
    buf = randn(gen, (n,), dtype, scale=2.3 * GRAD_SCALE, offset=0.5 * GRAD_SCALE)
    return (param, grads, buf, h["lr"], h["momentum"], h["weight_decay"])


def flops(shape):
    # per element and step: weight decay 2, buffer 2, Nesterov term 2, update 2
    return 8.0 * STEPS * shape["n"]


def nbytes_moved(shape, dtype):
    # param, 3 grads, buffer read; param and buffer written
    return nbytes((2 + STEPS + 2, shape["n"]), dtype)


TASK = Task(
    name="sgd_nesterov",
    category="optimizer",
    description="three fused SGD steps with Nesterov momentum and L2 weight decay (torch.optim.SGD, nesterov=True) on a "
                "flat parameter from a mid-training state; returns (param, momentum_buffer)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"n": 1000}, "small"),
        Shape("awkward", {"n": 4097}, "awkward"),
        # param + 3 grads + buffer read, param + buffer written: 7 x 64 MiB in float32.
        Shape("large", {"n": 2 ** 24}, "large"),
    ],
    # bfloat16: param, grads and buffer stored in bf16, judged against the float64 update of the
    # same bf16 inputs at bf16 tolerance.
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
