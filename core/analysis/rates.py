"""Per-task attempts and the rates over them: compile, correct, hack-flagged, fast_p over eager
and over torch.compile, geometric-mean speedup, the share of correct kernels slower than eager,
and roofline efficiency.

An *attempt* is one (run, hardware, backend, method, task), a candidate in the sense of
:mod:`mkbench.metrics`: correct when every evaluated shape and dtype is correct, and only then with
a speedup, the geometric mean over the rows of the selected shape roles (default: the large,
timing-sized shapes; small shapes mostly measure launch overhead). Row speedups are recomputed
from stored medians (:func:`mkbench.metrics.speedup`) against the baselines of the same run, so a
baseline is compared with the other baseline too (torch.compile vs eager).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..hardware import HardwareProfile, roofline_floor_us
from ..metrics import geomean, speedup, summarize_candidate
from ..verdicts import Verdict, counts_as_correct
from .dataset import ResultSet

FAST_P = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)
BASELINES = ("eager", "torch_compile")
ATTEMPT_KEYS = ["hw", "backend", "method", "category", "task", "run_key"]


def _with_speedups(rows: pd.DataFrame) -> pd.DataFrame:
    """Per-row speedups against each baseline of the same run, from stored medians. A row has one
    when it is correct and timed as speed (not interpreted), and is not that baseline itself."""
    rows = rows.copy()
    timed = (rows["verdict"].map(counts_as_correct) & rows["time_median_us"].notna()
             & (rows["interpreted"].fillna(0) == 0))
    keys = pd.MultiIndex.from_frame(rows[["run_key", "task", "shape", "dtype"]])
    for base in BASELINES:
        ref = rows[timed & (rows["method"] == base)].set_index(["run_key", "task", "shape", "dtype"])["time_median_us"]
        ref = ref[~ref.index.duplicated()]
        base_us = ref.reindex(keys).to_numpy()
        eligible = (timed & (rows["method"] != base)).to_numpy()
        rows[f"vs_{base}"] = [_nan_if_none(speedup(b, t)) if ok else np.nan
                              for b, t, ok in zip(base_us, rows["time_median_us"].to_numpy(dtype=float), eligible)]
    return rows


def _nan_if_none(x: float | None) -> float:
    return np.nan if x is None else x


def _efficiency(rows: pd.DataFrame, profiles: dict[str, HardwareProfile]) -> pd.Series:
    """Achieved fraction of the roofline: the profile's floor time for the row's bytes and FLOPs
    over the measured median (1.0 = at the datasheet roof)."""
    out = []
    for r in rows.itertuples(index=False):
        hw = profiles.get(r.hw)
        t = r.time_median_us
        if hw is None or hw.device == "cpu" or not counts_as_correct(r.verdict) or not t or (r.interpreted or 0):
            out.append(np.nan)
            continue
        floor = roofline_floor_us({"dtype": r.dtype, "bytes": r.bytes, "flops": r.flops,
                                    "extra": getattr(r, "extra", None)}, hw)
        out.append(floor / t if floor else np.nan)
    return pd.Series(out, index=rows.index, dtype=float)


def attempt_table(results: ResultSet, profiles: dict[str, HardwareProfile],
                  roles: tuple[str, ...] = ("large",)) -> pd.DataFrame:
    """One row per attempt (see module docstring)."""
    rows = results.rows
    if rows.empty:
        return pd.DataFrame(columns=ATTEMPT_KEYS)
    rows = rows[rows["verdict"] != Verdict.SKIPPED]
    rows = _with_speedups(rows)
    rows = rows.assign(efficiency=_efficiency(rows, profiles))
    out = []
    for key, g in rows.groupby(ATTEMPT_KEYS, sort=True):
        rec = dict(zip(ATTEMPT_KEYS, key))
        summary = summarize_candidate(g[[c for c in ("verdict", "error", "extra") if c in g]].to_dict("records"))
        timed = g[g["shape_role"].isin(roles)] if roles else g
        correct = summary.correct
        imported = _import_metadata(g)
        rec.update(
            is_baseline=bool(g["is_baseline"].iloc[0]),
            timing=_timing(g),
            level=imported.get("level"),
            gpu_set=imported.get("gpu_set"),
            recorded=imported.get("recorded") or {},
            # rows imported with --variant: which code, and its recorded speedup over eager
            variant=imported.get("variant"),
            recorded_vs_eager=imported.get("recorded_vs_eager"),
            combos=len(g),
            compiled=bool((g["compile_status"] == "ok").all()),
            correct=correct,
            hack=bool((g["verdict"] == Verdict.HACK).any()),
            verdict=summary.verdict,
            correct_count=summary.correct_count,
            first_error=summary.first_error,
            framework_share=summary.framework_share,
            speedup_eager=summary.speedup(timed["vs_eager"]),
            speedup_compile=summary.speedup(timed["vs_torch_compile"]),
            # per (shape, dtype): comparisons across hardware use only the combinations timed on every
            # side (a baseline that failed its contract on one card has no time to divide there)
            speedup_eager_by_combo=_by_combo(timed, "vs_eager") if correct else {},
            speedup_compile_by_combo=_by_combo(timed, "vs_torch_compile") if correct else {},
            # the same gate as the speedups: numbers of a candidate that fails some shapes would hide it
            efficiency=geomean(timed["efficiency"]) if correct else None,
            time_us=geomean(timed["time_median_us"]) if correct else None,
            flops=float(timed["flops"].mean()) if len(timed) else None,
            bytes=float(timed["bytes"].mean()) if len(timed) else None,
        )
        out.append(rec)
    return pd.DataFrame(out)


def _timing(g: pd.DataFrame) -> str:
    """How an attempt's rows were timed: ``timed`` (a device or host time that is a speed),
    ``interpreted`` (times under an interpreter, never speed), ``compiled`` (built, not run) or
    ``untimed`` (no time: --no-timing, or nothing ran)."""
    has_time = g["time_median_us"].notna()
    interpreted = g["interpreted"].fillna(0).astype(bool)
    if (has_time & ~interpreted).any():
        return "timed"
    if has_time.any():
        return "interpreted"
    if (g["verdict"] == Verdict.COMPILED).any():
        return "compiled"
    return "untimed"


def _import_metadata(g: pd.DataFrame) -> dict[str, Any]:
    """What an importer recorded about the attempt's candidate (``extra["import"]``, copied from
    the solutions folder's manifest by `mkbench run`); {} for other rows and older stores."""
    for extra in g["extra"]:
        if isinstance(extra, dict) and isinstance(extra.get("import"), dict):
            return extra["import"]
    return {}


def _by_combo(rows: pd.DataFrame, column: str) -> dict[str, float]:
    return {f"{r.shape}/{r.dtype}": float(v) for r, v in zip(rows.itertuples(index=False), rows[column])
            if v is not None and np.isfinite(v) and v > 0}


def fast_p(attempts: pd.DataFrame, p: float, column: str = "speedup_eager") -> float:
    """KernelBench's fast_p: the share of attempted tasks that are correct AND faster than the
    baseline by more than p (p = 0: correct with a measured speedup)."""
    if attempts.empty:
        return float("nan")
    s = attempts[column].astype(float)
    return float((attempts["correct"] & s.notna() & (s > p)).sum() / len(attempts))


#: why a group has no fast_p, by how its attempts were timed
NO_SPEED = {
    "interpreted": "interpreted: times under an interpreter are not speed",
    "compiled": "compiled only: nothing ran on this machine",
    "untimed": "not timed (--no-timing, or nothing ran)",
}
BASE_OF = {"speedup_eager": "eager", "speedup_compile": "torch_compile"}


def fast_p_reason(group: pd.DataFrame, attempts: pd.DataFrame, column: str) -> str | None:
    """Why fast_p over ``column``'s baseline means nothing for ``group`` (then it is shown as
    "-"), or None when it is a measurement: some attempt was timed as speed, and so was the
    baseline in the same runs."""
    statuses = set(group["timing"])
    if "timed" not in statuses:
        worst = next(s for s in ("interpreted", "compiled", "untimed") if s in statuses)
        return NO_SPEED[worst]
    base = BASE_OF[column]
    if set(group["method"]) == {base}:
        return f"{base} is this baseline"
    timed_base = attempts[(attempts["method"] == base) & attempts["is_baseline"] & (attempts["timing"] == "timed")
                          & attempts["run_key"].isin(set(group["run_key"]))]
    if timed_base.empty:
        return f"no {base} baseline timed in these runs"
    return None


def _rate_row(group: pd.DataFrame, attempts: pd.DataFrame) -> dict[str, Any]:
    correct = group[group["correct"]]
    sp = correct["speedup_eager"].dropna().astype(float)
    row = {
        "tasks": len(group),
        "compile": group["compiled"].mean(),
        "correct": group["correct"].mean(),
        "hack": group["hack"].mean(),
        "geomean_vs_eager": geomean(sp),
        "geomean_vs_compile": geomean(correct["speedup_compile"].dropna().astype(float)),
        "slower_than_eager": float((sp < 1).mean()) if len(sp) else None,
        "roofline_eff": float(np.median(correct["efficiency"].dropna())) if correct["efficiency"].notna().any()
        else None,
    }
    for column, suffix in (("speedup_eager", "eager"), ("speedup_compile", "compile")):
        reason = fast_p_reason(group, attempts, column)
        row[f"fast_p_{suffix}_note"] = reason
        for p in FAST_P:
            row[f"fast_{p:g}_{suffix}"] = None if reason else fast_p(group, p, column)
    return row


def rates_table(attempts: pd.DataFrame, by: tuple[str, ...] = ("hw", "backend", "method", "category"),
                totals: bool = True) -> pd.DataFrame:
    """Rates per group; with ``totals``, an 'all' category line per (hw, backend, method). fast_p
    is None (with ``fast_p_eager_note``/``fast_p_compile_note`` saying why) where the group's
    times are not speed measurements (:func:`fast_p_reason`)."""
    if attempts.empty:
        return pd.DataFrame()
    out = []
    for key, g in attempts.groupby(list(by), sort=True, dropna=False):
        out.append({**dict(zip(by, key if isinstance(key, tuple) else (key,))), **_rate_row(g, attempts)})
    if totals and "category" in by:
        outer = [c for c in by if c != "category"]
        for key, g in attempts.groupby(outer, sort=True, dropna=False):
            out.append({**dict(zip(outer, key if isinstance(key, tuple) else (key,))), "category": "(all)",
                        **_rate_row(g, attempts)})
    return pd.DataFrame(out).sort_values(list(by)).reset_index(drop=True)
