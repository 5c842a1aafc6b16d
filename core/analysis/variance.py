"""Cross-hardware speedup variance and cross-backend portability.

Cross-hardware: for each (task, backend, method) with a speedup on two or more hardware profiles,
the max/min ratio and coefficient of variation of its speedup. A problem is compared across
hardware only if it is the same problem: the stored FLOP and byte counts of its timed shapes must
agree, otherwise the pair is listed as not comparable (task revisions change shapes).

Cross-backend: the same task on every backend measured on the same hardware, side by side.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def cross_hardware(attempts: pd.DataFrame, column: str = "speedup_eager") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(spreads, not_comparable): spreads sorted by max/min ratio, largest first."""
    a = attempts[attempts["correct"] & attempts[column].notna()]
    spreads, mismatched = [], []
    for (task, backend, method), g in a.groupby(["task", "backend", "method"]):
        if g["hw"].nunique() < 2:
            continue
        sizes = g[["flops", "bytes"]].round(0).drop_duplicates()
        if len(sizes) > 1:
            mismatched.append({"task": task, "backend": backend, "method": method, "hw": ", ".join(sorted(g["hw"])),
                               "why": "problem sizes differ between the runs (bytes " + ", ".join(f"{b:.3g}" for b in g["bytes"]) + ")"})
            continue
        per_hw = g.groupby("hw")[column].mean()
        s = per_hw.astype(float)
        spreads.append({"task": task, "category": g["category"].iloc[0], "backend": backend, "method": method,
                        "hw": ", ".join(f"{h}={v:.2f}" for h, v in s.items()), "n_hw": len(s),
                        "max_min_ratio": float(s.max() / s.min()), "cv": float(s.std(ddof=0) / s.mean())})
    cols = ["task", "category", "backend", "method", "hw", "n_hw", "max_min_ratio", "cv"]
    out = pd.DataFrame(spreads, columns=cols).sort_values("max_min_ratio", ascending=False).reset_index(drop=True)
    return out, pd.DataFrame(mismatched, columns=["task", "backend", "method", "hw", "why"])


def paired_speedups(attempts: pd.DataFrame, hw_a: str, hw_b: str, column: str = "speedup_eager") -> pd.DataFrame:
    """Speedups of the same (task, backend, method) on two profiles, for the log-log scatter."""
    a = attempts[attempts["correct"] & attempts[column].notna()]
    keys = ["task", "backend", "method"]
    both = a[a["hw"] == hw_a].merge(a[a["hw"] == hw_b], on=keys, suffixes=("_a", "_b")).set_index(keys)
    same = (both["bytes_a"].round(0) == both["bytes_b"].round(0)) & (both["flops_a"].round(0) == both["flops_b"].round(0))
    both = both[same]
    return pd.DataFrame({"category": both["category_a"], "a": both[f"{column}_a"].astype(float),
                         "b": both[f"{column}_b"].astype(float)}).reset_index()


def cross_backend(attempts: pd.DataFrame, column: str = "speedup_eager") -> pd.DataFrame:
    """Task x backend on each hardware profile: verdict and speedup, and whether the task is
    correct on every backend that ran there and compiled on those that could only compile
    (portable)."""
    a = attempts[~attempts["is_baseline"]]
    rows = []
    for (hw, category, task), g in a.groupby(["hw", "category", "task"]):
        rec = {"hw": hw, "category": category, "task": task}
        for r in g.itertuples(index=False):
            label = r.backend if g["method"].nunique() == 1 else f"{r.backend}/{r.method}"
            sp = getattr(r, column)
            rec[label] = "correct" + (f" {sp:.2f}x" if sp is not None and not np.isnan(sp) else "") if r.correct else r.verdict
        rec["backends"] = g["backend"].nunique()
        # A backend that could only compile here (CUDA without an NVIDIA GPU) counts when it
        # compiled; portability needs at least two backends that ran, all correct.
        built = g["verdict"] == "compiled"
        rec["compile_only"] = int(built.sum())
        rec["portable"] = bool((g["correct"] | built).all()) and int((~built).sum()) > 1
        rows.append(rec)
    return pd.DataFrame(rows)
