"""RoIAlign (torchvision.ops.roi_align with aligned=True, i.e. Detectron2's ROIAlignV2): each box
is cut into a 7 x 7 grid of bins, each bin averages 2 x 2 bilinear samples of the feature map.

Definition, written out (torchvision's CPU/CUDA kernels, restated; torchvision is not needed):
  * features [N, C, H, W]; boxes float32 [K, 4] as (x1, y1, x2, y2) in image pixels; batch_idx
    int64 [K] (the image of each box); spatial_scale 1/4 (an FPN P2 map), output 7 x 7,
    sampling_ratio 2, aligned=True
  * box in feature coordinates: start = x1 * scale - 0.5, end = x2 * scale - 0.5 (likewise y);
    bin size = (end - start) / 7 (no minimum size with aligned=True)
  * sample (iy, ix) of bin (ph, pw): y = y_start + ph * bin_h + (iy + 0.5) * bin_h / 2, likewise x
  * bilinear sample: 0 if y < -1 or y > H or x < -1 or x > W; otherwise y clamps to >= 0, and if
    floor(y) >= H - 1 it is set to H - 1 (weight 1 on the last row); likewise x; weights
    (1 - ly, ly) x (1 - lx, lx) on the four neighbours
  * out [K, C, 7, 7]: the mean of the bin's 4 samples (out-of-range samples count as zeros)
Boxes are proposals of all sizes (from smaller than one feature pixel to half the image), a few
reaching past the image border.

Box coordinates are multiples of 1/8 image pixel and box sizes multiples of 7/8 pixel, so with
spatial_scale 1/4 every box start, bin size (a multiple of 1/32 feature pixel) and sample position
(a multiple of 1/128) is exact in float32, whatever order a kernel evaluates the position formula
in. Without that, positions up to ~300 feature pixels carry float32 rounding (ulp(300) = 3e-5 px)
that moves bilinear samples by up to ~4e-4 x rms (measured, float32 vs float64 of this reference
at 200 x 304), and a sample at exactly -1 or H can flip between zero and a full pixel value. With
exact positions only the weighted sums round, and the default float32 tolerance applies.
float32 only: detection models run RoIAlign in float32 (torchvision's autocast casts it).
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import RoundingBound
from mkbench.taskkit import nbytes, randint, randn, uniform

OUT, SAMPLING, SCALE = 7, 2, 0.25
CHUNK = 256  # boxes per step of the reference (bounds its memory on large inputs)


def _axis(start, bin_size, size):
    """Per box, the OUT * SAMPLING sample positions along one axis as (low index, high index,
    low weight, high weight); both weights are 0 where the sample is out of range."""
    p = torch.arange(OUT, device=start.device, dtype=start.dtype).repeat_interleave(SAMPLING)
    i = torch.arange(SAMPLING, device=start.device, dtype=start.dtype).repeat(OUT)
    # evaluated in torchvision's order: start + p * bin + (i + 0.5) * bin / grid
    pos = start[:, None] + p[None, :] * bin_size[:, None] + (i[None, :] + 0.5) * bin_size[:, None] / SAMPLING
    valid = (pos >= -1.0) & (pos <= size)
    pos = pos.clamp_min(0.0)
    low = pos.floor().to(torch.int64)
    at_end = low >= size - 1
    low = torch.where(at_end, torch.full_like(low, size - 1), low)
    high = torch.where(at_end, low, low + 1)
    pos = torch.where(at_end, low.to(pos.dtype), pos)
    frac = pos - low.to(pos.dtype)
    w_low = torch.where(valid, 1.0 - frac, torch.zeros_like(frac))
    w_high = torch.where(valid, frac, torch.zeros_like(frac))
    return low, high, w_low, w_high


def reference(features, boxes, batch_idx):
    acc = torch.float64 if features.dtype == torch.float64 else torch.float32
    f = features.to(acc)
    n, c, h, w = f.shape
    k = boxes.shape[0]
    out = torch.empty((k, c, OUT, OUT), dtype=acc, device=f.device)
    for s in range(0, k, CHUNK):
        b = boxes[s:s + CHUNK].to(acc)
        m = b.shape[0]
        img = batch_idx[s:s + CHUNK].view(m, 1, 1)
        x0, y0 = b[:, 0] * SCALE - 0.5, b[:, 1] * SCALE - 0.5
        x1, y1 = b[:, 2] * SCALE - 0.5, b[:, 3] * SCALE - 0.5
        yl, yh, wyl, wyh = _axis(y0, (y1 - y0) / OUT, h)
        xl, xh, wxl, wxh = _axis(x0, (x1 - x0) / OUT, w)
        samples = 0
        for ys, wy in ((yl, wyl), (yh, wyh)):
            for xs, wx in ((xl, wxl), (xh, wxh)):
                v = f[img, :, ys.view(m, -1, 1), xs.view(m, 1, -1)]  # [m, OUT*S, OUT*S, C]
                samples = samples + v * (wy.view(m, -1, 1, 1) * wx.view(m, 1, -1, 1))
        samples = samples.permute(0, 3, 1, 2).reshape(m, c, OUT, SAMPLING, OUT, SAMPLING)
        out[s:s + m] = samples.mean(dim=(3, 5))  # count = SAMPLING^2, out-of-range samples included
    return out.to(features.dtype)


def _pos_error(start, end):
    """Bound on a float32 sample position's error in units of u = 2^-24, whatever order a kernel
    evaluates start + p bin + (i + 0.5) bin / 2 in: bin = (end - start) / 7 carries 2u |bin| (PyTorch
    on CUDA divides by a Python scalar by multiplying with its rounded reciprocal, so the exact
    1/32-multiples of the task are NOT exact there), p bin up to 2u p |bin| + u |p bin|, and each of
    the two sums u |partial|: at most 3 |end - start| + 3 max(|start|, |end|)."""
    return 3 * (end - start).abs() + 3 * torch.maximum(start.abs(), end.abs())


def _local_grad(f, dim):
    """Per pixel, the largest |difference| to a neighbour along ``dim``: bounds |dI/dpos| of the
    bilinear interpolant in the cells on both sides of the pixel."""
    d = f.diff(dim=dim).abs()
    pad = [0] * (2 * f.dim())
    k = 2 * (f.dim() - 1 - (dim % f.dim()))
    before, after = list(pad), list(pad)
    before[k + 1], after[k] = 1, 1  # prepend / append one zero along dim
    return torch.maximum(torch.nn.functional.pad(d, before), torch.nn.functional.pad(d, after))


def rounding_magnitude(features, boxes, batch_idx):
    """Per output element, in units of u (float32's 2^-24), what float32 sample positions move
    it by: positions carry rounding (see _pos_error; on an H100 eager float32 was rejected on
    20551 of 51.4M elements, max error 1.1e-4, from this and not from the sums) and the sample
    moves by d |dI/dpos| to first order, with |dI/dpos| bounded by the largest neighbour
    difference at the four pixels of its cell (_local_grad). A sample within its position error of
    the valid range's ends (-1 and H, W: on the grid of 1/128, the task's positions can sit exactly
    there) may be counted as zero or as its value: there the allowance is the whole |sample| / u.
    The mean of the bin's four samples divides by 4."""
    f = features.to(torch.float64)
    n, c, h, w = f.shape
    gy, gx = _local_grad(f, 2), _local_grad(f, 3)
    u = 2.0 ** -24
    k = boxes.shape[0]
    out = torch.empty((k, c, OUT, OUT), dtype=torch.float64, device=f.device)
    for s in range(0, k, CHUNK):
        b = boxes[s:s + CHUNK].to(torch.float64)
        m = b.shape[0]
        img = batch_idx[s:s + CHUNK].view(m, 1, 1)
        x0, y0 = b[:, 0] * SCALE - 0.5, b[:, 1] * SCALE - 0.5
        x1, y1 = b[:, 2] * SCALE - 0.5, b[:, 3] * SCALE - 0.5
        yl, yh, wyl, wyh = _axis(y0, (y1 - y0) / OUT, h)
        xl, xh, wxl, wxh = _axis(x0, (x1 - x0) / OUT, w)
        p = torch.arange(OUT * SAMPLING, device=f.device, dtype=torch.float64)
        ypos = y0[:, None] + (p // SAMPLING + ((p % SAMPLING) + 0.5) / SAMPLING) * ((y1 - y0) / OUT)[:, None]
        xpos = x0[:, None] + (p // SAMPLING + ((p % SAMPLING) + 0.5) / SAMPLING) * ((x1 - x0) / OUT)[:, None]
        dy, dx = _pos_error(y0, y1)[:, None].expand_as(ypos), _pos_error(x0, x1)[:, None].expand_as(xpos)
        edge_y = ((ypos + 1).abs() <= 2 * u * dy) | ((ypos - h).abs() <= 2 * u * dy)
        edge_x = ((xpos + 1).abs() <= 2 * u * dx) | ((xpos - w).abs() <= 2 * u * dx)
        grad_y, grad_x, value = 0, 0, 0
        for ys, wy in ((yl, wyl), (yh, wyh)):
            for xs, wx in ((xl, wxl), (xh, wxh)):
                at = (img, slice(None), ys.view(m, -1, 1), xs.view(m, 1, -1))
                grad_y = torch.maximum(torch.as_tensor(grad_y, dtype=f.dtype), gy[at])  # [m, OUT*S, OUT*S, C]
                grad_x = torch.maximum(torch.as_tensor(grad_x, dtype=f.dtype), gx[at])
                # the sample's value were it counted (valid): weights without the validity mask
                value = value + f[at].abs()
        mag = grad_y * dy.view(m, -1, 1, 1) + grad_x * dx.view(m, 1, -1, 1)
        edge = (edge_y.view(m, -1, 1, 1) | edge_x.view(m, 1, -1, 1))
        mag = torch.where(edge, mag + value / u, mag)
        mag = mag.permute(0, 3, 1, 2).reshape(m, c, OUT, SAMPLING, OUT, SAMPLING)
        out[s:s + m] = mag.sum(dim=(3, 5)) / SAMPLING ** 2
    return (out,)


def make_inputs(shape, dtype, gen):
    n, c, h, w, k = shape["N"], shape["C"], shape["H"], shape["W"], shape["K"]
    features = randn(gen, (n, c, h, w), dtype, scale=1.0, offset=0.2, outliers=1e-3, outlier_scale=8.0)
    img_h, img_w = h / SCALE, w / SCALE
    # Box sizes log-uniform from 2 px (under one feature pixel) to half the image, centres
    # anywhere in the image, so some boxes reach past the border; then snapped to the exact grid
    # (corners on multiples of 1/8 px, sizes multiples of 7/8 px).
    size_w = torch.exp(uniform(gen, (k,), torch.float32, 0.7, float(torch.log(torch.tensor(img_w / 2)))))
    size_h = size_w * torch.exp(uniform(gen, (k,), torch.float32, -0.7, 0.7))
    cx = uniform(gen, (k,), torch.float32, 0.0, img_w)
    cy = uniform(gen, (k,), torch.float32, 0.0, img_h)
    units_w = torch.round(size_w * 8 / 7).clamp_min(1)
    units_h = torch.round(size_h * 8 / 7).clamp_min(1)
    x1 = torch.round((cx - size_w / 2) * 8) / 8
    y1 = torch.round((cy - size_h / 2) * 8) / 8
    boxes = torch.stack([x1, y1, x1 + units_w * 7 / 8, y1 + units_h * 7 / 8], dim=1)
    batch_idx = randint(gen, (k,), 0, n)
    batch_idx[0], batch_idx[-1] = 0, n - 1
    return (features, boxes, batch_idx)


def flops(shape):
    # per output: 4 samples x (bilinear weights ~10 + 4 multiply-adds) + the mean
    return float(shape["K"] * shape["C"] * OUT * OUT * (4 * 18 + 4))


def nbytes_moved(shape, dtype):
    # The feature map read once (an upper bound of what the boxes cover), boxes and indices, the output.
    n, c, h, w, k = shape["N"], shape["C"], shape["H"], shape["W"], shape["K"]
    return float(nbytes((n, c, h, w), dtype) + nbytes((k, 4), torch.float32) + nbytes((k,), torch.int64)
                 + nbytes((k, c, OUT, OUT), dtype))


TASK = Task(
    name="roi_align",
    category="spatial",
    description="RoIAlign (torchvision roi_align, aligned=True): boxes [K, 4] (x1, y1, x2, y2) with image indices [K] on a "
                "1/4-scale feature map [N, C, H, W] -> [K, C, 7, 7], 2 x 2 bilinear samples per bin",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 16, "H": 32, "W": 40, "K": 24}, "small"),
        # Three channels on a 13 x 7 map (boxes mostly cross its border), two images, five boxes.
        Shape("awkward", {"N": 2, "C": 3, "H": 13, "W": 7, "K": 5}, "awkward"),
        # Mask R-CNN FPN P2 of 8 images at 800 x 1216 (256 x 200 x 304), 512 proposals each: 704 MB.
        Shape("large", {"N": 8, "C": 256, "H": 200, "W": 304, "K": 4096}, "large"),
    ],
    dtypes=("float32",),
    # slack 2 on the first-order position analysis (RoundingBound); the half-precision control
    # (bf16_compute: features rounded to 2^-8) misses by far more than 2 u x positions x gradients.
    contract=RoundingBound(magnitudes=rounding_magnitude, slack=2.0, description=(
        "allclose vs float64 (float32: rtol 1e-4, atol 1e-5 x rms) plus 2 u m per element, m the mean over the bin's "
        "samples of (float32 position rounding bound) x (largest neighbour difference of the sample's cell), and the "
        "whole |sample| for samples within rounding of the valid range's ends")),
    flops=flops,
    bytes=nbytes_moved,
)
