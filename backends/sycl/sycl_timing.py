"""Timing on the SYCL path with SYCL event profiling, on the loop and statistics of
``mkbench.timing``, the same protocol as the pyopencl path's (``timing.py``).

Inputs are copied into USM allocations before the loop, so no copy is timed. Each call: the
backend's fill kernel overwrites a flush buffer of at least twice the device's last-level cache
(not waited for), then a barrier, the candidate's submissions, a barrier; the sample is the span
between the two barriers' completion (``profiling_info_end``) on the queue's profiling clock.
Where barriers carry no profiling times, one-work-item empty kernels stand in for them (first's end
to second's start). The SYCL path runs on CPUs only: as for the pyopencl path on a CPU, no
wall-clock cross-check is recorded (there it measures the OS waking the runtime's threads).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from mkbench.timing import Timing, TimingSettings, summarize

from . import common, facade
from .sycl_runtime import SyclCandidate, SyclRuntime

TIMER = "sycl-profiling-events"


class BarrierBracket:
    """Barriers before and after the call; elapsed = end barrier's end - start barrier's end."""

    def __init__(self, rt: SyclRuntime):
        self.queue = rt.queue

    def mark(self):
        return self.queue.submit_barrier()

    def elapsed_us(self, start, end) -> float:
        return (end.profiling_info_end - start.profiling_info_end) / 1e3


class KernelBracket:
    """Empty one-work-item kernels before and after; elapsed = second's start - first's end."""

    def __init__(self, rt: SyclRuntime):
        self.queue, self.kernel = rt.queue, rt.timestamp_kernel

    def mark(self):
        return self.queue.submit_async(self.kernel, [], [1], [1])

    def elapsed_us(self, start, end) -> float:
        return (end.profiling_info_start - start.profiling_info_end) / 1e3


def make_bracket(rt: SyclRuntime):
    """Barriers where the runtime times them; otherwise empty kernels."""
    bracket = BarrierBracket(rt)
    start, end = bracket.mark(), bracket.mark()
    rt.wait()
    try:
        if start.profiling_info_end > 0 and end.profiling_info_end >= start.profiling_info_end:
            return bracket
    except Exception:  # an event without profiling data raises
        pass
    return KernelBracket(rt)


def flush_bytes(rt: SyclRuntime, hw) -> int:
    return common.flush_bytes(rt.device.global_mem_cache_size, hw)


def time_sycl(fn: SyclCandidate, arg_sets: Sequence[Sequence], hw, s: TimingSettings, bracket=None) -> Timing:
    rt = fn.rt
    device_sets = [fn.upload(a)[0] for a in arg_sets]
    nbytes = flush_bytes(rt, hw)
    flush = rt.allocate(nbytes)
    zero = np.zeros((), np.uint32)
    bracket = bracket or make_bracket(rt)

    def one(i: int) -> float:
        # Not waited for: the host submits the call while the device flushes; the start barrier
        # completes only after the flush (in-order queue), so the flush is not timed.
        rt.fill(flush, zero, nbytes // 4)
        start = bracket.mark()
        out = fn.launch(device_sets[i % len(device_sets)])
        end = bracket.mark()
        rt.wait()
        del out
        return bracket.elapsed_us(start, end)

    rt.wait()
    with facade.installed():
        samples = common.sample(one, s)
    problem = facade.watch_intact()
    if problem:
        raise RuntimeError(problem)
    return summarize(samples, timer=TIMER, interpreted=False, l2_flush_bytes=nbytes, l2_persist_reset=False)
