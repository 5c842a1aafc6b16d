import torch
import triton
import triton.language as tl


@triton.jit
def _thomas_kernel(dl_ptr, d_ptr, du_ptr, b_ptr, c_ptr, x_ptr, B, n,
                   BLOCK_B: tl.constexpr):
    # Thomas algorithm, BLOCK_B systems per program, one system per lane: the sweep over the n
    # unknowns is sequential, the lanes run in parallel. The modified super-diagonal c' goes to a
    # scratch buffer and y' to x, which the backward sweep then overwrites in place. Arithmetic in
    # the input dtype (float32 or float64); the diagonal dominance of the inputs makes pivoting
    # unnecessary. dl[:, 0] and du[:, n - 1] are never read.
    sys = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    ok = sys < B
    base = sys.to(tl.int64) * n
    pos = tl.zeros([BLOCK_B], dtype=tl.int32)  # the current row index, as a vector for the masks
    d0 = tl.load(d_ptr + base, mask=ok, other=1.0)
    du0 = tl.load(du_ptr + base, mask=ok & (pos < n - 1), other=0.0)
    c_prev = du0 / d0
    y_prev = tl.load(b_ptr + base, mask=ok, other=0.0) / d0
    tl.store(c_ptr + base, c_prev, mask=ok)
    tl.store(x_ptr + base, y_prev, mask=ok)
    for i in range(1, n):
        dl = tl.load(dl_ptr + base + i, mask=ok, other=0.0)
        d = tl.load(d_ptr + base + i, mask=ok, other=1.0)
        du = tl.load(du_ptr + base + i, mask=ok & (pos + i < n - 1), other=0.0)
        bi = tl.load(b_ptr + base + i, mask=ok, other=0.0)
        den = d - dl * c_prev
        c_prev = du / den
        y_prev = (bi - dl * y_prev) / den
        tl.store(c_ptr + base + i, c_prev, mask=ok)
        tl.store(x_ptr + base + i, y_prev, mask=ok)
    x_next = y_prev
    for j in range(0, n - 1):
        i = n - 2 - j
        c = tl.load(c_ptr + base + i, mask=ok, other=0.0)
        y = tl.load(x_ptr + base + i, mask=ok, other=0.0)
        x_next = y - c * x_next
        tl.store(x_ptr + base + i, x_next, mask=ok)


def kernel_function(dl, d, du, b):
    dl, d, du, b = (t.contiguous() for t in (dl, d, du, b))
    B, n = d.shape
    x = torch.empty_like(b)
    if B == 0 or n == 0:
        return x
    scratch = torch.empty_like(d)
    BLOCK_B = 64
    _thomas_kernel[(triton.cdiv(B, BLOCK_B),)](dl, d, du, b, scratch, x, B, n, BLOCK_B=BLOCK_B, num_warps=2)
    return x
