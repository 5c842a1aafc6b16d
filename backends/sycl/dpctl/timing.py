"""Timing on the SYCL path with SYCL event profiling, on the loop and statistics of
``mkbench.timing``, the same protocol as the pyopencl path's (``opencl/timing.py``).

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

from .. import common
from . import facade
from .runtime import SyclCandidate

TIMER = "sycl-profiling-events"


def time_sycl(fn: SyclCandidate, arg_sets: Sequence[Sequence], hw, s: TimingSettings, bracket=None) -> Timing:
    rt = fn.rt
    device_sets = [fn.upload(a)[0] for a in arg_sets]
    nbytes = common.flush_bytes(rt, hw)
    flush = rt.allocate(nbytes)
    zero = np.zeros((), np.uint32)
    bracket = bracket or common.make_bracket(rt)

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
