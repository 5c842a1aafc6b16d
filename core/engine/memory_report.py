"""How the device-memory plan compared with what units held: the data for its factors.

The memory budget (:mod:`.device`) admits a unit when its planned share fits: ``FOOTPRINT_FACTOR`` and
``JUDGE_FACTOR`` times the task's bytes, plus ``CONTEXT_BYTES`` for the two CUDA contexts. On an H200
main job units waited for that budget 31% of their time (``reports/2026-11-27-main-job-preload``),
while the factors were never checked against a measurement. Each unit now records, in its rows'
``extra["unit_memory"]``, its ``planned`` bytes and the peaks of torch's allocator in its judges
(``judge_peak``, trusted) and its worker (``worker_peak``, as the worker said). Allocator peaks leave
out the CUDA contexts, so they are set against the plan less ``CONTEXT_BYTES``.
"""

from __future__ import annotations

import statistics
from typing import Any, Iterable

from .memory import CONTEXT_BYTES

GIB = float(1 << 30)


def unit_memory(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per unit that has a plan and a peak: task, method, baseline, planned, measured (bytes)."""
    seen: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        key = (r.get("run_id"), r.get("task"), r.get("backend"), r.get("method"))
        mem = (r.get("extra") or {}).get("unit_memory")
        if key in seen or not isinstance(mem, dict) or not mem.get("planned"):
            continue
        peaks = [mem.get(k) for k in ("judge_peak", "worker_peak") if isinstance(mem.get(k), int)]
        if peaks:
            seen[key] = {"task": r.get("task"), "method": r.get("method"), "baseline": bool(r.get("is_baseline")),
                         "planned": int(mem["planned"]), "measured": sum(peaks),
                         "judge": mem.get("judge_peak"), "worker": mem.get("worker_peak")}
    return list(seen.values())


def _ratio(u: dict[str, Any]) -> float:
    return u["measured"] / (u["planned"] - CONTEXT_BYTES)


def _counted(u: dict[str, Any]) -> bool:
    """Whether the unit's plan counts any bytes beyond the contexts. A task with no byte count (many
    imported ones) is admitted on the contexts alone: no ratio to a plan of nothing (a CUDA-L1 run's
    table read 1.8e9x over plan for a level-3 model)."""
    return u["planned"] > CONTEXT_BYTES


def memory_table(units: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """Per group (candidates, baselines): units, planned and measured GiB summed, and the measured /
    planned ratio's median, 90th percentile and maximum, with the units measured over their plan. Units
    whose tasks count no bytes are a group of their own, without ratios."""
    headers = ["units", "count", "planned GiB", "allocators' peak GiB", "peak / plan: median", "p90", "max",
               "over plan"]
    table = []
    for name, group in (("candidates", [u for u in units if not u["baseline"] and _counted(u)]),
                        ("baselines", [u for u in units if u["baseline"] and _counted(u)])):
        if not group:
            continue
        ratios = sorted(_ratio(u) for u in group)
        table.append([name, len(group), round(sum(u["planned"] for u in group) / GIB, 1),
                      round(sum(u["measured"] for u in group) / GIB, 1), round(statistics.median(ratios), 3),
                      round(ratios[min(len(ratios) - 1, int(0.9 * len(ratios)))], 3), round(ratios[-1], 3),
                      sum(r > 1 for r in ratios)])
    uncounted = [u for u in units if not _counted(u)]
    if uncounted:
        table.append(["no byte count (contexts only)", len(uncounted),
                      round(sum(u["planned"] for u in uncounted) / GIB, 1),
                      round(sum(u["measured"] for u in uncounted) / GIB, 1), "-", "-", "-", "-"])
    return headers, table


def extremes(units: list[dict[str, Any]], n: int = 5) -> list[str]:
    """The units furthest over their plan and the largest plans least used, one line each."""
    def line(u: dict[str, Any]) -> str:
        return (f"{u['task']} {u['method']}: planned {u['planned'] / GIB:.1f} GiB, judge {(u['judge'] or 0) / GIB:.1f}"
                f" + worker {(u['worker'] or 0) / GIB:.1f} GiB ({_ratio(u):.2f}x the plan less contexts)")
    counted = [u for u in units if _counted(u)]
    over = sorted((u for u in counted if _ratio(u) > 1), key=_ratio, reverse=True)[:n]
    idle = sorted(counted, key=lambda u: u["planned"] - CONTEXT_BYTES - u["measured"], reverse=True)[:n]
    largest = max((u for u in units if not _counted(u)), key=lambda u: u["measured"], default=None)
    return ([f"over plan: {line(u)}" for u in over]
            + [f"most unused: {line(u)}" for u in idle if u["planned"] - CONTEXT_BYTES > u["measured"]]
            + ([f"no byte count, the largest: {largest['task']} {largest['method']}: judge "
                f"{(largest['judge'] or 0) / GIB:.1f} + worker {(largest['worker'] or 0) / GIB:.1f} GiB, admitted "
                "on the contexts alone"] if largest else []))
