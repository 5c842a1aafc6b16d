"""How busy the GPUs were while a run's session went on, as the driver saw it.

The engine's own clocks say what units waited for (locks, the memory budget, lanes), not whether the
device had work meanwhile. A job whose units wait while the GPU is busy every sample is bound by its
device work, and more units at once cannot make it faster; one that waits while the GPU is idle is
bound by its own schedule. ``nvidia-smi`` (the driver's tool, already used for the machine's state,
:func:`mkbench.environment.gpu_state`) samples every GPU it sees every ``PERIOD_MS``: the share of the
last period in which a kernel ran (``utilization.gpu``) and the memory in use (``memory.used``, every
process's, contexts included). The numbers go into the session's record (``gpu_busy``) and the engine
line. ``nvidia-smi`` ignores ``CUDA_VISIBLE_DEVICES``: it reports every GPU of the host, by its index.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import threading
from typing import Any

PERIOD_MS = 500
QUERY = "index,utilization.gpu,memory.used"


def parse(line: str) -> tuple[int, float, float] | None:
    """``"0, 87, 40213"`` -> (GPU index, busy %, MiB used); None for anything else ("[N/A]", a warning)."""
    fields = [f.strip() for f in line.split(",")]
    if len(fields) != 3:
        return None
    try:
        return int(fields[0]), float(fields[1]), float(fields[2])
    except ValueError:
        return None


def summarize(samples: dict[int, list[tuple[float, float]]]) -> dict[str, Any] | None:
    """Per GPU (by index): samples, mean and median busy %, and memory in use (GiB) at the median, p90
    and most. None without a sample."""
    out = {}
    for index, got in sorted(samples.items()):
        if not got:
            continue
        busy = [b for b, _ in got]
        used = sorted(m / 1024 for _, m in got)
        p90 = used[min(len(used) - 1, int(0.9 * len(used)))]
        out[str(index)] = {"samples": len(got), "busy_mean": round(statistics.fmean(busy), 1),
                           "busy_median": round(statistics.median(busy), 1),
                           "memory_gib_median": round(statistics.median(used), 2),
                           "memory_gib_p90": round(p90, 2), "memory_gib_max": round(used[-1], 2)}
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
        self._samples: dict[int, list[tuple[float, float]]] = {}

    def start(self) -> "GpuBusy":
        exe = shutil.which(self.command)
        if exe is None:
            return self
        try:
            self._proc = subprocess.Popen([exe, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits",
                                           f"-lms={self.period_ms}"], stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, text=True)
        except OSError:
            return self
        self._thread = threading.Thread(target=self._read, name="gpu-busy", daemon=True)
        self._thread.start()
        return self

    def _read(self) -> None:
        for line in self._proc.stdout:
            got = parse(line)
            if got is not None:
                index, busy, used = got
                self._samples.setdefault(index, []).append((busy, used))

    def record(self) -> dict[str, Any] | None:
        """What was sampled so far (the sampler goes on)."""
        return summarize({k: list(v) for k, v in self._samples.items()})

    def stop(self) -> dict[str, Any] | None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._proc = None
        return self.record()
