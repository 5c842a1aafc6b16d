"""Per-candidate summaries of a run, read back from the store: the analysis side of the data flow
(it never imports the run pipeline). What a summary and a speedup are is :mod:`mkbench.metrics`'s."""

from __future__ import annotations

from typing import Any

from .metrics import summarize_candidate
from .store import Store


def summarize_run(store: Store, run_id: int) -> list[dict[str, Any]]:
    """One line per (task, backend, method): the worst verdict over all its shapes and dtypes, and
    its speedups over all shapes and over the large ones (small shapes measure launch overhead;
    the large shapes measure the kernel)."""
    groups: dict[tuple, list[dict]] = {}
    for r in store.results([run_id]):
        groups.setdefault((r["category"], r["task"], r["backend"], r["method"]), []).append(r)
    out = []
    for (category, task, backend, method), rows in groups.items():
        summary = summarize_candidate(rows)
        large = [r for r in rows if r["shape_role"] == "large"]
        out.append({
            "category": category, "task": task, "backend": backend, "method": method,
            "is_baseline": bool(rows[0]["is_baseline"]), "verdict": summary.verdict,
            "correct": summary.correct_count, "skipped": summary.rows_skipped,
            "speedup_eager": summary.speedup(r["speedup_eager"] for r in rows),
            "speedup_compile": summary.speedup(r["speedup_compile"] for r in rows),
            "speedup_eager_large": summary.speedup(r["speedup_eager"] for r in large),
            "speedup_compile_large": summary.speedup(r["speedup_compile"] for r in large),
            "framework_share": summary.framework_share,
            "interpreted": any(r["interpreted"] for r in rows),
            "error": summary.first_error,
        })
    return out
