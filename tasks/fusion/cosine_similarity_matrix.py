import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, randint, randn, uniform

EPS = 1e-8  # F.normalize's eps: a row's norm is clamped to at least eps (a zero row maps to zeros)


def reference(a, b):
    f = torch.nn.functional
    return f.normalize(a, dim=-1, eps=EPS) @ f.normalize(b, dim=-1, eps=EPS).T


def _embeddings(gen, rows, k, direction):
    # Embedding-like rows: a direction shared by the whole set (real embeddings are anisotropic,
    # so cosines are mostly positive and spread, not ~N(0, 1/K)), a per-row signed weight on it,
    # noise, a few outlier dimensions, and norms spread over two orders of magnitude, so a kernel
    # that forgets to normalise one side fails.
    weight = randn(gen, (rows, 1), torch.float32, scale=1.0, offset=0.7)
    noise = randn(gen, (rows, k), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=8.0)
    norm = torch.exp(uniform(gen, (rows, 1), torch.float32, -2.3, 2.3))
    return (weight * direction + noise) * norm


def make_inputs(shape, dtype, gen):
    m, n, k = shape["M"], shape["N"], shape["K"]
    direction = randn(gen, (1, k), torch.float32, scale=1.0)
    a = _embeddings(gen, m, k, direction)
    b = _embeddings(gen, n, k, direction)
    # One all-zero row in B (a padding embedding): its column of the output must be exactly 0, not NaN.
    b[int(randint(gen, (1,), 0, n).item())] = 0.0
    return (a.to(dtype), b.to(dtype))


def flops(shape):
    m, n, k = shape["M"], shape["N"], shape["K"]
    return 2.0 * m * n * k + 3.0 * (m + n) * k  # the GEMM, then two row norms and scalings


def nbytes_moved(shape, dtype):
    m, n, k = shape["M"], shape["N"], shape["K"]
    return float((m * k + n * k + m * n) * itemsize(dtype))


TASK = Task(
    name="cosine_similarity_matrix",
    category="fusion",
    description="all-pairs cosine similarity S = normalize(A) @ normalize(B)^T, A [M, K], B [N, K], each row divided by max(||row||_2, 1e-8); float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 64, "N": 96, "K": 128}, "small"),
        # One query against an odd number of keys, K not a multiple of any tile size.
        Shape("awkward", {"M": 1, "N": 301, "K": 77}, "awkward"),
        # Retrieval over CLIP ViT-L/14 embeddings (K = 768): 16384 queries x 16384 keys, a 1 GiB
        # float32 score matrix written.
        Shape("large", {"M": 16384, "N": 16384, "K": 768}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
