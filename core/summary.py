"""Per-candidate summaries of a run, read back from the store: the analysis side of the data flow
(it never imports the run pipeline)."""

from __future__ import annotations

import math
from typing import Any

from .store import Store
from .verdicts import Verdict, worst


def geomean(values) -> float | None:
    """Geometric mean of the positive, finite values (None, NaN and zeros are no measurement)."""
    values = [float(v) for v in values if v is not None and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarize_run(store: Store, run_id: int) -> list[dict[str, Any]]:
    """One line per (task, backend, method): the worst verdict over all its shapes and dtypes."""
    groups: dict[tuple, list[dict]] = {}
    for r in store.results([run_id]):
        groups.setdefault((r["category"], r["task"], r["backend"], r["method"]), []).append(r)
    out = []
    for (category, task, backend, method), rows in groups.items():
        evaluated = [r for r in rows if r["verdict"] != Verdict.SKIPPED]
        correct = [r for r in evaluated if r["verdict"] == Verdict.CORRECT]
        summary = worst(r["verdict"] for r in evaluated) or Verdict.SKIPPED
        first_error = next((r["error"] for r in evaluated if r["verdict"] == summary and r["error"]), "")
        shares = [r["extra"].get("framework_share") for r in evaluated if r["extra"].get("framework_share") is not None]
        out.append({
            "category": category, "task": task, "backend": backend, "method": method,
            "is_baseline": bool(rows[0]["is_baseline"]), "verdict": str(summary),
            "correct": f"{len(correct)}/{len(evaluated)}", "skipped": len(rows) - len(evaluated),
            "speedup_eager": geomean([r["speedup_eager"] for r in correct if r["speedup_eager"]]),
            "speedup_compile": geomean([r["speedup_compile"] for r in correct if r["speedup_compile"]]),
            # Small shapes measure launch overhead; the large shapes measure the kernel.
            "speedup_eager_large": geomean([r["speedup_eager"] for r in correct if r["speedup_eager"] and r["shape_role"] == "large"]),
            "speedup_compile_large": geomean([r["speedup_compile"] for r in correct if r["speedup_compile"] and r["shape_role"] == "large"]),
            "framework_share": max(shares) if shares else None,
            "interpreted": any(r["interpreted"] for r in rows),
            "error": first_error,
        })
    return out
