"""The portability matrix: every backend's candidates (normally its reference kernels) on one
hardware profile, each task against the eager baseline of the same run.

Per (task, backend) *cell*: the verdict over every evaluated shape and dtype with its count
(``93/93``), the speedup over eager (:mod:`mkbench.metrics`: the geometric mean over the timed
shape roles, only for a cell correct on every shape and dtype), and the timer the rows were taken
with. Where a cell has no speedup its ``note`` says why (no reference kernel, not in the run, not
correct, not timed, no eager time), so a table can print "-" with the reason, never a number.

Per backend: tasks with a kernel, how many are correct, the median per-task speedup over eager
(and over the tasks every backend has a speedup for, the only medians that compare like with like
when the backends' task sets differ), and the slowest and fastest task.

Slow cells (speedup under :data:`SLOW`) carry a reason derived from the rows: a timer of another
kind than eager's, where the time sits on the profile's roofline (memory- or compute-bound, at what
share of the peak, next to eager's share on the same rows), host-bound samples, an eager time near
the launch overhead, and a limitation the reference kernel declares itself (a module-level
``LIMITATION = "..."`` string, read without importing the file, and only from the very source that
was measured: its hash must match the row's).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..candidate import source_hash
from ..hardware import HardwareProfile, roofline_times_us
from ..metrics import geomean, median
from ..verdicts import Verdict, counts_as_correct
from .dataset import ResultSet
from .rates import NO_SPEED, attempt_table
from .variance import portable

#: a cell more than this many times slower than eager (speedup below it) is listed with a reason
SLOW = 0.5

# What each timer's span holds, so a reader can tell which speedups compare like with like.
TIMER_MEANING = {
    "cuda_event": "CUDA events around each call",
    "cuda_graph": "CUDA events around CUDA-graph replays",
    "opencl-profiling-events": "OpenCL profiling events (include waits for the host)",
    "device-sync-host-clock": "host clock to a device-wide sync (includes dispatch)",
    "perf_counter": "host clock (CPU)",
    "host-clock": "host clock (CPU)",
}



@dataclass
class Portability:
    """The matrix on one hardware profile (see the module docstring)."""

    hw: str
    device: str
    roles: tuple[str, ...]
    backends: list[str]          # column labels: the backend, or backend/method for a method other than reference
    cells: pd.DataFrame          # one row per (task, backend label), tasks any backend ran
    per_backend: pd.DataFrame    # one row per backend label
    slow: pd.DataFrame           # cells with speedup < SLOW, slowest first, with a reason
    common_tasks: list[str] = field(default_factory=list)  # tasks with a speedup on every backend
    eager_timer: str = ""        # the timer(s) of the eager baseline's rows
    notes: list[str] = field(default_factory=list)

    @property
    def portable_tasks(self) -> list[str]:
        """Tasks :func:`.variance.portable` over the matrix's cells, so that a later run of a (task, backend)
        replaces an earlier one here as it does in the matrix."""
        ran = self.cells[self.cells["verdict"].notna() & (self.cells["verdict"] != Verdict.MISSING)]
        return [task for task, g in ran.groupby("task", sort=True) if portable(g)]

    def summary(self) -> dict[str, Any]:
        """What summary.json holds: per backend its tasks, correct count and median speedup over eager."""
        backends = {}
        for r in self.per_backend.itertuples(index=False):
            backends[r.backend] = {
                "tasks": int(r.tasks), "correct": int(r.correct), "timed": int(r.timed),
                "median_speedup_eager": _round(r.median_speedup_eager),
                "median_speedup_eager_common": _round(r.median_common),
                "missing": int(r.missing), "rows_correct": int(r.rows_correct), "rows": int(r.rows),
                "slowest": _task_value(r.slowest, r.slowest_speedup),
                "fastest": _task_value(r.fastest, r.fastest_speedup),
                "timer": r.timer or None,
            }
        return {"device": self.device, "hw": self.hw, "shape_roles": list(self.roles), "slow_below": SLOW,
                "eager_timer": self.eager_timer or None,
                "common_tasks": len(self.common_tasks), "portable_tasks": len(self.portable_tasks),
                "backends": backends,
                "slow": [{"task": s.task, "backend": s.backend, "speedup_eager": _round(s.speedup_eager),
                          "reason": s.reason} for s in self.slow.itertuples(index=False)],
                "notes": self.notes}


def _round(x: Any, digits: int = 4) -> float | None:
    return None if x is None or pd.isna(x) else round(float(x), digits)


def _task_value(task: Any, value: Any) -> dict[str, Any] | None:
    return {"task": task, "speedup_eager": _round(value)} if isinstance(task, str) else None


def _label(backend: str, method: str) -> str:
    return backend if method == "reference" else f"{backend}/{method}"


def portability(results: ResultSet, profiles: dict[str, HardwareProfile], roles: tuple[str, ...] = ("large",),
                reference_dirs: dict[str, Path] | None = None, attempts: pd.DataFrame | None = None
                ) -> list[Portability]:
    """The matrix per hardware profile in ``results`` (one entry per profile, by name).
    ``reference_dirs`` (backend -> its reference folder) lets a reference's declared
    ``LIMITATION`` be found when the stored source path is not on this machine; ``attempts``: the
    report's :func:`attempt_table` over the same rows, when it has one already."""
    if attempts is None:
        attempts = attempt_table(results, profiles, roles)
    if attempts.empty:
        return []
    out = []
    for hw in sorted(attempts["hw"].unique()):
        out.append(_one_profile(hw, results, attempts[attempts["hw"] == hw], profiles.get(hw), roles,
                                reference_dirs or {}))
    return out


def _one_profile(hw: str, results: ResultSet, attempts: pd.DataFrame, profile: HardwareProfile | None,
                 roles: tuple[str, ...], reference_dirs: dict[str, Path]) -> Portability:
    rows = results.rows[(results.rows["hw"] == hw) & (results.rows["verdict"] != Verdict.SKIPPED)]
    devices = sorted({r.device_name for r in results.runs if r.hw == hw})
    notes = []
    cands = attempts[~attempts["is_baseline"].astype(bool)].copy()
    cands["label"] = [_label(b, m) for b, m in zip(cands["backend"], cands["method"])]
    # several runs of one backend on one profile (a rerun, two stores): the last run read counts
    order = {r.key: i for i, r in enumerate(results.runs)}
    cands["order"] = cands["run_key"].map(order)
    repeated = cands.groupby(["label", "task"])["run_key"].nunique()
    if (repeated > 1).any():
        notes.append(f"{int((repeated > 1).sum())} (task, backend) pair(s) were measured in several runs; the last "
                     "run given counts")
    cands = cands.sort_values("order").groupby(["label", "task"], sort=False).tail(1)
    labels = sorted(cands["label"].unique())
    tasks = cands[["task", "category"]].drop_duplicates("task").sort_values(["category", "task"])
    eager = attempts[attempts["method"] == "eager"]

    cells = []
    for t in tasks.itertuples(index=False):
        for label in labels:
            a = cands[(cands["task"] == t.task) & (cands["label"] == label)]
            if a.empty:
                cells.append({"task": t.task, "category": t.category, "backend": label, "verdict": None,
                              "correct": False, "correct_count": "", "speedup_eager": None, "timer": "",
                              "note": "not run: no result for this task in the runs given", "run_key": None})
                continue
            a = a.iloc[0]
            g = rows[(rows["run_key"] == a["run_key"]) & (rows["task"] == t.task) & (rows["backend"] == a["backend"])
                     & (rows["method"] == a["method"])]
            sp = a["speedup_eager"] if a["correct"] else None
            sp = None if sp is None or pd.isna(sp) else float(sp)
            cells.append({"task": t.task, "category": t.category, "backend": label, "verdict": a["verdict"],
                          "correct": bool(a["correct"]), "correct_count": a["correct_count"], "speedup_eager": sp,
                          "timer": _timers(g), "note": None if sp is not None else _why_no_speedup(a, eager),
                          "run_key": a["run_key"]})
    cells = _absent_as_none(pd.DataFrame(cells, columns=["task", "category", "backend", "verdict", "correct",
                                                         "correct_count", "speedup_eager", "timer", "note", "run_key"]),
                            ("verdict",))

    timed = cells[cells["speedup_eager"].notna()]
    per_task = timed.groupby("task")["backend"].nunique()
    common = sorted(per_task[per_task == len(labels)].index) if labels else []
    per_backend = []
    for label in labels:
        c = cells[cells["backend"] == label]
        ran = c[c["verdict"].notna() & (c["verdict"] != Verdict.MISSING)]
        sp = c[c["speedup_eager"].notna()].sort_values("speedup_eager")
        counts = [x.split("/") for x in ran["correct_count"] if "/" in str(x)]
        per_backend.append({
            "backend": label, "tasks": len(ran), "correct": int(ran["correct"].sum()),
            "missing": int((c["verdict"] == Verdict.MISSING).sum()),
            "not_run": int(c["verdict"].isna().sum()), "timed": len(sp),
            "rows_correct": sum(int(k) for k, _ in counts), "rows": sum(int(n) for _, n in counts),
            "median_speedup_eager": median(sp["speedup_eager"]),
            "median_common": median(sp[sp["task"].isin(common)]["speedup_eager"]),
            "geomean_speedup_eager": geomean(sp["speedup_eager"]),
            "slowest": sp["task"].iloc[0] if len(sp) else None,
            "slowest_speedup": sp["speedup_eager"].iloc[0] if len(sp) else None,
            "fastest": sp["task"].iloc[-1] if len(sp) else None,
            "fastest_speedup": sp["speedup_eager"].iloc[-1] if len(sp) else None,
            "timer": "; ".join(sorted({x for t in ran["timer"] for x in t.split("; ") if x})),
        })
    per_backend = pd.DataFrame(per_backend, columns=[
        "backend", "tasks", "correct", "missing", "not_run", "timed", "rows_correct", "rows", "median_speedup_eager",
        "median_common", "geomean_speedup_eager", "slowest", "slowest_speedup", "fastest", "fastest_speedup",
        "timer"])
    per_backend = _absent_as_none(per_backend, ("slowest", "fastest"))

    slow = []
    for c in timed[timed["speedup_eager"] < SLOW].sort_values("speedup_eager").itertuples(index=False):
        backend, method = (c.backend.split("/", 1) + ["reference"])[:2]
        g = rows[(rows["run_key"] == c.run_key) & (rows["task"] == c.task) & (rows["backend"] == backend)
                 & (rows["method"] == method)]
        e = rows[(rows["run_key"] == c.run_key) & (rows["task"] == c.task) & (rows["method"] == "eager")]
        slow.append({"task": c.task, "category": c.category, "backend": c.backend, "speedup_eager": c.speedup_eager,
                     "reason": slow_reason(g, e, profile, roles, reference_dirs.get(backend))})
    slow = pd.DataFrame(slow, columns=["task", "category", "backend", "speedup_eager", "reason"])
    eager_rows = rows[(rows["method"] == "eager") & rows["task"].isin(cells["task"])]
    return Portability(hw, ", ".join(devices) or "?", roles, labels, cells, per_backend, slow, common,
                       _timers(eager_rows), notes)


def _absent_as_none(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """Missing values of ``columns`` as None: pandas turns a column of Nones into NaN, which is truthy
    and which tables printed as 'nan' (a backend that ran nothing on the profile)."""
    for c in columns:
        frame[c] = frame[c].astype(object).where(frame[c].notna(), None)
    return frame


def _timers(g: pd.DataFrame) -> str:
    if "timer" not in g:
        return ""
    return "; ".join(sorted({str(t) for t in g["timer"].dropna() if t}))


def _why_no_speedup(a: pd.Series, eager: pd.DataFrame) -> str:
    """Why a cell that has a result has no speedup over eager."""
    if a["verdict"] == Verdict.MISSING:
        return "no reference kernel for this task"
    if a["verdict"] == Verdict.COMPILED:
        return NO_SPEED["compiled"]
    if not a["correct"]:
        first = str(a.get("first_error") or "").split("\n")[0][:80]
        return f"not correct on every shape and dtype ({a['verdict']}, {a['correct_count']})" + (
            f": {first}" if first else "")
    if a["timing"] != "timed":
        return NO_SPEED.get(a["timing"], a["timing"])
    base = eager[(eager["run_key"] == a["run_key"]) & (eager["task"] == a["task"])]
    if base.empty:
        return "no eager baseline in this run"
    if not base["correct"].all():
        return f"eager baseline {base['verdict'].iloc[0]} ({base['correct_count'].iloc[0]}): no eager time to divide"
    return "no eager time on the timed shapes"


# --- why a cell is slow ---------------------------------------------------------------------------

def slow_reason(cand: pd.DataFrame, eager: pd.DataFrame, profile: HardwareProfile | None, roles: tuple[str, ...],
                reference_dir: Path | None = None) -> str:
    """What the rows of a slow cell say about why (every reason found, '; '-joined)."""
    timed = _timed(cand, roles)
    base = _timed(eager, roles)
    reasons = []
    declared = declared_limitation(cand, reference_dir)
    if declared:
        reasons.append(f"declared: {declared}")
    ct, et = _timers(timed), _timers(base)
    if ct and et and ct != et:
        reasons.append(f"timed by {_timer_text(ct)}, eager by {_timer_text(et)}")
    host_bound = sum(int(e.get("host_bound_samples") or 0) for e in timed["extra"] if isinstance(e, dict))
    if host_bound:
        reasons.append(f"{host_bound} timed sample(s) host-bound")
    if any(isinstance(e, dict) and e.get("overhead_dominated") for e in timed["extra"]):
        reasons.append("eager's time is near the launch overhead (the ratio compares launch costs)")
    if profile is not None and profile.device != "cpu":
        roof = _roofline_text(timed, base, profile)
        if roof:
            reasons.append(roof)
    return "; ".join(reasons) or "nothing in the rows explains it (no FLOP/byte counts, same timer as eager)"


def _timed(rows: pd.DataFrame, roles: tuple[str, ...]) -> pd.DataFrame:
    ok = rows["verdict"].map(counts_as_correct) & rows["time_median_us"].notna() & (rows["interpreted"].fillna(0) == 0)
    if roles:
        ok &= rows["shape_role"].isin(roles)
    return rows[ok]


def _timer_text(timers: str) -> str:
    return "; ".join(TIMER_MEANING.get(t, t) for t in timers.split("; "))


def roofline_shares(rows: pd.DataFrame, profile: HardwareProfile) -> tuple[str | None, float | None]:
    """(bound, share): whether the rows' work is memory- or compute-bound on the profile (by the
    majority of rows), and the geometric mean over them of the achieved share of that peak
    (bytes / time over peak bandwidth, or FLOPs / time over the dtype's peak FLOP rate)."""
    bounds, shares = [], []
    for r in rows.itertuples(index=False):
        t = r.time_median_us
        if not t or t <= 0:
            continue
        counts = {k: None if pd.isna(v) else v for k, v in (("bytes", r.bytes), ("flops", r.flops))}
        times = roofline_times_us({"dtype": r.dtype, "extra": getattr(r, "extra", None), **counts}, profile)
        if times is None or not any(times):
            continue
        t_mem, t_math = times
        bounds.append("memory" if t_mem >= t_math else "compute")
        shares.append(max(t_mem, t_math) / t)
    if not shares:
        return None, None
    bound = "memory" if bounds.count("memory") >= bounds.count("compute") else "compute"
    return bound, geomean(shares)


def _roofline_text(cand: pd.DataFrame, base: pd.DataFrame, profile: HardwareProfile) -> str | None:
    bound, share = roofline_shares(cand, profile)
    if bound is None:
        return None
    common = base.merge(cand[["shape", "dtype"]], on=["shape", "dtype"])
    _, eager_share = roofline_shares(common, profile)
    peak = "peak bandwidth" if bound == "memory" else "peak FLOPs"
    text = f"{bound}-bound at {share:.0%} of {peak}"
    return text + (f" (eager {eager_share:.0%})" if eager_share is not None else "")


def declared_limitation(rows: pd.DataFrame, reference_dir: Path | None = None) -> str | None:
    """The ``LIMITATION`` string the measured source declares: read from the stored source path,
    or from ``reference_dir/<category>/<task>.py``, and only where that file's hash is the row's
    (a file edited since the run may declare something the measured code did not have)."""
    if rows.empty or "source_path" not in rows:
        return None
    r = rows.iloc[0]
    wanted = r.get("source_hash")
    places = [Path(str(r["source_path"]))] if isinstance(r.get("source_path"), str) else []
    if reference_dir is not None:
        places.append(Path(reference_dir) / str(r["category"]) / f"{r['task']}.py")
    for path in places:
        try:
            if path.is_file() and (not isinstance(wanted, str) or source_hash(path) == wanted):
                return read_limitation(path)
        except OSError:
            continue
    return None


def read_limitation(path: Path) -> str | None:
    """A module-level ``LIMITATION = "..."`` of a Python source, without importing it."""
    try:
        tree = ast.parse(Path(path).read_text())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and target.id == "LIMITATION" and isinstance(value, ast.Constant) \
                and isinstance(value.value, str):
            return " ".join(value.value.split())
    return None


__all__ = ["SLOW", "TIMER_MEANING", "Portability", "declared_limitation", "portability",
           "read_limitation", "roofline_shares", "slow_reason"]
