"""The comparative report: environments of every run, rates and fast_p, the difficulty GLM,
cross-hardware variance, cross-backend portability and the figures."""

from __future__ import annotations

import math
from typing import Any


from ..hardware import HardwareProfile
from . import plots
from .dataset import ResultSet
from .difficulty import difficulty_analysis
from .document import Document
from .rates import FAST_P, attempt_table, rates_table
from .variance import cross_backend, cross_hardware, paired_speedups


def _f(x: Any, fmt: str = ".2f") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x, fmt)


def _pct(x: Any) -> str:
    return _f(x, ".0%") if x is not None else "-"


def environment_section(doc: Document, results: ResultSet) -> None:
    doc.h2("Runs and their environments")
    doc.p("Every number below comes from these runs. Rates are always grouped by hardware profile; results "
          "from different profiles meet only in the cross-hardware section.")
    rows = []
    for r in results.runs:
        pk = r.env.get("packages", {})
        rows.append([r.key, r.hw, r.device_name, r.backend, r.method, r.status, r.started[:19],
                     r.machine.get("driver") or "-", r.env.get("python") or "-",
                     ", ".join(f"{k} {pk[k]}" for k in ("torch", "triton", "jax", "cupy", "pyopencl") if k in pk),
                     (r.env.get("git_revision") or "-")[:12], r.seed])
    doc.table(["run", "profile", "device", "backend", "method", "status", "started (UTC)", "driver", "python",
               "packages", "mkbench rev", "seed"], rows)
    for note in results.notes:
        doc.p("Note: " + note)
    timer_section(doc, results)


# What each timer's span holds, so a reader can tell which speedups compare like with like.
TIMER_MEANING = {
    "cuda_event": "CUDA events around each call",
    "cuda_graph": "CUDA events around CUDA-graph replays",
    "opencl-profiling-events": "OpenCL profiling events (include waits for the host)",
    "device-sync-host-clock": "host clock to a device-wide sync (includes dispatch)",
    "perf_counter": "host clock (CPU)",
    "host-clock": "host clock (CPU)",
}


def timer_section(doc: Document, results: ResultSet) -> None:
    rows = results.rows
    if not len(rows) or "timer" not in rows:
        return
    timed = rows[rows["timer"].fillna("") != ""]
    if timed.empty:
        return
    out = []
    for (run_key, backend), g in timed.groupby(["run_key", "backend"], sort=False):
        timers = sorted(set(g["timer"]))
        cuda = any(t.startswith("cuda") for t in timers)
        spun = any(isinstance(e, dict) and e.get("run_ahead_us") for e in g["extra"])
        out.append([run_key, backend, "; ".join(TIMER_MEANING.get(t, t) for t in timers),
                    ("yes" if spun else "no") if cuda else "-", "yes" if "interpreted" in g and g["interpreted"].fillna(0).astype(bool).any() else "no"])
    doc.h3("Timers")
    doc.p("Speedups divide times taken in the same run; a backend timed by a different kind of timer than its baseline "
          "compares different spans. 'Spun ahead': the GPU was kept busy up to the start event, so the span is device "
          "time only (without it, host launch time inside the span counts).")
    doc.table(["run", "backend", "timer", "spun ahead", "interpreted"], out)


def build_report(results: ResultSet, profiles: dict[str, HardwareProfile], title: str = "mkbench report",
                 roles: tuple[str, ...] = ("large",), glm_baselines: bool | None = None, plots_on: bool = True) -> Document:
    doc = Document(title)
    environment_section(doc, results)
    attempts = attempt_table(results, profiles, roles)
    if attempts.empty:
        doc.p("No results to analyse.")
        return doc
    role_text = ", ".join(roles) if roles else "all"
    cands = attempts[~attempts["is_baseline"]]

    doc.h2("Rates per hardware, backend and method")
    doc.p(f"An attempt is one task on one backend, method and profile; it is correct when every evaluated shape and "
          f"dtype is correct, and hack-flagged ones never count as correct. Speedups are geometric means over the "
          f"correct {role_text} shapes, recomputed from medians against the baselines of the same run. fast_p = share of "
          f"attempted tasks that are correct and more than p times faster. Roofline efficiency = datasheet floor time "
          f"for the task's bytes and FLOPs over the measured time (median over correct tasks).")
    rates = rates_table(attempts)
    totals = rates[rates["category"] == "(all)"]
    doc.table(["hw", "backend", "method", "tasks", "compile", "correct", "hack", "geomean vs eager", "geomean vs compile",
               "correct but slower than eager", "roofline eff."],
              [[r.hw, r.backend, r.method, r.tasks, _pct(r.compile), _pct(r.correct), _pct(r.hack),
                _f(r.geomean_vs_eager), _f(r.geomean_vs_compile), _pct(r.slower_than_eager), _pct(r.roofline_eff)]
               for r in totals.itertuples()])
    doc.h3("fast_p")
    doc.table(["hw", "backend", "method", *[f"fast_{p:g} eager" for p in FAST_P], *[f"fast_{p:g} compile" for p in FAST_P]],
              [[r["hw"], r["backend"], r["method"], *[_pct(r[f"fast_{p:g}_eager"]) for p in FAST_P],
                *[_pct(r[f"fast_{p:g}_compile"]) for p in FAST_P]] for _, r in totals.iterrows()])
    doc.h3("Per category")
    per_cat = rates[rates["category"] != "(all)"]
    doc.table(["hw", "backend", "method", "category", "tasks", "compile", "correct", "hack", "fast_1 eager",
               "fast_1 compile", "geomean vs eager", "slower than eager", "roofline eff."],
              [[r["hw"], r["backend"], r["method"], r["category"], r["tasks"], _pct(r["compile"]), _pct(r["correct"]),
                _pct(r["hack"]), _pct(r["fast_1_eager"]), _pct(r["fast_1_compile"]), _f(r["geomean_vs_eager"]),
                _pct(r["slower_than_eager"]), _pct(r["roofline_eff"])] for _, r in per_cat.iterrows()])
    if plots_on:
        doc.img(plots.correctness_heatmap(attempts), "correctness-heatmap", "Correctness heatmap: category x hardware / backend / method")
        doc.img(plots.speedup_distributions(attempts), "speedup-distributions", "Speedup distributions per category (log scale)")
        doc.img(plots.fast_p_curves(attempts), "fast-p", "fast_p curves over eager and over torch.compile")

    doc.h2("Category-aware difficulty")
    with_baselines = glm_baselines if glm_baselines is not None else cands["method"].nunique() < 2
    d = difficulty_analysis(attempts, include_baselines=with_baselines)
    doc.p(f"Binomial GLM of per-task correctness over {d.n} attempts"
          + (" (the eager and torch.compile baselines included as methods, since fewer than two candidate methods are present)"
             if with_baselines else " (candidates only)")
          + f"; factors {', '.join(d.factors) or 'none'}. Explained deviance = share of the null deviance "
          + (f"({_f(d.null_deviance)})" if d.null_deviance is not None else "") + " removed by the factor.")
    for note in d.notes:
        doc.p("Note: " + note)
    doc.table(["factor", "levels", "df", "explained deviance (sequential)", "explained deviance (drop-one)", "LR test p"],
              [[r.factor, r.levels, r.df, _pct(r.sequential), _pct(r.drop_one), _f(r.p_value, ".3g")]
               for r in d.deviance.itertuples()])
    doc.h3("Categories")
    doc.table(["category", "tasks", "share no attempt solves", "mean difficulty"],
              [[r.category, r.tasks, _pct(r.unsolved), _f(r.mean_difficulty)] for r in d.categories.itertuples()])
    doc.h3("Hardest tasks")
    doc.p("Difficulty index = share of attempts (methods x backends x hardware) that are not correct.")
    doc.table(["task", "category", "attempts", "solved", "difficulty"],
              [[r.task, r.category, r.attempts, int(r.solved), _f(r.difficulty)] for r in d.tasks.head(20).itertuples()])

    doc.h2("Cross-hardware speedup variance")
    spreads, mismatched = cross_hardware(attempts)
    if spreads.empty:
        doc.p("No (task, backend, method) has a correct, timed result on two or more profiles with the same problem sizes.")
    else:
        doc.p(f"{len(spreads)} (task, backend, method) measured on several profiles with identical problem sizes; each "
              f"profile's speedup is the geometric mean over the (shape, dtype) combinations timed against eager on every "
              f"profile (listed). Largest max/min speedup ratio {spreads['max_min_ratio'].max():.2f}x; median "
              f"{spreads['max_min_ratio'].median():.2f}x.")
        doc.table(["task", "category", "backend", "method", "speedup vs eager per profile", "over", "max/min", "CV"],
                  [[r.task, r.category, r.backend, r.method, r.hw, r.combos, _f(r.max_min_ratio), _f(r.cv)]
                   for r in spreads.head(20).itertuples()])
    if not mismatched.empty:
        doc.p(f"Not comparable ({len(mismatched)}):")
        doc.table(["task", "backend", "method", "profiles", "why"], mismatched.values.tolist())
    if plots_on:
        doc.img(plots.cross_hardware_scatter(attempts, paired_speedups), "cross-hardware",
                "Cross-hardware scatter of speedups vs eager (log-log, y = x dashed)")

    doc.h2("Cross-backend portability")
    port = cross_backend(attempts)
    if port.empty or port["backends"].max() < 2:
        doc.p("Only one kernel backend is present per profile in these runs: nothing to compare across backends yet.")
    else:
        cols = [c for c in port.columns if c not in ("hw", "category", "task", "backends", "portable", "compile_only")]
        doc.p(f"{int(port['portable'].sum())}/{len(port)} (task, profile) pairs are correct on every backend that ran "
              "(and compiled on every backend that can only compile on that profile).")
        doc.table(["hw", "category", "task", *cols, "portable"],
                  [[r["hw"], r["category"], r["task"], *[r.get(c) if isinstance(r.get(c), str) else "-" for c in cols],
                    ("yes" + (f" ({r['compile_only']} compile-only)" if r["compile_only"] else "")) if r["portable"] else "no"]
                   for _, r in port.iterrows()])
    side_checks_section(doc, results)
    if plots_on:
        doc.img(plots.roofline_chart(attempts, profiles), "roofline", "Roofline: achieved TFLOP/s of correct kernels (large shapes)")
    return doc


def side_checks_section(doc: Document, results: ResultSet) -> None:
    """Compile verdicts recorded apart from the gating one (e.g. HIP built for AMD targets on a
    machine without an AMD GPU): per backend and check, how many tasks passed."""
    seen: dict[tuple[str, str, str], dict[str, tuple[bool, str]]] = {}
    for r in results.rows.itertuples(index=False):
        checks = (r.extra or {}).get("compile_checks") if isinstance(r.extra, dict) else None
        for name, v in (checks or {}).items():
            seen.setdefault((r.hw, r.backend, name), {})[r.task] = (bool(v.get("ok")), v.get("message") or "")
    if not seen:
        return
    doc.h3("Side compile checks")
    doc.p("Compile verdicts stored apart from the one that gates a run: what can be checked of a target without its "
          "hardware (for HIP: Debian's hipcc building each candidate for AMD GPUs).")
    rows = []
    for (hw, backend, name), per_task in sorted(seen.items()):
        failed = sorted(t for t, (ok, _) in per_task.items() if not ok)
        first = next((msg for t, (ok, msg) in sorted(per_task.items()) if not ok), "")
        rows.append([hw, backend, name, f"{len(per_task) - len(failed)}/{len(per_task)}", first[:100]])
    doc.table(["hw", "backend", "check", "tasks passing", "first failure"], rows)
