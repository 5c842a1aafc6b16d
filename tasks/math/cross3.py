"""Cross product of 3-vectors stored as rows: out[n] = a[n] x b[n], a, b, out [N, 3].

Contract: the default allclose against the float64 cross product of the same (rounded) inputs.
10% of the pairs are nearly parallel (b = k a + 1e-3 noise), where each component is a difference
of nearly equal products: a float32 kernel's error there is up to ~2u max|a_i b_j| (with or without
FMA). Those pairs are built from a clamped to [-8, 8], so that bound stays under 2u x 128 = 1.5e-5,
inside atol = 1e-5 x rms (rms ~2.8); computing in bfloat16 is not. (Built from the unclamped
outliers, a correct float32 kernel on an H100 missed by 3.5e-5 on one of 50M elements.)
The [N, 3] layout (stride 3, no alignment to 16 bytes) is the one particle and geometry codes use.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform


def reference(a, b):
    # Half types are widened to float32 and the result rounded once (torch's bfloat16 cross on CPU
    # rounds each product to bfloat16, which cancels badly on the nearly parallel pairs).
    wide = torch.promote_types(a.dtype, torch.float32)
    return torch.linalg.cross(a.to(wide), b.to(wide), dim=-1).to(a.dtype)


def make_inputs(shape, dtype, gen):
    n = shape["N"]
    a = randn(gen, (n, 3), torch.float32, scale=2.0, offset=0.1, outliers=1e-3, outlier_scale=10.0)
    b = randn(gen, (n, 3), torch.float32, scale=1.0, offset=-0.2, outliers=1e-3, outlier_scale=10.0)
    k = uniform(gen, (n, 1), torch.float32, -2.0, 2.0)
    near_parallel = k * a.clamp(-8.0, 8.0) + randn(gen, (n, 3), torch.float32, scale=1e-3)
    pick = uniform(gen, (n, 1), torch.float32, 0.0, 1.0) < 0.1
    b = torch.where(pick, near_parallel, b)
    return (a.to(dtype), b.to(dtype))


def flops(shape):
    return 9.0 * shape["N"]  # 6 multiplies, 3 subtractions


def nbytes_moved(shape, dtype):
    return float(3 * nbytes((shape["N"], 3), dtype))


TASK = Task(
    name="cross3",
    category="math",
    description="row-wise 3-vector cross product a x b of [N, 3] tensors (torch.linalg.cross, dim=-1), 10% nearly parallel pairs",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 4096}, "small"),
        Shape("awkward", {"N": 10007}, "awkward"),
        Shape("large", {"N": 2**24}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
