"""The one report builder: `mkbench report` and `mkbench analyze` both call :func:`build_report`,
which assembles named sections (:data:`SECTIONS`) into a :class:`Document` rendered to Markdown or
HTML.

Every report opens with what verifying the stores' digests found (:mod:`mkbench.store_digest`):
one line per store that cannot be verified here, and every row changed after it was written, named
(those rows read as verdict ``tampered``, never as their stored verdict).

Sections, in report order:

* ``findings``: the headlines first, before any table: CUDA-L1's across hardware, each portability
  matrix's, one line per candidate method and profile (correct share, geometric-mean speedup over
  eager, hack share); the sections below give each headline again beside its tables;
* ``environment``: every run with its device, software and revision, and the timer behind each
  backend's times;
* ``summary``: one line per candidate of each run (verdict, share of shapes correct, speedups or
  why there are none, framework share, first error); tasks without a candidate collapse into one
  line per run listing them;
* ``rates``: compile / correct / hack rates and geometric-mean speedups per hardware, backend and
  method, then fast_p, then the same per category (and per KernelBench level where candidates
  carry one). fast_p is "-" with the reason where no time is a speed (the Triton interpreter,
  compile-only backends, --no-timing), never 0%;
* ``verdicts``: verdict counts and the framework/vendor share of device time per method and
  category, with the static-analysis warnings;
* ``recorded``: speedups another benchmark recorded for imported candidates (e.g. CUDA-L1's
  ``score_default``) next to mkbench's, where the candidates carry them;
* ``cuda_l1``: CUDA-L1's imported kernels across hardware (:mod:`mkbench.analysis.cuda_l1`: headline,
  per set / variant / device, per kernel with the recorded score beside the measured speedup, the
  same kernel on two devices), only where the stores hold such candidates;
* ``difficulty``: the binomial GLM of correctness, unsolved shares, hardest tasks (imported CUDA-L1
  candidates enter its method factor by GPU set and variant, ``cuda-l1-<set>[-<variant>]``);
* ``hardware``: cross-hardware speedup variance;
* ``backends``: cross-backend portability (:mod:`mkbench.analysis.portability`: headline, per-backend
  pass counts and median speedups over eager, the task x backend matrix, the cells more than 2x
  slower than eager with the reason) and side compile checks;
* ``detail``: every (task, shape, dtype) row with its times: long, so `mkbench report` writes it
  to a file of its own unless asked otherwise.

Rows are read through ``Store.results()`` (:mod:`mkbench.analysis.dataset`), so columns a newer
store adds pass through; fields rows may lack (``extra["framework_share"]``,
``extra["static_warnings"]``, ``extra["import"]``, verdict ``framework``) are optional.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from ..hardware import HardwareProfile
from ..metrics import geomean
from ..verdicts import SEVERITY, Verdict
from . import plots
from .cuda_l1 import CudaL1Study, methods_by_gpu_set, study
from .dataset import ResultSet
from .difficulty import difficulty_analysis
from .document import Document
from .portability import SLOW, TIMER_MEANING, Portability, portability
from .rates import FAST_P, attempt_table, rates_table
from .variance import cross_backend, cross_hardware, paired_speedups

# aggregates first, then the per-candidate table: a corpus has hundreds of candidates
SECTIONS = ("findings", "environment", "rates", "verdicts", "recorded", "cuda_l1", "difficulty", "hardware", "backends",
            "summary", "detail")
#: the sections `mkbench report` puts in the main document by default (``detail`` goes apart)
MAIN_SECTIONS = tuple(s for s in SECTIONS if s != "detail")
HARDEST_SHOWN = 15
SHOWN = 15  # rows of the CUDA-L1 spread tables


def _f(x: Any, fmt: str = ".2f") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x, fmt)


def _pct(x: Any) -> str:
    """A share as a percentage; never '0%' or '100%' unless exactly so (200 of 201 correct is
    99.5%, not 100%: one hack attempt among 201 hid that way in an H200 main job's report)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    x = float(x)
    if 0 < x < 0.005:
        return format(max(x, 0.001), ".1%")
    if 0.995 <= x < 1:
        return format(min(x, 0.999), ".1%")
    return format(x, ".0%")


def _number(x: Any) -> float | None:
    """A finite, positive number, or None (pandas gives NaN where a value is missing)."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) and x > 0 else None


def _cell(text: Any, limit: int = 90) -> str:
    return str(text or "")[:limit].replace("\n", " ").replace("|", "/")


class _Context:
    """What several sections share, computed once."""

    def __init__(self, results: ResultSet, profiles: dict[str, HardwareProfile], roles: tuple[str, ...],
                 glm_baselines: bool | None, plots_on: bool, reference_dirs: dict[str, Path] | None = None):
        self.results, self.profiles, self.roles = results, profiles, roles
        self.reference_dirs = reference_dirs or {}
        self.glm_baselines, self.plots_on = glm_baselines, plots_on
        self.attempts = attempt_table(results, profiles, roles)

    @functools.cached_property
    def cuda_l1(self) -> CudaL1Study | None:
        return study(self.results, self.attempts, self.roles)

    @functools.cached_property
    def matrices(self) -> list[Portability]:
        """The portability matrices of the profiles where two kernel backends or more ran."""
        port = cross_backend(self.attempts)
        if port.empty or port["backends"].max() < 2:
            return []
        return [m for m in portability(self.results, self.profiles, self.roles, self.reference_dirs, self.attempts)
                if len(m.backends) >= 2]

    @functools.cached_property
    def rates(self) -> pd.DataFrame:
        return rates_table(self.attempts)

    @property
    def rows(self) -> pd.DataFrame:
        return self.results.rows

    @property
    def candidates(self) -> pd.DataFrame:
        return self.attempts[~self.attempts["is_baseline"]] if len(self.attempts) else self.attempts


# --- findings first ------------------------------------------------------------------------------

def findings_section(doc: Document, ctx: _Context) -> None:
    """The studies' headlines before any table: CUDA-L1's across hardware, each portability matrix's
    (two kernel backends or more on one profile), then one line per candidate method and profile. The
    sections below repeat each headline beside its tables."""
    lines = [ctx.cuda_l1.headline()] if ctx.cuda_l1 is not None else []
    lines += [portability_headline(m)[0] for m in ctx.matrices]
    totals = ctx.rates[ctx.rates["category"] == "(all)"].set_index(["hw", "backend", "method"])
    methods = []
    cands = ctx.candidates
    order = {r.key: i for i, r in enumerate(ctx.results.runs)}
    for (hw, backend, method), g in (cands.groupby(["hw", "backend", "method"]) if len(cands) else []):
        present = g[g["verdict"] != Verdict.MISSING]  # the rates count a task without a candidate as failed
        if present.empty:
            continue
        # a task run again (a rerun, a later store) counts once, by its last run, as in the matrix
        present = present.assign(_order=present["run_key"].map(order)).sort_values("_order", kind="stable")
        present = present.groupby("task", sort=False).tail(1)
        geomean = totals["geomean_vs_eager"].get((hw, backend, method))
        hacks = int(present["hack"].sum())
        methods.append(f"{method} ({backend}) on {hw}: {int(present['correct'].sum())} of {len(present)} candidates "
                       "correct" + (f", geometric mean {_f(geomean)}x eager where correct"
                                    if _number(geomean) is not None else "")
                       + (f", {hacks} hack" if hacks else ""))
    if not lines and not methods:
        return
    doc.h2("Findings")
    for line in lines:
        doc.p(line)
    if methods:
        doc.p("Per candidate method: " + "; ".join(methods) + ".")


# --- integrity of the stores -------------------------------------------------------------------

def integrity_header(doc: Document, results: ResultSet) -> None:
    """One line per store that could not be verified, and a section naming every row that was
    changed after mkbench wrote it."""
    for check in results.integrity:
        for note in check.notes:
            doc.p(f"Integrity: {note}.")
    tampered = [(check.store, line) for check in results.integrity for line in check.problems]
    if tampered:
        doc.h2("Integrity: rows changed after they were written")
        doc.p(f"{len(tampered)} stored row(s) do not match the digest mkbench wrote with them (or have none): each is "
              "reported as verdict `tampered`, never as its stored verdict, and never counts as correct.")
        doc.table(["store", "what"], [[store, line] for store, line in tampered])


# --- environment ------------------------------------------------------------------------------

def environment_section(doc: Document, ctx: _Context) -> None:
    results = ctx.results
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
    _timers(doc, ctx.rows)


def _timers(doc: Document, rows: pd.DataFrame) -> None:
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
        host_bound = sum(1 for e in g["extra"] if isinstance(e, dict) and (e.get("host_bound_samples") or 0) > 0)
        out.append([run_key, backend, "; ".join(TIMER_MEANING.get(t, t) for t in timers),
                    ("yes" if spun else "no") if cuda else "-",
                    f"{host_bound} of {len(g)}" if cuda else "-",
                    "yes" if "interpreted" in g and g["interpreted"].fillna(0).astype(bool).any() else "no"])
    doc.h3("Timers")
    doc.p("Speedups divide times taken in the same run; a backend timed by a different kind of timer than its baseline "
          "compares different spans. 'Spun ahead': the GPU was kept busy up to the start event, so the span is device "
          "time only (without it, host launch time inside the span counts). 'Host-bound rows': timed rows whose "
          "samples include the host's own time (a call that waits for the device inside, or whose Python outlasts "
          "the spin); "
          "such a time follows the host and moves from run to run (KernelBench-X harnesses on one H200: a median of "
          "21% between two runs with one seed, reports/2026-11-29-timing-stop).")
    doc.table(["run", "backend", "timer", "spun ahead", "host-bound rows", "interpreted"], out)


# --- summary ------------------------------------------------------------------------------------

def _speed_cells(a: pd.Series) -> list[str]:
    if a["timing"] == "timed":
        return [_f(a["speedup_eager"]), _f(a["speedup_compile"])]
    word = {"interpreted": "interpreted", "compiled": "not run", "untimed": "not timed"}[a["timing"]]
    return [word, word]


def summary_section(doc: Document, ctx: _Context) -> None:
    cands = ctx.candidates
    doc.h2("Candidates")
    if cands.empty:
        doc.p("No candidate results.")
        return
    rows = ctx.rows
    evaluated = rows[(rows["verdict"] != Verdict.SKIPPED) & ~rows["is_baseline"].astype(bool)]
    per = {key: g for key, g in evaluated.groupby(["run_key", "task", "backend", "method"])}
    doc.p("One line per candidate and run: its worst verdict over every evaluated shape and dtype, how many of those "
          "were correct, and its speedups (geometric mean over the " + (", ".join(ctx.roles) or "all")
          + " shapes, only for a candidate correct on every shape and dtype; 'interpreted' where the times are not "
            "speed). Framework share: the largest share of device time spent in framework or vendor kernels on any "
            "shape, where it was measured.")
    table, missing = [], {}
    for _, a in cands.sort_values(["run_key", "category", "task"]).iterrows():
        if a["verdict"] == Verdict.MISSING:
            missing.setdefault(a["run_key"], []).append(a["task"])
            continue
        g = per.get((a["run_key"], a["task"], a["backend"], a["method"]))
        warnings = sum(len(w) for w in _extra_values(g, "static_warnings"))
        share = a["framework_share"]
        table.append([a["run_key"], a["category"], a["task"], a["method"], a["verdict"], a["correct_count"],
                      *_speed_cells(a), _pct(share) if pd.notna(share) else "-", warnings or "",
                      _cell(a["first_error"])])
    if table:
        doc.table(["run", "category", "task", "method", "verdict", "correct", "vs eager", "vs compile",
                   "framework share", "static warnings", "first error"], table)
    for run_key, g in cands.groupby("run_key", sort=True):
        line = (f"Run {run_key}: {int(g['correct'].sum())}/{len(g)} candidates correct "
                "on every evaluated shape and dtype"
                + (f"; {int((g['verdict'] == Verdict.COMPILED).sum())} compiled only"
                   if (g["verdict"] == Verdict.COMPILED).any() else ""))
        if run_key in missing:
            line += (f"; {len(missing[run_key])} task(s) without a candidate (`missing`): "
                     + ", ".join(sorted(missing[run_key])))
        doc.p(line + ".")


def _extra_values(g: pd.DataFrame | None, key: str) -> list:
    if g is None:
        return []
    return [e[key] for e in g["extra"] if isinstance(e, dict) and e.get(key) is not None]


# --- rates -------------------------------------------------------------------------------------

def _fast_p_note(r: pd.Series) -> str:
    """Why a rates line's fast_p cells are '-' (both baselines' reasons, once each)."""
    notes = [r.get("fast_p_eager_note"), r.get("fast_p_compile_note")]
    return "; ".join(dict.fromkeys(n for n in notes if isinstance(n, str)))


def rates_section(doc: Document, ctx: _Context) -> None:
    attempts = ctx.attempts
    role_text = ", ".join(ctx.roles) if ctx.roles else "all"
    doc.h2("Rates per hardware, backend and method")
    doc.p(f"An attempt is one task on one backend, method and profile; it is correct when every evaluated shape and "
          f"dtype is correct, and hack-flagged ones never count as correct. Speedups are geometric means over the "
          f"correct {role_text} shapes, recomputed from medians against the baselines of the same run. fast_p = share "
          "of "
          f"attempted tasks that are correct and more than p times faster; '-' where the times are not speed (the note "
          "says why). Roofline efficiency = datasheet floor time for the task's bytes and FLOPs over the measured "
          "time "
          f"(median over correct tasks).")
    rates = ctx.rates
    totals = rates[rates["category"] == "(all)"]
    doc.table(["hw", "backend", "method", "tasks", "compile", "correct", "hack", "geomean vs eager",
               "geomean vs compile",
               "correct but slower than eager", "roofline eff."],
              [[r.hw, r.backend, r.method, r.tasks, _pct(r.compile), _pct(r.correct), _pct(r.hack),
                _f(r.geomean_vs_eager), _f(r.geomean_vs_compile), _pct(r.slower_than_eager), _pct(r.roofline_eff)]
               for r in totals.itertuples()])
    doc.h3("fast_p")
    doc.table(["hw", "backend", "method", *[f"fast_{p:g} eager" for p in FAST_P],
               *[f"fast_{p:g} compile" for p in FAST_P],
               "note"],
              [[r["hw"], r["backend"], r["method"], *[_pct(r[f"fast_{p:g}_eager"]) for p in FAST_P],
                *[_pct(r[f"fast_{p:g}_compile"]) for p in FAST_P], _fast_p_note(r)] for _, r in totals.iterrows()])
    doc.h3("Per category")
    per_cat = rates[(rates["category"] != "(all)") & ~rates["method"].isin(["eager", "torch_compile"])]
    doc.table(["hw", "backend", "method", "category", "tasks", "compile", "correct", "hack", "fast_1 eager",
               "fast_1 compile", "geomean vs eager", "slower than eager", "roofline eff."],
              [[r["hw"], r["backend"], r["method"], r["category"], r["tasks"], _pct(r["compile"]), _pct(r["correct"]),
                _pct(r["hack"]), _pct(r["fast_1_eager"]), _pct(r["fast_1_compile"]), _f(r["geomean_vs_eager"]),
                _pct(r["slower_than_eager"]), _pct(r["roofline_eff"])] for _, r in per_cat.iterrows()])
    cands = ctx.candidates
    if len(cands) and cands["level"].notna().any():
        doc.h3("Per level and category")
        doc.p("Levels as the imported benchmark numbers them (KernelBench: 1 single operators, 2 fused sequences, "
              "3 whole networks).")
        levelled = cands[cands["level"].notna()].assign(level=lambda d: d["level"].astype(int))
        by_level = rates_table(pd.concat([levelled, ctx.attempts[ctx.attempts["is_baseline"]]]),
                               by=("hw", "backend", "method", "level", "category"), totals=False)
        by_level = by_level[by_level["level"].notna()]
        doc.table(["hw", "method", "level", "category", "tasks", "correct", "fast_0 eager", "fast_1 eager",
                   "fast_1 compile", "geomean vs eager", "note"],
                  [[r["hw"], r["method"], int(r["level"]), r["category"], r["tasks"], _pct(r["correct"]),
                    _pct(r["fast_0_eager"]), _pct(r["fast_1_eager"]), _pct(r["fast_1_compile"]),
                    _f(r["geomean_vs_eager"]), _fast_p_note(r)] for _, r in by_level.iterrows()])
    if ctx.plots_on:
        doc.img(plots.correctness_heatmap(attempts), "correctness-heatmap",
                "Correctness heatmap: category x hardware / backend / method")
        doc.img(plots.speedup_distributions(attempts), "speedup-distributions",
                "Speedup distributions per category (log scale)")
        doc.img(plots.fast_p_curves(attempts), "fast-p", "fast_p curves over eager and over torch.compile")


# --- verdicts and framework share ----------------------------------------------------------------

def _threshold(ctx: _Context, run_key: str, extras: list) -> float | None:
    """The framework-share threshold a row was judged with: the row's own, else its run's
    configuration (``framework_threshold``), else unknown."""
    for e in extras:
        if isinstance(e, dict) and isinstance(e.get("framework_threshold"), (int, float)):
            return float(e["framework_threshold"])
    run = next((r for r in ctx.results.runs if r.key == run_key), None)
    value = run.config.get("framework_threshold") if run is not None else None
    return float(value) if isinstance(value, (int, float)) else None


def verdicts_section(doc: Document, ctx: _Context) -> None:
    cands = ctx.candidates
    doc.h2("Verdicts and framework share")
    if cands.empty:
        doc.p("No candidate results.")
        return
    present = [v for v in SEVERITY if v in set(cands["verdict"])]
    doc.p("Attempts per verdict (each attempt's worst verdict over its shapes; `framework`: right answer, but the "
          "device time went to framework or vendor kernels). Framework share: share of device time in framework/vendor "
          "kernels per evaluated row, where measured: median, and share of those rows above the threshold their run "
          "judged with.")
    rows = ctx.rows
    evaluated = rows[(rows["verdict"] != Verdict.SKIPPED) & ~rows["is_baseline"].astype(bool)]
    table = []
    for key, g in cands.groupby(["hw", "backend", "method", "category"], sort=True):
        counts = g["verdict"].value_counts()
        r = evaluated[(evaluated["hw"] == key[0]) & (evaluated["backend"] == key[1]) & (evaluated["method"] == key[2])
                      & (evaluated["category"] == key[3])]
        shares, above, judged = [], 0, 0
        for run_key, extra in zip(r["run_key"], r["extra"]):
            share = extra.get("framework_share") if isinstance(extra, dict) else None
            if share is None:
                continue
            shares.append(float(share))
            limit = _threshold(ctx, run_key, [extra])
            if limit is not None:
                judged += 1
                above += share > limit
        warnings = sum(len(w) for w in _extra_values(r, "static_warnings"))
        table.append([*key, len(g), *[int(counts.get(v, 0)) for v in present],
                      _pct(float(np.median(shares))) if shares else "-", _pct(above / judged) if judged else "-",
                      warnings or ""])
    doc.table(["hw", "backend", "method", "category", "tasks", *[str(v) for v in present], "framework share (median)",
               "rows above threshold", "static warnings"], table)
    if not evaluated["extra"].map(lambda e: isinstance(e, dict) and e.get("framework_share") is not None).any():
        doc.p("No framework share was measured in these runs (stores from before the measurement, or no profiler).")
    failed = ctx.results.failed_baselines()
    if failed:
        wrong = cands[cands["verdict"] == Verdict.INCORRECT]
        there = Counter(key for key in zip(wrong["hw"], wrong["task"]) if key in failed)
        doc.p(f"A baseline's own answer failed its task's contract on {len(failed)} (hardware, task) pair(s); "
              f"{sum(there.values())} of the candidates' `incorrect` verdicts are there and say nothing of the "
              "candidates:")
        doc.table(["hw", "task", "baselines incorrect", "candidates incorrect there"],
                  [[hw, task, ", ".join(methods), there[(hw, task)]] for (hw, task), methods in failed.items()])


# --- recorded scores of imported candidates ------------------------------------------------------

def recorded_section(doc: Document, ctx: _Context) -> None:
    cands = ctx.candidates
    if cands.empty or not cands["recorded"].map(bool).any():
        return
    doc.h2("Recorded scores of imported candidates")
    doc.p("Speedups the candidates' source recorded (e.g. CUDA-L1's score_default, over PyTorch eager on the GPU the "
          "kernels were optimized for) next to mkbench's on this hardware. Ratio = mkbench / recorded. For CUDA-L1's "
          "cuda_graph / cudnn variants (rewritten references) the recorded speedup over eager is score_default / "
          "score_<variant>.")
    table, ratios = [], []
    for _, a in cands[cands["recorded"].map(bool)].sort_values(["hw", "method", "level", "task"],
                                                               na_position="last").iterrows():
        rec = a["recorded"]
        variant = a.get("variant")
        other_variant = isinstance(variant, str) and variant != "default"
        # a cuda_graph / cudnn variant (a rewritten reference) has its own recorded speedup over eager
        # (score_default / score_<variant>); score_default and the compile score are custom_code's
        score = (_number(a.get("recorded_vs_eager")) if other_variant
                 else _number(rec.get("score_default", rec.get("score", rec.get("speedup")))))
        ours = _number(a["speedup_eager"]) if a["timing"] == "timed" else None
        ratio = ours / score if ours and score else None
        if ratio:
            ratios.append(ratio)
        recorded_compile = "-" if other_variant else _f(_number(rec.get("score_torch_compile_default")))
        measured = _f(ours) if a["timing"] in ("timed", "untimed") else a["timing"]  # interpreted / compiled say why
        table.append([a["hw"], a["method"], a.get("gpu_set") or "-", _f(_number(a["level"]), ".0f"), a["category"],
                      a["task"], a["verdict"], _f(score), recorded_compile, measured,
                      _f(_number(a["speedup_compile"])) if ours else "-", _f(ratio)])
    if ratios:
        doc.p(f"{len(ratios)} candidate(s) with both: geometric-mean ratio {geomean(ratios):.2f}; median "
              f"{float(np.median(ratios)):.2f}.")
    doc.table(["hw", "method", "optimized for", "level", "category", "task", "verdict", "recorded vs eager",
               "recorded vs compile", "mkbench vs eager", "mkbench vs compile", "ratio"], table)


# --- CUDA-L1 across hardware ---------------------------------------------------------------------

def cuda_l1_section(doc: Document, ctx: _Context) -> None:
    st = ctx.cuda_l1
    if st is None:
        return
    doc.h2("CUDA-L1 kernels across hardware")
    cuda_l1_blocks(doc, st)


def _ratio(x: Any) -> str:
    x = _number(x)
    return f"{x:.2f}" if x is not None else "-"


def _or_why(value: Any, why: Any) -> str:
    return _x(value) if _number(value) is not None else f"- ({why})" if _present(why) else "-"


def cuda_l1_blocks(doc: Document, st: CudaL1Study) -> None:
    """Headline, per (set, variant, device), the same kernel across devices and across sets, then
    every kernel."""
    doc.p(st.headline())
    doc.p("Per GPU set (the GPU CUDA-L1 optimized for), variant and device (the profile mkbench ran on). Speedup over "
          f"eager: geometric mean over the {', '.join(st.roles) or 'all'} shapes, only for a candidate correct on "
          "every shape and dtype. Claimed over eager: CUDA-L1's score_default, or score_default / score_<variant> for "
          "the cuda_graph / cudnn variants (rewritten references). Ratio = measured / claimed. No custom kernel: none "
          "of the candidate's own kernels ran; fallback: its kernels ran but framework kernels took more than the "
          "run's threshold of the device time. As timed: the speedup of every right answer, framework ones included. "
          "Incorrect, eager too: of the incorrect ones, those whose task's eager baseline was itself incorrect on "
          "that device, a verdict that says nothing of the candidate.")
    doc.table(["set", "variant", "device", "candidates", "verdicts", "correct", "incorrect, eager too",
               "no custom kernel", "fallback",
               "median vs eager", "median as timed", "median recorded score", "median claimed vs eager",
               "median ratio"],
              [[r.set, r.variant, r.hw, r.candidates, ", ".join(f"{k} {v}" for k, v in r.verdicts.items()) or "-",
                r.correct, r.eager_fails_too, r.no_custom_kernel, r.fallback, _or_why(r.median_speedup_eager, r.note),
                _x(r.median_speedup_as_timed), _x(r.median_recorded_score), _x(r.median_recorded_vs_eager),
                _ratio(r.median_ratio)] for r in st.groups.itertuples(index=False)])
    doc.h3("The same kernel on two devices")
    if st.pairs.empty:
        doc.p("No kernel (task, set, variant) has a speedup on two devices with the same problem sizes"
              + (f" (devices: {', '.join(st.devices)})." if len(st.devices) > 1
                 else f": one device ({st.devices[0]})."))
    else:
        doc.p(f"{len(st.pairs)} kernel(s) with a speedup on two devices, over the (shape, dtype) combinations timed on "
              f"both; the {min(len(st.pairs), SHOWN)} largest spreads (max/min):")
        doc.table(["task", "category", "set", "variant", "device a", "device b", "vs eager a", "vs eager b", "b / a",
                   "spread", "claimed vs eager"],
                  [[r.task, r.category, r.set, r.variant, r.hw_a, r.hw_b, _x(r.speedup_a), _x(r.speedup_b),
                    _ratio(r.b_over_a), _ratio(r.spread), _x(r.recorded_vs_eager)]
                   for r in st.pairs.head(SHOWN).itertuples(index=False)])
    if len(st.pairs_as_timed):
        doc.p(f"{len(st.pairs_as_timed)} kernel(s) with a right answer on two devices, timed as they ran (framework "
              f"answers included: the speed of the code as submitted); the {min(len(st.pairs_as_timed), SHOWN)} "
              "largest spreads (max/min):")
        doc.table(["task", "category", "set", "variant", "device a", "device b", "verdicts", "as timed a", "as timed b",
                   "b / a", "spread", "claimed vs eager"],
                  [[r.task, r.category, r.set, r.variant, r.hw_a, r.hw_b, f"{r.verdict_a} / {r.verdict_b}",
                    _x(r.speedup_a), _x(r.speedup_b), _ratio(r.b_over_a), _ratio(r.spread), _x(r.recorded_vs_eager)]
                   for r in st.pairs_as_timed.head(SHOWN).itertuples(index=False)])
    if len(st.verdict_changes):
        doc.p(f"{len(st.verdict_changes)} kernel(s) with a different verdict on two devices:")
        doc.table(["task", "set", "variant", "device a", "verdict a", "device b", "verdict b", "why (b)"],
                  [[r.task, r.set, r.variant, r.hw_a, r.verdict_a, r.hw_b, r.verdict_b, _cell(r.note_b or r.note_a, 70)]
                   for r in st.verdict_changes.itertuples(index=False)])
    if len(st.across_sets):
        doc.h3("The same task across sets on one device")
        doc.table(["device", "task", "category", "variant", "vs eager per set", "spread"],
                  [[r.hw, r.task, r.category, r.variant, r.per_set, _ratio(r.spread)]
                   for r in st.across_sets.head(SHOWN).itertuples(index=False)])
    doc.h3("Per kernel")
    doc.table(["task", "level", "set", "variant", "device", "verdict", "vs eager", "as timed", "recorded score",
               "claimed vs eager", "ratio", "framework share", "no custom kernel"],
              [[r.task, _f(_number(r.level), ".0f"), r.set, r.variant, r.hw, r.verdict if _present(r.verdict) else "-",
                _or_why(r.speedup_eager, _cell(r.note, 70)) + (" (eager too)" if r.eager_fails_too else ""),
                _x(r.speedup_as_timed), _x(r.recorded_score),
                _x(r.recorded_vs_eager), _ratio(r.ratio), _pct(r.framework_share) if _present(r.framework_share)
                else "-", "yes" if r.no_custom_kernel else ""] for r in st.kernels.itertuples(index=False)])
    for note in st.notes:
        doc.p(f"Note: {note}.")


# --- difficulty, hardware, backends ------------------------------------------------------------

def difficulty_section(doc: Document, ctx: _Context) -> None:
    cands = ctx.candidates
    doc.h2("Category-aware difficulty")
    with_baselines = ctx.glm_baselines if ctx.glm_baselines is not None else cands["method"].nunique() < 2
    # imported CUDA-L1 candidates: one method per GPU set (and variant), whatever --method the runs had
    d = difficulty_analysis(methods_by_gpu_set(ctx.attempts), include_baselines=with_baselines)
    doc.p(f"Binomial GLM of per-task correctness over {d.n} attempts"
          + (" (the eager and torch.compile baselines included as methods, since fewer than two candidate methods are "
             "present)"
             if with_baselines else " (candidates only)")
          + f"; factors {', '.join(d.factors) or 'none'}. Explained deviance = share of the null deviance "
          + (f"({_f(d.null_deviance)})" if d.null_deviance is not None else "") + " removed by the factor.")
    for note in d.notes:
        doc.p("Note: " + note)
    doc.table(["factor", "levels", "df", "explained deviance (sequential)", "explained deviance (drop-one)",
               "LR test p"],
              [[r.factor, r.levels, r.df, _pct(r.sequential), _pct(r.drop_one), _f(r.p_value, ".3g")]
               for r in d.deviance.itertuples()])
    doc.h3("Categories")
    doc.table(["category", "tasks", "share no attempt solves", "mean difficulty"],
              [[r.category, r.tasks, _pct(r.unsolved), _f(r.mean_difficulty)] for r in d.categories.itertuples()])
    doc.h3("Hardest tasks")
    doc.p(f"Difficulty index = share of attempts (methods x backends x hardware) that are not correct; the "
          f"{HARDEST_SHOWN} hardest.")
    doc.table(["task", "category", "attempts", "solved", "difficulty"],
              [[r.task, r.category, r.attempts, int(r.solved), _f(r.difficulty)]
               for r in d.tasks.head(HARDEST_SHOWN).itertuples()])


def hardware_section(doc: Document, ctx: _Context) -> None:
    attempts = ctx.attempts
    doc.h2("Cross-hardware speedup variance")
    spreads, mismatched = cross_hardware(attempts)
    if spreads.empty:
        doc.p("No (task, backend, method) has a correct, timed result on two or more profiles with the same problem "
              "sizes.")
    else:
        doc.p(f"{len(spreads)} (task, backend, method) measured on several profiles with identical problem sizes; each "
              "profile's speedup is the geometric mean over the (shape, dtype) combinations timed against eager on "
              "every "
              f"profile (listed). Largest max/min speedup ratio {spreads['max_min_ratio'].max():.2f}x; median "
              f"{spreads['max_min_ratio'].median():.2f}x.")
        doc.table(["task", "category", "backend", "method", "speedup vs eager per profile", "over", "max/min", "CV"],
                  [[r.task, r.category, r.backend, r.method, r.hw, r.combos, _f(r.max_min_ratio), _f(r.cv)]
                   for r in spreads.head(20).itertuples()])
    if not mismatched.empty:
        doc.p(f"Not comparable ({len(mismatched)}):")
        doc.table(["task", "backend", "method", "profiles", "why"], mismatched.values.tolist())
    if ctx.plots_on:
        doc.img(plots.cross_hardware_scatter(attempts, paired_speedups), "cross-hardware",
                "Cross-hardware scatter of speedups vs eager (log-log, y = x dashed)")


def backends_section(doc: Document, ctx: _Context) -> None:
    doc.h2("Cross-backend portability")
    if not ctx.matrices:
        doc.p("Only one kernel backend is present per profile in these runs: nothing to compare across backends yet.")
    else:
        for m in ctx.matrices:
            if len(ctx.matrices) > 1:
                doc.h3(f"{m.hw}: {m.device}")
            portability_blocks(doc, m)
    _side_checks(doc, ctx.rows)
    if ctx.plots_on:
        doc.img(plots.roofline_chart(ctx.attempts, ctx.profiles), "roofline",
                "Roofline: achieved TFLOP/s of correct kernels (large shapes)")


def _x(x: Any) -> str:
    x = _number(x)
    return f"{x:.2f}x" if x is not None else "-"


def portability_headline(m: Portability) -> list[str]:
    """The headline and findings of a portability matrix, one paragraph each, numbers first."""
    pb = m.per_backend
    roles = ", ".join(m.roles) or "all"
    ranked = pb.assign(_m=pb["median_speedup_eager"].astype(float)).sort_values("_m", ascending=False,
                                                                                 na_position="last")
    lines = [f"{len(m.backends)} backends on {m.device} (profile {m.hw}), each task against the eager baseline of "
             f"the same run. Correct on every shape and dtype: "
             + ", ".join(f"{r.backend} {r.correct}/{r.tasks}" for r in pb.itertuples(index=False))
             + f". Median per-task speedup over eager ({roles} shapes): "
             + ", ".join(f"{r.backend} {_x(r.median_speedup_eager)}" for r in ranked.itertuples(index=False))
             + f". {len(m.slow)} cell(s) more than {1 / SLOW:g}x slower than eager (listed below, with the reason)."]
    findings = []
    timed = ranked[ranked["_m"].notna()]
    if len(timed) >= 2:
        top, bottom = timed.iloc[0], timed.iloc[-1]
        findings.append(f"Fastest median: {top['backend']} ({_x(top['_m'])}, {_x(top['slowest_speedup'])} on "
                        f"{top['slowest']} to {_x(top['fastest_speedup'])} on {top['fastest']}); slowest median: "
                        f"{bottom['backend']} ({_x(bottom['_m'])}).")
    tasks = m.cells["task"].nunique()
    if len(m.common_tasks) < tasks:
        findings.append(f"The backends' task sets differ: {len(m.common_tasks)} of {tasks} tasks have a speedup on "
                        "every backend; medians over those alone compare like with like: "
                        + ", ".join(f"{r.backend} {_x(r.median_common)}" for r in pb.itertuples(index=False)) + ".")
    others = [f"{r.backend} by {_timer_words(r.timer)}" for r in pb.itertuples(index=False)
              if r.timer and m.eager_timer and r.timer != m.eager_timer]
    if others:
        findings.append(f"Timers differ from eager's ({_timer_words(m.eager_timer)}): " + "; ".join(others)
                        + ". Those speedups compare different spans.")
    unmeasured = m.cells[m.cells["speedup_eager"].isna()]
    if len(unmeasured):
        why = unmeasured["note"].fillna("").str.split(":").str[0].value_counts()
        findings.append(f"{len(unmeasured)} cell(s) have no speedup: "
                        + ", ".join(f"{n} {reason}" for reason, n in why.items()) + ".")
    for note in m.notes:
        findings.append(f"Note: {note}.")
    return lines + findings


def _timer_words(timers: str) -> str:
    return "; ".join(TIMER_MEANING.get(t, t) for t in str(timers).split("; "))


def portability_blocks(doc: Document, m: Portability) -> None:
    """Headline and findings, the per-backend table, the task x backend matrix, the slow cells."""
    for line in portability_headline(m):
        doc.p(line)
    pb = m.per_backend
    differ = len(m.common_tasks) < m.cells["task"].nunique()
    doc.table(["backend", "tasks", "correct", "rows correct (shape x dtype)", "median vs eager",
               *(["median, common tasks"] if differ else []), "geomean vs eager", "slowest", "fastest", "timer"],
              [[r.backend, r.tasks, r.correct, f"{r.rows_correct}/{r.rows}", _x(r.median_speedup_eager),
                *([_x(r.median_common)] if differ else []), _x(r.geomean_speedup_eager),
                f"{r.slowest} {_x(r.slowest_speedup)}" if _present(r.slowest) else "-",
                f"{r.fastest} {_x(r.fastest_speedup)}" if _present(r.fastest) else "-", r.timer or "-"]
               for r in pb.itertuples(index=False)])
    doc.p("Task x backend: the verdict over every evaluated shape and dtype (rows correct), and the speedup over "
          f"eager (geometric mean over the {', '.join(m.roles) or 'all'} shapes, only where every row is correct); "
          "'-' with the reason where nothing was measured. Portable: correct on every backend that ran the task.")
    done = set(m.portable_tasks)
    table = []
    for (category, task), g in m.cells.groupby(["category", "task"], sort=True):
        by = {r.backend: r for r in g.itertuples(index=False)}
        table.append([task, category, *[_matrix_cell(by[b]) if b in by else "-" for b in m.backends],
                      "yes" if task in done else "no"])
    doc.table(["task", "category", *m.backends, "portable"], table)
    doc.h3(f"More than {1 / SLOW:g}x slower than eager")
    if m.slow.empty:
        doc.p(f"No cell is more than {1 / SLOW:g}x slower than eager.")
    else:
        doc.p("Each reason is what the rows say: the timer against eager's, where the time sits on the profile's "
              "roofline next to eager's share on the same shapes, host-bound samples, and any limitation the kernel "
              "declares (`LIMITATION` in the measured source).")
        doc.table(["task", "backend", "vs eager", "reason"],
                  [[r.task, r.backend, _x(r.speedup_eager), r.reason] for r in m.slow.itertuples(index=False)])


def _present(value: Any) -> bool:
    """A value a table holds (pandas turns a missing one into NaN, which is truthy)."""
    return value is not None and not (isinstance(value, float) and pd.isna(value)) and value != ""


def _matrix_cell(c: Any) -> str:
    if not _present(c.verdict) or c.verdict == Verdict.MISSING:
        return f"- ({c.note})"
    head = f"{c.verdict} {c.correct_count}"
    return f"{head}, {_x(c.speedup_eager)}" if c.speedup_eager is not None and not pd.isna(c.speedup_eager) \
        else f"{head}, - ({_cell(c.note, 60)})"


def _side_checks(doc: Document, rows: pd.DataFrame) -> None:
    """Compile verdicts recorded apart from the gating one (e.g. HIP built for AMD targets on a
    machine without an AMD GPU): per backend and check, how many tasks passed."""
    seen: dict[tuple[str, str, str], dict[str, tuple[bool, str]]] = {}
    for r in rows.itertuples(index=False):
        checks = (r.extra or {}).get("compile_checks") if isinstance(r.extra, dict) else None
        for name, v in (checks or {}).items():
            seen.setdefault((r.hw, r.backend, name), {})[r.task] = (bool(v.get("ok")), v.get("message") or "")
    if not seen:
        return
    doc.h3("Side compile checks")
    doc.p("Compile verdicts stored apart from the one that gates a run: what can be checked of a target without its "
          "hardware (for HIP: Debian's hipcc building each candidate for AMD GPUs).")
    table = []
    for (hw, backend, name), per_task in sorted(seen.items()):
        failed = sorted(t for t, (ok, _) in per_task.items() if not ok)
        first = next((msg for t, (ok, msg) in sorted(per_task.items()) if not ok), "")
        table.append([hw, backend, name, f"{len(per_task) - len(failed)}/{len(per_task)}", first[:100]])
    doc.table(["hw", "backend", "check", "tasks passing", "first failure"], table)


# --- detail ------------------------------------------------------------------------------------

def _gbs(r: pd.Series) -> float | None:
    if not r["time_median_us"] or pd.isna(r["time_median_us"]) or r["interpreted"] or not r["bytes"]:
        return None
    return r["bytes"] / (r["time_median_us"] * 1e-6) / 1e9


def detail_section(doc: Document, ctx: _Context) -> None:
    rows = ctx.rows
    doc.h2("Detail")
    doc.p("Every evaluated (task, shape, dtype) of every run. Times in microseconds (median and IQR over `n` calls, L2 "
          "flushed before each call on GPUs); speedups as stored by the run.")
    if rows.empty:
        return
    shown = rows[rows["verdict"] != Verdict.SKIPPED]
    shown = shown.sort_values(["run_key", "category", "task", "method", "shape", "dtype"])
    doc.table(["run", "task", "method", "shape", "dtype", "verdict", "median us", "IQR us", "n", "interpreted",
               "vs eager",
               "vs compile", "GB/s"],
              [[r["run_key"], r["task"], r["method"], r["shape"], r["dtype"], r["verdict"], _f(r["time_median_us"]),
                _f(r["time_iqr_us"]), r["time_n"] if pd.notna(r["time_n"]) else "-", "yes" if r["interpreted"] else "",
                _f(r["speedup_eager"]), _f(r["speedup_compile"]), _f(_gbs(r), ".0f")] for _, r in shown.iterrows()])


BUILDERS: dict[str, Callable[[Document, _Context], None]] = {
    "findings": findings_section, "environment": environment_section, "summary": summary_section,
    "rates": rates_section,
    "verdicts": verdicts_section, "recorded": recorded_section, "cuda_l1": cuda_l1_section,
    "difficulty": difficulty_section,
    "hardware": hardware_section, "backends": backends_section, "detail": detail_section,
}


def build_report(results: ResultSet, profiles: dict[str, HardwareProfile], title: str = "mkbench report",
                 roles: tuple[str, ...] = ("large",), sections: tuple[str, ...] = MAIN_SECTIONS,
                 glm_baselines: bool | None = None, plots_on: bool = True,
                 reference_dirs: dict[str, Path] | None = None) -> Document:
    """The report over ``results`` with the named ``sections`` (in :data:`SECTIONS` order).
    ``reference_dirs`` (backend -> its reference kernels' folder) lets the portability section find
    a limitation a reference declares when the stored source path is not on this machine."""
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        raise ValueError(f"unknown report section(s) {', '.join(unknown)} (known: {', '.join(SECTIONS)})")
    doc = Document(title)
    integrity_header(doc, results)
    ctx = _Context(results, profiles, roles, glm_baselines, plots_on, reference_dirs)
    for name in SECTIONS:
        if name not in sections:
            continue
        if name == "findings" and ctx.attempts.empty:
            continue  # "No results to analyse" comes after the runs, below
        if name != "environment" and ctx.attempts.empty:
            doc.p("No results to analyse.")
            break
        BUILDERS[name](doc, ctx)
    return doc


__all__ = ["MAIN_SECTIONS", "SECTIONS", "build_report", "cuda_l1_blocks", "integrity_header", "portability_blocks",
           "portability_headline"]
