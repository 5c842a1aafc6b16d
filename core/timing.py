"""Timing of one callable over a rotating pool of input sets.

On a GPU: warm-up outside the numbers, the L2 flushed (a buffer of at least twice the L2 zeroed)
and persisting L2 lines reset before every call, one CUDA event pair per call, repetitions until
the relative standard error of the mean is under the target or the budget is spent, never fewer
than ``min_samples``. On a CPU the same loop runs with ``perf_counter``.
"""

from __future__ import annotations

import ctypes
import glob
import math
import os
import statistics
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from .hardware import HardwareProfile


@dataclass
class TimingSettings:
    warmup_ms: float = 25.0
    budget_ms: float = 1000.0
    min_samples: int = 10
    max_samples: int = 5000
    target_rse: float = 0.01
    pool_size: int = 3
    # "events": one event pair around each Python call (launch overhead included where the GPU
    # waits for the host); "graph": each call captured once in a CUDA graph, replays timed
    # (small kernels: the launch path of the candidate's host code drops out)
    mode: str = "events"


@dataclass
class Timing:
    median_us: float
    iqr_us: float
    mean_us: float
    stderr_us: float
    min_us: float
    n: int
    timer: str
    interpreted: bool
    l2_flush_bytes: int = 0
    l2_persist_reset: bool = False
    # median wall-clock from just before the start event to the end of a device-wide sync: a
    # cross-check that sees work on other streams or threads, which the events do not
    host_median_us: float | None = None

    @property
    def rse(self) -> float:
        return self.stderr_us / self.mean_us if self.mean_us > 0 else math.inf

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["rse"] = self.rse
        return d


def summarize(samples_us: Sequence[float], **kw) -> Timing:
    s = sorted(samples_us)
    n = len(s)
    q = statistics.quantiles(s, n=4, method="inclusive") if n >= 2 else [s[0]] * 3
    mean = statistics.fmean(s)
    sd = statistics.stdev(s) if n >= 2 else 0.0
    return Timing(median_us=statistics.median(s), iqr_us=q[2] - q[0], mean_us=mean,
                  stderr_us=sd / math.sqrt(n), min_us=s[0], n=n, **kw)


def _rse(samples: list[float]) -> float:
    if len(samples) < 2:
        return math.inf
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / math.sqrt(len(samples)) / mean if mean > 0 else math.inf


_cudart = None


def _reset_persisting_l2() -> bool:
    """cudaCtxResetPersistingL2Cache through the CUDA runtime torch loaded; False if unreachable."""
    global _cudart
    if _cudart is None:
        _cudart = False
        candidates = ["libcudart.so"]
        try:
            import nvidia  # CUDA wheels put libcudart under nvidia/*/lib
            for root in nvidia.__path__:
                candidates += glob.glob(os.path.join(root, "**", "libcudart.so*"), recursive=True)
        except ImportError:
            pass
        for name in candidates:
            try:
                _cudart = ctypes.CDLL(name)
                break
            except OSError:
                continue
    if not _cudart:
        return False
    try:
        return _cudart.cudaCtxResetPersistingL2Cache() == 0
    except AttributeError:
        return False


def time_callable(call: Callable[[Sequence[Any]], Any], arg_sets: Sequence[Sequence[Any]],
                  hw: "HardwareProfile", settings: TimingSettings, interpreted: bool = False) -> Timing:
    if hw.device == "cuda":
        return _time_cuda(call, arg_sets, hw, settings, interpreted)
    return _time_host(call, arg_sets, settings, interpreted)


def _keep_going(samples: list[float], spent_ms: float, s: TimingSettings) -> bool:
    n = len(samples)
    if n >= s.max_samples:
        return False
    if n < s.min_samples:
        return True
    return spent_ms < s.budget_ms and _rse(samples) > s.target_rse


def _time_cuda(call, arg_sets, hw, s: TimingSettings, interpreted: bool) -> Timing:
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    l2 = max(int(getattr(props, "L2_cache_size", 0) or 0), int(hw.l2_cache_mb * 2**20))
    flush = torch.empty(max(2 * l2, 2**20) // 4, dtype=torch.int32, device="cuda")
    persist_reset = _reset_persisting_l2()

    host: list[float] = []
    calls = [lambda a=a: call(a) for a in arg_sets]
    if s.mode == "graph":
        calls = _capture_graphs(calls)

    def one(i: int) -> float:
        run = calls[i % len(calls)]
        flush.zero_()
        if persist_reset:
            _reset_persisting_l2()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        start.record()
        run()
        end.record()
        torch.cuda.synchronize()  # device-wide: waits for every stream, not just the timed one
        host.append((time.perf_counter() - t0) * 1e6)
        return start.elapsed_time(end) * 1000.0

    torch.cuda.synchronize()
    t0, i = time.perf_counter(), 0
    while (time.perf_counter() - t0) * 1000 < s.warmup_ms or i < 2:
        one(i)
        i += 1
    samples: list[float] = []
    t0 = time.perf_counter()
    while _keep_going(samples, (time.perf_counter() - t0) * 1000, s):
        samples.append(one(len(samples)))
    torch.cuda.synchronize()
    host_timed = host[-len(samples):]
    return summarize(samples, timer="cuda_graph" if s.mode == "graph" else "cuda_event", interpreted=interpreted,
                     l2_flush_bytes=flush.numel() * 4, l2_persist_reset=persist_reset,
                     host_median_us=statistics.median(host_timed) if host_timed else None)


def _capture_graphs(calls):
    """Warm up on a side stream (as CUDA graph capture requires), then capture each call once;
    replays rerun the same kernels on the same buffers."""
    import torch
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for c in calls:
            c()
    torch.cuda.current_stream().wait_stream(side)
    graphs = []
    for c in calls:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            c()
        graphs.append(g)
    torch.cuda.synchronize()
    return [g.replay for g in graphs]


def measure_launch_overhead(hw: "HardwareProfile") -> dict[str, float]:
    """Median time of an empty Triton kernel and of the smallest torch op, through the same
    event harness as every candidate: the floor under which no per-call time can fall."""
    import torch
    from . import _empty_kernel
    settings = TimingSettings(budget_ms=200, min_samples=50, target_rse=0.0)
    x = torch.empty(1, device="cuda")
    out = {"torch_op_us": time_callable(lambda a: a[0].add_(0), [(x,)], hw, settings).median_us}
    try:
        out["triton_empty_us"] = time_callable(lambda a: _empty_kernel.launch(a[0]), [(x,)], hw, settings).median_us
    except Exception:  # Triton missing or broken: the torch figure still stands
        pass
    return out


def _time_host(call, arg_sets, s: TimingSettings, interpreted: bool) -> Timing:
    call(arg_sets[0])  # warm-up
    samples: list[float] = []
    t0 = time.perf_counter()
    # Interpreted kernels are far slower; their times are recorded, never reported as speed.
    settings = s if not interpreted else TimingSettings(min_samples=3, max_samples=3, budget_ms=0)
    while _keep_going(samples, (time.perf_counter() - t0) * 1000, settings):
        args = arg_sets[len(samples) % len(arg_sets)]
        a = time.perf_counter()
        call(args)
        samples.append((time.perf_counter() - a) * 1e6)
    return summarize(samples, timer="perf_counter", interpreted=interpreted)
