"""F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False).

  * x [N, C, H, W]; grid [N, Ho, Wo, 2] of normalised (x, y) in [-1, 1] (outside allowed)
  * align_corners=False: -1 and 1 are the outer EDGES of the border pixels, so the source
    position is ix = ((gx + 1) W - 1) / 2 (pixel centres at integers), likewise iy with H
  * bilinear weights over the 4 neighbouring pixels; neighbours outside the image contribute 0
    (zero padding), so samples near or beyond the border fade to 0
  * out [N, C, Ho, Wo]; for bfloat16, positions and interpolation are computed in float32 and the
    result rounded once
Grid values are multiples of 2^-12 (dyadic): (g + 1) W - 1 and the halving are then exact in
float32 for every W here, so the source position, and the bilinear weights, carry no rounding
that depends on how a kernel writes the formula; the default tolerance judges the interpolation.
The grid is a smooth warp (identity, zoomed out by 10% so borders are sampled outside the image,
plus a random displacement of a few pixels), as in optical-flow backward warping.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

GRID_STEP = 2.0 ** -12


def reference(x, grid):
    # Half-type inputs: positions, weights and sums in float32 (torch's CPU kernel would compute
    # bfloat16 source positions, off by up to a pixel), one rounding of the result.
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32
    out = torch.nn.functional.grid_sample(x.to(acc), grid.to(acc), mode="bilinear", padding_mode="zeros", align_corners=False)
    return out.to(x.dtype)


def make_inputs(shape, dtype, gen):
    n, c, h, w, ho, wo = shape["N"], shape["C"], shape["H"], shape["W"], shape["Ho"], shape["Wo"]
    x = randn(gen, (n, c, h, w), dtype, scale=1.0, offset=0.3, outliers=1e-3)
    # identity grid at the output's pixel centres, zoomed out by 10%
    gy = (2 * torch.arange(ho, device=gen.device, dtype=torch.float32) + 1) / ho - 1
    gx = (2 * torch.arange(wo, device=gen.device, dtype=torch.float32) + 1) / wo - 1
    base = torch.stack(torch.broadcast_tensors(gx.view(1, wo), gy.view(ho, 1)), dim=-1) * 1.1
    # a displacement of ~3 input pixels (normalised: 2 / size per pixel), smooth over 4-px cells
    coarse = randn(gen, (n, 2, (ho + 3) // 4, (wo + 3) // 4), torch.float32, scale=3.0)
    flow = torch.nn.functional.interpolate(coarse, size=(ho, wo), mode="bilinear", align_corners=False).permute(0, 2, 3, 1)
    flow = flow * torch.tensor([2.0 / w, 2.0 / h], device=gen.device)
    grid = torch.round((base + flow) / GRID_STEP) * GRID_STEP
    return (x, grid.to(dtype))


def flops(shape):
    # 4 weights (~6 ops) and 4 multiply-adds per output element
    return 14.0 * shape["N"] * shape["C"] * shape["Ho"] * shape["Wo"]


def nbytes_moved(shape, dtype):
    n, c = shape["N"], shape["C"]
    return float(nbytes((n, c, shape["H"], shape["W"]), dtype) + nbytes((n, shape["Ho"], shape["Wo"], 2), dtype)
                 + nbytes((n, c, shape["Ho"], shape["Wo"]), dtype))


TASK = Task(
    name="grid_sample_bilinear",
    category="spatial",
    description="F.grid_sample bilinear, zero padding, align_corners=False: x [N, C, H, W] sampled at grid [N, Ho, Wo, 2] "
                "(normalised x, y; a smooth warp reaching outside the image)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 8, "H": 32, "W": 32, "Ho": 32, "Wo": 32}, "small"),
        # Output larger than the input (upsampling warp), odd sizes, H != W.
        Shape("awkward", {"N": 1, "C": 3, "H": 13, "W": 7, "Ho": 19, "Wo": 11}, "awkward"),
        # Backward warping of 64-channel features at 256 x 256 by a flow field, batch 16: 545 MB fp32.
        Shape("large", {"N": 16, "C": 64, "H": 256, "W": 256, "Ho": 256, "Wo": 256}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
