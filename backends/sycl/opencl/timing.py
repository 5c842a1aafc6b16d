"""Timing with OpenCL profiling events, on the loop and statistics of ``mkbench.timing``.

Inputs are copied to device buffers before the loop (torch's memory and OpenCL's are apart), so
no copy is timed. Each call: a flush buffer of at least twice the device's last-level cache is
overwritten, then a marker, the candidate's enqueues, a marker; the time is the span between the
two markers' completion, read from the queue's profiling clock. Where a platform gives markers no
profiling data, one-work-item empty kernels stand in for them. On a GPU the host wall-clock from
the first marker to the end of ``finish`` is kept as a cross-check (work hidden from the queue
shows there).
"""

from __future__ import annotations

import statistics
import time
from typing import Sequence

import numpy as np
import pyopencl as cl

from mkbench.timing import Timing, TimingSettings, summarize

from .. import common
from .runtime import ORIGINAL, OpenCLCandidate, watch_intact

TIMER = "opencl-profiling-events"


def time_opencl(fn: OpenCLCandidate, arg_sets: Sequence[Sequence], hw, s: TimingSettings, bracket=None) -> Timing:
    rt = fn.rt
    queue, finish = rt.queue, ORIGINAL["finish"]
    device_sets = [fn.upload(a)[0] for a in arg_sets]
    nbytes = common.flush_bytes(rt, hw)
    flush = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, nbytes)
    zero = np.uint32(0)
    bracket = bracket or common.make_bracket(rt)
    host: list[float] = []

    def one(i: int) -> float:
        # Not waited for: the host enqueues the call while the device flushes, as with CUDA events;
        # the start marker completes only after the flush (in-order queue), so it is not timed.
        ORIGINAL["fill_buffer"](queue, flush, zero, 0, nbytes, None)
        t0 = time.perf_counter()
        start = bracket.mark()
        out = fn.launch(device_sets[i % len(device_sets)])
        end = bracket.mark()
        finish(queue)
        host.append((time.perf_counter() - t0) * 1e6)
        del out
        return bracket.elapsed_us(start, end)

    finish(queue)
    samples = common.sample(one, s)
    problem = watch_intact()
    if problem:
        raise RuntimeError(problem)
    host_timed = host[-len(samples):]
    # On a CPU device the wall-clock also holds the OS waking PoCL's worker threads and the host
    # thread after finish (hundreds of microseconds, milliseconds on a loaded machine): it says
    # nothing about hidden work there, and core's perf_counter timer gives no cross-check either.
    host_median = statistics.median(host_timed) if host_timed and not rt.is_cpu else None
    return summarize(samples, timer=TIMER, interpreted=False, l2_flush_bytes=nbytes, l2_persist_reset=False,
                     host_median_us=host_median)
