"""How busy the GPUs were while a run's session went on, as the driver saw it.

The engine's own clocks say what units waited for (locks, the memory budget, lanes), not whether the
device had work meanwhile. A job whose units wait while the GPU is busy every sample is bound by its
device work, and more units at once cannot make it faster; one that waits while the GPU is idle is
bound by its own schedule. ``nvidia-smi`` (the driver's tool, already used for the machine's state,
:func:`mkbench.environment.gpu_state`) samples every GPU it sees every ``PERIOD_MS``: the share of the
last period in which a kernel ran (``utilization.gpu``) and the memory in use (``memory.used``, every
process's, contexts included). The numbers go into the session's record (``gpu_busy``) and the engine
line. ``nvidia-smi`` ignores ``CUDA_VISIBLE_DEVICES``: it reports every GPU of the host, by its index.

It also samples each GPU's SM clock and why the driver held it down (``clocks_throttle_reasons``):
the same kernel timed 5-6% apart on the four H200s of one host (reports/2026-11-28-calls, call 35),
and a GPU that ran at a lower clock while busy, or under a power or thermal cap, says why.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import threading
from typing import Any, NamedTuple

PERIOD_MS = 500
QUERY = "index,utilization.gpu,memory.used,clocks.sm,clocks_throttle_reasons.active"
#: asked where the driver's tool refuses ``QUERY`` (it names the throttle reasons' field differently
#: across driver versions): the busy share and memory still sampled, the clocks not
BASIC_QUERY = "index,utilization.gpu,memory.used"
#: NVML's clock event reasons that slow a busy GPU down: the software power cap (0x4), hardware slowdown
#: (0x8), software and hardware thermal slowdown (0x20, 0x40) and the hardware power brake (0x80); not
#: idle (0x1), application clocks (0x2), sync boost (0x10) or display clocks (0x100)
SLOWDOWN = 0x4 | 0x8 | 0x20 | 0x40 | 0x80


class Sample(NamedTuple):
    index: int
    busy: float          # % of the last period in which a kernel ran
    used_mib: float      # memory in use, every process's
    sm_mhz: float | None = None   # the SM clock (None where the tool could not say)
    reasons: int | None = None    # the clock event reasons' bit mask (None where the tool could not say)


def _number(text: str, parse_as=float):
    try:
        return parse_as(text)
    except ValueError:
        return None


def parse(line: str) -> Sample | None:
    """``"0, 87, 40213, 1980, 0x0000000000000000"`` (or its first three fields, from an older query) ->
    a :class:`Sample`; None for anything else (a warning, "[N/A]" busy or memory). A clock or reason the
    tool cannot give ("[N/A]", "[Not Supported]") is None."""
    fields = [f.strip() for f in line.split(",")]
    if len(fields) not in (3, 5):
        return None
    try:
        index, busy, used = int(fields[0]), float(fields[1]), float(fields[2])
    except ValueError:
        return None
    if len(fields) == 3:
        return Sample(index, busy, used)
    return Sample(index, busy, used, _number(fields[3]), _number(fields[4], lambda x: int(x, 16)))


def summarize(samples: dict[int, list[Sample]]) -> dict[str, Any] | None:
    """Per GPU (by index): samples, mean and median busy %, and memory in use (GiB) at the median, p90
    and most; over its busy samples (a kernel ran), where the tool gave them, the median SM clock
    (``sm_mhz_busy_median``) and the share slowed by a power or thermal cap (``slowdown_share``, the
    :data:`SLOWDOWN` reasons). None without a sample."""
    out = {}
    for index, got in sorted(samples.items()):
        if not got:
            continue
        busy = [s.busy for s in got]
        used = sorted(s.used_mib / 1024 for s in got)
        p90 = used[min(len(used) - 1, int(0.9 * len(used)))]
        g = out[str(index)] = {"samples": len(got), "busy_mean": round(statistics.fmean(busy), 1),
                               "busy_median": round(statistics.median(busy), 1),
                               "memory_gib_median": round(statistics.median(used), 2),
                               "memory_gib_p90": round(p90, 2), "memory_gib_max": round(used[-1], 2)}
        working = [s for s in got if s.busy > 0]
        clocks = [s.sm_mhz for s in working if s.sm_mhz is not None]
        if clocks:
            g["sm_mhz_busy_median"] = round(statistics.median(clocks), 1)
        reasons = [s.reasons for s in working if s.reasons is not None]
        if reasons:
            g["slowdown_share"] = round(sum(1 for r in reasons if r & SLOWDOWN) / len(reasons), 3)
    return {"period_ms": PERIOD_MS, "gpus": out} if out else None


def busy_text(record: dict[str, Any] | None) -> str | None:
    """``GPU busy 87%`` (one GPU) or ``GPUs busy 85-91% (4)`` for the engine line; None without samples."""
    gpus = (record or {}).get("gpus") or {}
    means = [g["busy_mean"] for g in gpus.values() if isinstance(g, dict) and "busy_mean" in g]
    if not means:
        return None
    if len(means) == 1:
        return f"GPU busy {means[0]:.0f}%"
    return f"GPUs busy {min(means):.0f}-{max(means):.0f}% ({len(means)})"


class GpuBusy:
    """Samples in a thread from ``start()`` to ``stop()``; a host without ``nvidia-smi`` samples nothing."""

    def __init__(self, command: str = "nvidia-smi", period_ms: int = PERIOD_MS):
        self.command, self.period_ms = command, period_ms
        self._proc: subprocess.Popen | None = None
        self._thread: threading.Thread | None = None
        self._samples: dict[int, list[Sample]] = {}
        self._stopping = False

    def start(self) -> "GpuBusy":
        exe = shutil.which(self.command)
        if exe is None:
            return self
        self._stopping = False
        self._thread = threading.Thread(target=self._read, args=(exe,), name="gpu-busy", daemon=True)
        self._thread.start()
        return self

    def _read(self, exe: str) -> None:
        """Reads the tool's samples until it ends; a tool that ends without one sample (it refused the
        query) is asked again with :data:`BASIC_QUERY`."""
        for query in (QUERY, BASIC_QUERY):
            try:
                proc = subprocess.Popen([exe, f"--query-gpu={query}", "--format=csv,noheader,nounits",
                                         f"-lms={self.period_ms}"], stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
            except OSError:
                return
            self._proc = proc
            if self._stopping:  # stop() came while it started
                proc.terminate()
            for line in proc.stdout:
                got = parse(line)
                if got is not None:
                    self._samples.setdefault(got.index, []).append(got)
            proc.wait()
            if self._samples or self._stopping:
                return

    def record(self) -> dict[str, Any] | None:
        """What was sampled so far (the sampler goes on)."""
        return summarize({k: list(v) for k, v in self._samples.items()})

    def stop(self) -> dict[str, Any] | None:
        self._stopping = True
        proc = self._proc
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
        if self._thread is not None:
            self._thread.join(timeout=5)
            proc = self._proc  # the basic query's, if the tool refused the first while stopping
            if proc is not None and proc.poll() is None:
                proc.kill()
        self._proc = self._thread = None
        return self.record()
