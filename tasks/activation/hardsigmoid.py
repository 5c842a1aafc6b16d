import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform


def reference(x):
    # relu6(x + 3) / 6: 0 for x <= -3, 1 for x >= 3, linear in between (MobileNetV3).
    return torch.nn.functional.hardsigmoid(x)


def make_inputs(shape, dtype, gen):
    # Scale 3: about a third of the values in each saturated region and a third on the ramp;
    # 2% sit exactly on the kinks -3 and 3.
    s = (shape["rows"], shape["cols"])
    x = randn(gen, s, torch.float32, scale=3.0, offset=0.2, outliers=1e-3)
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    x = torch.where(pick < 0.01, torch.full_like(x, -3.0), torch.where(pick < 0.02, torch.full_like(x, 3.0), x))
    return (x.to(dtype),)


def flops(shape):
    return 4.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="hardsigmoid",
    category="activation",
    description="hardsigmoid relu6(x + 3) / 6 of a 2-D tensor, both saturated regions, the ramp and the kinks",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
