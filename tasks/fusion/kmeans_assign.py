"""The assignment step of k-means (and of IVF index building / vector quantization): squared
distances to every centroid, then the nearest one, fused so the [N, K] distance matrix is never
written.

Contract, written out:
  * inputs: x [N, D] and centroids [K, D] in the task dtype
  * arithmetic: float32 or wider (bfloat16 inputs widened first); the usual expansion
    ||x||^2 - 2 x.c + ||c||^2 is allowed, so near-equal distances may come out in either order
  * outputs: assign int64 [N], dist float32 [N] = the squared distance to the assigned centroid
  * comparison, against float64 distances d[n, j]; with delta_n = 1e-5 * (||x_n||^2 + max_j ||c_j||^2):
      - d[n, assign[n]] <= min_j d[n, j] + delta_n (any centroid within delta_n of the nearest)
      - TIE RULE: centroids with bit-identical rows (duplicated centroids, as after re-seeding an
        empty cluster) are at the same distance from every point; the lowest index among them
        must be chosen. The inputs contain such duplicates, with points drawn around them
      - |dist[n] - d[n, assign[n]]| <= delta_n, and dist finite
delta_n, derived: the expansion's three terms are float32 dot products over D terms, each with a
worst-case error of D u |a| |b| (u = 2^-24), so the computed distance errs by at most about
2 D u (||x||^2 + ||c||^2) = 1.5e-5 x (...) at the large D = 128 in the (unreached) worst case and
~2 sqrt(D) u = 1.4e-6 x (...) typically; measured on CPU (torch float32 expansion, 4096 points x 256
centroids at D = 128, 2 seeds): max 5.1e-7 x (...), so 1e-5 leaves 20x. The same computation on
inputs rounded to bfloat16 errs by 1.6e-3 .. 7e-3 x (...) (the bf16_compute control is rejected).
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import itemsize, randint, randn

TOL = 1e-5
CHUNK = 1 << 16  # rows per block of the [N, K] distance matrix in the reference and the check


def _sq_dists(x, c):
    """[rows, K] squared distances by the expansion, in x's dtype."""
    return (x.pow(2).sum(-1, keepdim=True) - 2.0 * (x @ c.T) + c.pow(2).sum(-1)).clamp_min(0.0)


def _lowest_duplicate(c):
    """For each centroid, the lowest index of a centroid with a bit-identical row."""
    _, group = torch.unique(c, dim=0, return_inverse=True)
    first = torch.full((int(group.max()) + 1,), c.shape[0], dtype=torch.int64, device=c.device)
    first = first.scatter_reduce(0, group, torch.arange(c.shape[0], device=c.device), reduce="amin")
    return first[group]


def reference(x, centroids):
    compute = torch.promote_types(x.dtype, torch.float32)
    xc, cc = x.to(compute), centroids.to(compute)
    lowest = _lowest_duplicate(centroids)
    assign, dist = [], []
    for xs in xc.split(CHUNK):
        d = _sq_dists(xs, cc)
        a = lowest[torch.argmin(d, dim=-1)]
        assign.append(a)
        dist.append(d.gather(1, a.unsqueeze(1)).squeeze(1))
    return torch.cat(assign), torch.cat(dist).to(torch.float32)


def check(ctx):
    x, centroids = ctx.inputs
    assign, dist = ctx.outputs
    k = centroids.shape[0]
    if bool(((assign < 0) | (assign >= k)).any()):
        return CheckResult(False, f"assign: {int(((assign < 0) | (assign >= k)).sum())} indices outside [0, {k})")
    lowest = _lowest_duplicate(centroids)
    dup = assign != lowest[assign]
    if bool(dup.any()):
        i = int(torch.nonzero(dup)[0])
        return CheckResult(False, f"tie rule: {int(dup.sum())} points assigned to a duplicated centroid that is not the lowest "
                                  f"index of its duplicates (first: point {i} -> {int(assign[i])}, expected {int(lowest[assign[i]])})")
    x64, c64 = x.to(torch.float64), centroids.to(torch.float64)
    cmax = float(c64.pow(2).sum(-1).max())
    worst_gap, worst_dist = 0.0, 0.0
    for start in range(0, x64.shape[0], CHUNK):
        xs, a, ds = x64[start:start + CHUNK], assign[start:start + CHUNK], dist[start:start + CHUNK].to(torch.float64)
        d = _sq_dists(xs, c64)
        delta = TOL * (xs.pow(2).sum(-1) + cmax)
        chosen = d.gather(1, a.unsqueeze(1)).squeeze(1)
        gap = (chosen - d.min(dim=-1).values) / delta
        if not bool((gap <= 1.0).all()):
            i = int(torch.argmax(gap))
            return CheckResult(False, f"assign: {int((~(gap <= 1.0)).sum())} points not assigned to a nearest centroid (worst: point "
                                      f"{start + i}, distance {float(chosen[i]):.6g} vs nearest {float(d[i].min()):.6g}, allowed gap "
                                      f"{float(delta[i]):.3g})")
        err = (ds - chosen).abs() / delta
        if not bool((err <= 1.0).all()):  # NaN fails here too
            i = int(torch.argmax(torch.nan_to_num(err, nan=float("inf"))))
            return CheckResult(False, f"dist: {int((~(err <= 1.0)).sum())} values off by more than delta_n (worst: point {start + i}, "
                                      f"got {float(ds[i]):.6g}, expected {float(chosen[i]):.6g})")
        worst_gap, worst_dist = max(worst_gap, float(gap.max())), max(worst_dist, float(err.max()))
    return CheckResult(True, f"worst assignment gap {worst_gap:.3g} delta, worst dist error {worst_dist:.3g} delta")


def make_inputs(shape, dtype, gen):
    n, d, k = shape["N"], shape["D"], shape["K"]
    centroids = randn(gen, (k, d), torch.float32, scale=1.0, offset=0.5)
    # Duplicated centroids: the last few rows copy earlier ones (ties resolved by the lowest index).
    n_dup = max(1, k // 16)
    src = randint(gen, (n_dup,), 0, k - n_dup)
    centroids[k - n_dup:] = centroids[src]
    # Points: most drawn around a centroid (duplicates included) with unit-ish noise, a share
    # placed near the midpoint of two centroids (near-ties between distinct centroids), and a few
    # far-out points (large norms, where the expansion cancels most).
    owner = randint(gen, (n,), 0, k)
    x = centroids[owner] + randn(gen, (n, d), torch.float32, scale=0.6)
    other = randint(gen, (n,), 0, k)
    mid = (centroids[owner] + centroids[other]) / 2 + randn(gen, (n, d), torch.float32, scale=1e-3)
    kind = randint(gen, (n, 1), 0, 20)
    x = torch.where(kind == 0, mid, x)
    x = torch.where(kind == 1, x * 8.0, x)
    return (x.to(dtype), centroids.to(dtype))


def flops(shape):
    n, d, k = shape["N"], shape["D"], shape["K"]
    return 2.0 * n * k * d + 3.0 * n * k  # the x.c GEMM, then the expansion and the running min


def nbytes_moved(shape, dtype):
    n, d, k = shape["N"], shape["D"], shape["K"]
    return float((n * d + k * d) * itemsize(dtype) + n * (8 + 4))


TASK = Task(
    name="kmeans_assign",
    category="fusion",
    description="k-means assignment: for x [N, D] and centroids [K, D], the nearest centroid (int64 [N]; ties among duplicated centroids to the lowest index) and its squared distance (float32 [N])",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 256, "D": 16, "K": 32}, "small"),
        # 3-D points (odd, tiny D), 7 centroids, an odd point count.
        Shape("awkward", {"N": 77, "D": 3, "K": 7}, "awkward"),
        # IVF coarse quantizer training (faiss-style): 2^20 128-d vectors against 1024 centroids,
        # 512 MiB of float32 points read.
        Shape("large", {"N": 1 << 20, "D": 128, "K": 1024}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "assign within delta_n = 1e-5 (||x_n||^2 + max ||c||^2) of the nearest float64 squared distance; among bit-identical "
        "(duplicated) centroids the lowest index; dist (float32) within delta_n of the float64 distance to the assigned centroid")),
    flops=flops,
    bytes=nbytes_moved,
)
