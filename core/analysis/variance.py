"""Cross-hardware speedup variance and cross-backend portability.

Cross-hardware: for each (task, backend, method) with a speedup on two or more hardware profiles,
the max/min ratio and coefficient of variation of its speedup. A problem is compared across
hardware only if it is the same problem: the stored FLOP and byte counts of its timed shapes must
agree, otherwise the pair is listed as not comparable (task revisions change shapes). The speedup
on each profile is the geometric mean over the (shape, dtype) combinations that have one on every
compared profile: where a baseline missed its contract on one card (a bf16 eager op chain can miss
on one element in 10^7), that combination has no speedup there, and averaging different sets of
combinations would report the difference between dtypes as a difference between cards.

Cross-backend: the same task on every backend measured on the same hardware, side by side.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics import geomean
from ..verdicts import Verdict


def cross_hardware(attempts: pd.DataFrame, column: str = "speedup_eager") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(spreads, not_comparable): spreads sorted by max/min ratio, largest first."""
    a = attempts[attempts["correct"] & attempts[column].notna()]
    spreads, mismatched = [], []
    for (task, backend, method), g in a.groupby(["task", "backend", "method"]):
        if g["hw"].nunique() < 2:
            continue
        if not _same_problem(g):
            mismatched.append({"task": task, "backend": backend, "method": method, "hw": ", ".join(sorted(g["hw"])),
                               "why": "problem sizes differ between the runs (bytes "
                                      + ", ".join(f"{b:.3g}" for b in g["bytes"]) + ")"})
            continue
        per_hw, common = matched_speedups(g, column)
        if not per_hw:
            mismatched.append({"task": task, "backend": backend, "method": method, "hw": ", ".join(sorted(g["hw"])),
                               "why": "no (shape, dtype) has a speedup on every profile"})
            continue
        s = pd.Series(per_hw, dtype=float)
        spreads.append({"task": task, "category": g["category"].iloc[0], "backend": backend, "method": method,
                        "hw": ", ".join(f"{h}={v:.2f}" for h, v in s.items()), "n_hw": len(s),
                        "combos": ", ".join(common), "max_min_ratio": float(s.max() / s.min()),
                        "cv": float(s.std(ddof=0) / s.mean())})
    cols = ["task", "category", "backend", "method", "hw", "n_hw", "combos", "max_min_ratio", "cv"]
    out = pd.DataFrame(spreads, columns=cols).sort_values("max_min_ratio", ascending=False).reset_index(drop=True)
    return out, pd.DataFrame(mismatched, columns=["task", "backend", "method", "hw", "why"])


def _same_problem(g: pd.DataFrame) -> bool:
    """Whether every row measured the same problem: equal stored FLOP and byte counts."""
    return len(g[["flops", "bytes"]].round(0).drop_duplicates()) <= 1


def matched_speedups(g: pd.DataFrame, column: str = "speedup_eager") -> tuple[dict[str, float], list[str]]:
    """({hw: geometric-mean speedup}, combinations) over the (shape, dtype) combinations that have
    a speedup on every profile in ``g`` (several runs on one profile: each combination's geometric
    mean over them). Empty when no combination is shared."""
    by_hw: dict[str, dict[str, list[float]]] = {}
    for hw, combos in zip(g["hw"], g[f"{column}_by_combo"]):
        for combo, v in (combos or {}).items():
            by_hw.setdefault(hw, {}).setdefault(combo, []).append(v)
    if len(by_hw) < g["hw"].nunique():
        return {}, []
    common = sorted(set.intersection(*(set(d) for d in by_hw.values())))
    if not common:
        return {}, []
    return {hw: geomean([geomean(d[c]) for c in common]) for hw, d in sorted(by_hw.items())}, common


def paired_speedups(attempts: pd.DataFrame, hw_a: str, hw_b: str, column: str = "speedup_eager") -> pd.DataFrame:
    """Speedups of the same (task, backend, method) on two profiles, over the same (shape, dtype)
    combinations, for the log-log scatter."""
    a = attempts[attempts["correct"] & attempts[column].notna() & attempts["hw"].isin([hw_a, hw_b])]
    rows = []
    for (task, backend, method), g in a.groupby(["task", "backend", "method"]):
        if g["hw"].nunique() < 2 or not _same_problem(g):
            continue
        per_hw, _ = matched_speedups(g, column)
        if per_hw:
            rows.append({"task": task, "backend": backend, "method": method, "category": g["category"].iloc[0],
                         "a": per_hw[hw_a], "b": per_hw[hw_b]})
    return pd.DataFrame(rows, columns=["task", "backend", "method", "category", "a", "b"])


def portable(task_rows: pd.DataFrame) -> bool:
    """One task's rows, a backend each (``verdict``, ``correct``): correct on every backend that ran it
    and compiled on those that could only compile (CUDA without an NVIDIA GPU counts where it
    compiled), with at least two backends that ran."""
    built = task_rows["verdict"] == Verdict.COMPILED
    return bool((task_rows["correct"].astype(bool) | built).all()) and int((~built).sum()) > 1


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
            rec[label] = "correct" + (f" {sp:.2f}x" if sp is not None and not np.isnan(sp)
                                      else "") if r.correct else r.verdict
        rec["backends"] = g["backend"].nunique()
        rec["compile_only"] = int((g["verdict"] == Verdict.COMPILED).sum())
        rec["portable"] = portable(g)
        rows.append(rec)
    return pd.DataFrame(rows)
