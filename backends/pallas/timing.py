"""Timing of Pallas candidates.

JAX launches its kernels on streams of its own, so CUDA events recorded on torch's stream (how
mkbench times everything else) would not see them. Each call is instead bracketed by host clocks
around a device-wide synchronisation: before the call the L2 flush is finished
(``torch.cuda.synchronize``), after it the outputs are ready (``jax.block_until_ready``) and the
device is idle (``torch.cuda.synchronize`` again). The time therefore includes JAX's dispatch of
the call and one synchronisation round trip: the fixed overhead that ``measure_overhead`` gives
(an empty Pallas kernel through the same loop). Warm-up, the L2 flush, the persisting-L2 reset and
the adaptive repetition are those of ``mkbench.timing``.

Run ``python -m mkbench.backends.pallas.timing`` on a machine to print that overhead there.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any, Callable, Sequence

from mkbench.timing import Samples, Timing, TimingSettings, _keep_going, _reset_persisting_l2, summarize

TIMER = "device-sync-host-clock"
HOST_TIMER = "host-clock"


def time_calls(call: Callable[[int], Any], n_sets: int, device: str, l2_cache_mb: float,
               settings: TimingSettings, interpreted: bool) -> Timing:
    """Time ``call(i)`` (which runs the candidate on argument set ``i % n_sets`` and returns its
    outputs) with the method above on a GPU, with host clocks on a CPU."""
    if device == "cuda":
        return _time_gpu(call, l2_cache_mb, settings, interpreted)
    return _time_host(call, settings, interpreted)


def _time_gpu(call, l2_cache_mb: float, s: TimingSettings, interpreted: bool) -> Timing:
    import jax
    import torch
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    l2 = max(int(getattr(props, "L2_cache_size", 0) or 0), int(l2_cache_mb * 2**20))
    flush = torch.empty(max(2 * l2, 2**20) // 4, dtype=torch.int32, device="cuda")
    persist_reset = _reset_persisting_l2()

    def one(i: int) -> float:
        flush.zero_()
        if persist_reset:
            _reset_persisting_l2()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        jax.block_until_ready(call(i))
        torch.cuda.synchronize()  # device-wide: whatever else the call queued has finished too
        return (time.perf_counter() - t0) * 1e6

    t0, i = time.perf_counter(), 0
    while (time.perf_counter() - t0) * 1000 < s.warmup_ms or i < 2:
        one(i)
        i += 1
    samples = Samples()
    t0 = time.perf_counter()
    while _keep_going(samples, (time.perf_counter() - t0) * 1000, s):
        samples.append(one(len(samples)))
    # The host clock is the only clock here, so the harness's events-vs-wall-clock cross-check
    # compares the samples with themselves.
    return summarize(samples, timer=TIMER, interpreted=interpreted, l2_flush_bytes=flush.numel() * 4,
                     l2_persist_reset=persist_reset, host_median_us=statistics.median(samples))


def _time_host(call, s: TimingSettings, interpreted: bool) -> Timing:
    import jax
    jax.block_until_ready(call(0))  # warm-up
    # Interpreted kernels are far slower; their times are recorded, never reported as speed.
    settings = s if not interpreted else TimingSettings(min_samples=3, max_samples=3, budget_ms=0)
    samples = Samples()
    t0 = time.perf_counter()
    while _keep_going(samples, (time.perf_counter() - t0) * 1000, settings):
        a = time.perf_counter()
        jax.block_until_ready(call(len(samples)))
        samples.append((time.perf_counter() - a) * 1e6)
    return summarize(samples, timer=HOST_TIMER, interpreted=interpreted)


def time_candidate(fn: Callable[..., Any], arg_sets: Sequence[Sequence[Any]], device: str, l2_cache_mb: float,
                   settings: TimingSettings, interpreted: bool) -> Timing:
    """Inputs are handed to JAX (DLPack, no copy) once per set, outside the timed region."""
    from .runtime import to_jax
    sets = [tuple(to_jax(v) for v in args) for args in arg_sets]
    return time_calls(lambda i: fn(*sets[i % len(sets)]), len(sets), device, l2_cache_mb, settings, interpreted)


def measure_overhead(device: str, l2_cache_mb: float = 50.0) -> dict[str, float]:
    """Median time of calls that do (almost) nothing, through the loop above: a jitted one-element
    JAX add, and an empty Pallas kernel (one element copied). Nothing timed here can be faster."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    from .runtime import setup
    setup(device)
    interpret = device == "cpu"

    def copy_kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    x = jnp.zeros((1,), jnp.float32)
    add = jax.jit(lambda a: a + 1)
    empty = jax.jit(lambda a: pl.pallas_call(copy_kernel, out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype),
                                             interpret=interpret)(a))
    settings = TimingSettings(budget_ms=300, min_samples=50, max_samples=5000, target_rse=0.0)
    out = {}
    for name, fn in (("jax_jit_add_us", add), ("pallas_empty_kernel_us", empty)):
        out[name] = time_calls(lambda i, f=fn: f(x), 1, device, l2_cache_mb, settings, interpreted=False).median_us
    if device == "cuda":
        from types import SimpleNamespace

        import torch

        from mkbench.timing import time_callable
        t = torch.empty(1, device="cuda")
        hw = SimpleNamespace(device="cuda", l2_cache_mb=l2_cache_mb)
        out["torch_op_cuda_event_us"] = time_callable(lambda a: a[0].add_(0), [(t,)], hw, settings).median_us
    out["device"] = str(jax.devices()[0])
    out["jax"] = jax.__version__
    return out


if __name__ == "__main__":  # pragma: no cover - a measurement tool for the machine at hand
    import json
    import sys

    from .runtime import env_for
    try:
        import torch
        device = "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        device = "cpu"
    if "jax" in sys.modules:
        print("warning: jax was imported before the environment was set", file=sys.stderr)
    for key, value in env_for(device, "nvidia").items():
        os.environ.setdefault(key, value)
    print(json.dumps(measure_overhead(device), indent=2))
