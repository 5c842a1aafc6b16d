"""Batched tridiagonal solve T x = b by the Thomas algorithm (no pivoting: the systems are
diagonally dominant). The recurrence is sequential along a system, so the parallelism is across
systems: each program owns BB systems, one per lane, and sweeps their n unknowns in step. The
forward sweep writes the modified super-diagonal c' to a scratch output and y' to x; the backward
sweep overwrites x in place with x_i = y'_i - c'_i x_{i+1}. dl[:, 0] and du[:, n-1] (outside the
matrix) are never read. Each step gathers one element per lane (the lanes' systems are n apart);
the rows a lane walks stay in L1/L2 between steps, so memory is read about once. Arithmetic in
the input dtype (float32 or float64)."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

BB = 32  # systems per program: one warp, and 256 programs for the large batch of 8192


def _kernel(dl_ref, d_ref, du_ref, b_ref, x_ref, c_ref, *, B, n):
    lanes = jnp.arange(BB, dtype=jnp.int32)
    ok = (pl.program_id(0) * BB + lanes) < B

    def at(i):
        return lanes, jnp.full((BB,), i, jnp.int32)

    def load(ref, i, mask, other):
        return plt.load(ref.at[at(i)], mask=mask, other=other)

    last = n - 1
    d0 = load(d_ref, 0, ok, 1.0)
    c0 = load(du_ref, 0, ok & (last > 0), 0.0) / d0
    y0 = load(b_ref, 0, ok, 0.0) / d0
    plt.store(c_ref.at[at(0)], c0, mask=ok)
    plt.store(x_ref.at[at(0)], y0, mask=ok)

    def forward(i, carry):
        c_prev, y_prev = carry
        dl = load(dl_ref, i, ok, 0.0)
        den = load(d_ref, i, ok, 1.0) - dl * c_prev
        c = load(du_ref, i, ok & (i < last), 0.0) / den
        y = (load(b_ref, i, ok, 0.0) - dl * y_prev) / den
        plt.store(c_ref.at[at(i)], c, mask=ok)
        plt.store(x_ref.at[at(i)], y, mask=ok)
        return c, y

    _, x_last = jax.lax.fori_loop(jnp.int32(1), jnp.int32(n), forward, (c0, y0))

    def backward(j, x_next):
        i = last - 1 - j
        x = load(x_ref, i, ok, 0.0) - load(c_ref, i, ok, 0.0) * x_next
        plt.store(x_ref.at[at(i)], x, mask=ok)
        return x

    jax.lax.fori_loop(jnp.int32(0), jnp.int32(last), backward, x_last)


@jax.jit
def _tridiagonal_solve(dl, d, du, b):
    B, n = d.shape
    rows = pl.BlockSpec((BB, n), lambda s: (s, 0))
    out = jax.ShapeDtypeStruct((B, n), d.dtype)
    x, _ = pl.pallas_call(
        functools.partial(_kernel, B=B, n=n),
        out_shape=(out, out),  # x, and the scratch c' of the forward sweep
        grid=(pl.cdiv(B, BB),),
        in_specs=[rows, rows, rows, rows],
        out_specs=(rows, rows),
        compiler_params=plt.CompilerParams(num_warps=1, num_stages=1),
    )(dl, d, du, b)
    return x


def kernel_function(dl, d, du, b):
    return _tridiagonal_solve(dl, d, du, b)
