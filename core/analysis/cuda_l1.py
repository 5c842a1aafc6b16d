"""CUDA-L1's released kernels across hardware: what mkbench measured of candidates imported with
`mkbench import kernelbench <CUDA-L1>/optimized_cuda_code/<gpu>.json [--variant ...]` next to what
CUDA-L1 recorded for them on the GPU they were optimized for.

A candidate is recognised as CUDA-L1's by what the row importer put in its rows'
``extra["import"]`` (:mod:`mkbench.importers.kernelbench_generate`): a ``gpu_set`` (the set's GPU,
``--gpu-set``) and a ``variant`` or a recorded ``score_default``. Its *device* is the hardware
profile of the run that measured it.

Per kernel, i.e. (task, set, variant, device): the verdict; the measured speedup over eager (the
attempt's, :mod:`mkbench.analysis.rates` / :mod:`mkbench.metrics`: correct on every shape, geometric
mean over the timed shape roles); the speedup *as timed* of a right answer whose device time went to
framework kernels (verdict ``framework``: CUDA-L1's ``cuda_graph_code`` and ``cudnn_code`` are the
reference rewritten, so they launch no kernel of their own by design); the recorded score of the
variant (``score_default`` / ``score_cuda_graph`` / ``score_cudnn``) and the recorded speedup over
eager that compares with mkbench's (``recorded_vs_eager``: ``score_default``, or ``score_default /
score_<variant>`` for the rewritten references); and ratio = measured / recorded over eager, the
share of the claimed speedup that is real here.

No custom kernel: a row that records ``own_launches == 0`` or a ``framework`` reason saying no kernel
of the candidate ran. Fallback: a candidate whose own kernels ran but whose largest framework share
is above the threshold its run judged with (disjoint from "no custom kernel").

Eager fails too: an ``incorrect`` kernel whose task's eager baseline was itself ``incorrect`` on that
device (PyTorch's own float32 outside the contract against the float64 reference: a deep model's
accumulated rounding, dropout in training mode, an output of rounding noise). Such a verdict says
nothing of the candidate; the tables count and name those kernels apart.

Everything that was not measured is None here and "-" with the reason in the tables, never 0.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..metrics import geomean, median, speedup
from ..verdicts import SEVERITY, Verdict
from .dataset import ResultSet
from .rates import NO_SPEED
from .variance import _same_problem, matched_speedups

#: a kernel "keeps" its speedup on another device when it loses less than this share of it
KEEP = 0.8
NO_KERNEL = re.compile(r"no \w+ kernel of the candidate ran")
#: verdicts whose answer was right (the time is of a right answer, whoever computed it)
RIGHT = (Verdict.CORRECT, Verdict.FRAMEWORK)
SHOWN = 15


def _num(x: Any) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) and x > 0 else None


def is_cuda_l1(attempts: pd.DataFrame) -> pd.Series:
    """Which attempts are imported CUDA-L1 candidates (see module docstring)."""
    if attempts.empty or "gpu_set" not in attempts:
        return pd.Series(False, index=attempts.index, dtype=bool)
    has_set = attempts["gpu_set"].map(lambda s: isinstance(s, str) and bool(s))
    marked = attempts["variant"].map(lambda v: isinstance(v, str)) | attempts["recorded"].map(
        lambda r: isinstance(r, dict) and "score_default" in r)
    return has_set & marked & ~attempts["is_baseline"].astype(bool)


def set_method(gpu_set: str, variant: str | None) -> str:
    """The method name of a GPU set's variant, as the row importer suggests it (``cuda-l1-h100``,
    ``cuda-l1-h100-cuda_graph``), whatever --method the run was given."""
    return f"cuda-l1-{gpu_set}" + ("" if variant in (None, "default") else f"-{variant}")


def methods_by_gpu_set(attempts: pd.DataFrame) -> pd.DataFrame:
    """``attempts`` with each CUDA-L1 candidate's method replaced by its GPU set's (and variant's)
    name, so a model over methods (the difficulty GLM) has one level per set, however the runs
    named their methods."""
    mask = is_cuda_l1(attempts)
    if not mask.any():
        return attempts
    out = attempts.copy()
    out.loc[mask, "method"] = [set_method(s, v if isinstance(v, str) else None)
                               for s, v in zip(out.loc[mask, "gpu_set"], out.loc[mask, "variant"])]
    return out


@dataclass
class CudaL1Study:
    roles: tuple[str, ...]
    devices: list[str]  # hardware profiles, in order
    device_names: dict[str, str]
    sets: list[str]
    variants: list[str]
    kernels: pd.DataFrame  # one row per (task, set, variant, device) a device ran or should have
    groups: pd.DataFrame  # one row per (set, variant, device)
    pairs: pd.DataFrame  # the same kernel on two devices, both with a speedup; largest spread first
    verdict_changes: pd.DataFrame  # the same kernel with a different verdict on two devices
    across_sets: pd.DataFrame  # the same task and variant from several sets on one device
    notes: list[str] = field(default_factory=list)
    #: the same kernel with a right answer (correct or framework) on two devices: its as-timed
    #: speedups, largest spread first. Where few kernels are correct (CUDA-L1's answer mostly from
    #: PyTorch's own kernels), this is what says how the submitted code's speed moves across cards.
    pairs_as_timed: pd.DataFrame = field(default_factory=pd.DataFrame)

    def headline(self) -> str:
        return headline(self)

    def summary(self) -> dict[str, Any]:
        """What summary.json holds (see :func:`summary`)."""
        return summary(self)


# --- per kernel --------------------------------------------------------------------------------

def _threshold(extra: dict, run_config: dict) -> float | None:
    value = extra.get("framework_threshold") if isinstance(extra, dict) else None
    if not isinstance(value, (int, float)):
        value = run_config.get("framework_threshold")
    return float(value) if isinstance(value, (int, float)) else None


def _row_evidence(g: pd.DataFrame, eager: dict, roles: tuple[str, ...], config: dict) -> dict[str, Any]:
    """No custom kernel, fallback and the as-timed speedup of one attempt's evaluated rows."""
    no_kernel, shares, limits = False, [], []
    for extra, error in zip(g["extra"], g["error"]):
        extra = extra if isinstance(extra, dict) else {}
        if extra.get("own_launches") == 0 or (isinstance(error, str) and NO_KERNEL.search(error)):
            no_kernel = True
        if extra.get("framework_share") is not None:
            shares.append(float(extra["framework_share"]))
            limits.append(_threshold(extra, config))
    fallback = not no_kernel and any(limit is not None and s > limit for s, limit in zip(shares, limits))
    timed = None
    right = g["verdict"].isin(list(RIGHT)).all() and len(g)
    if right:
        sel = g[g["shape_role"].isin(roles)] if roles else g
        values = [speedup(eager.get((r.run_key, r.task, r.shape, r.dtype)), r.time_median_us)
                  for r in sel.itertuples(index=False) if not (r.interpreted or 0)]
        timed = geomean(values) if values and all(v is not None for v in values) else None
    return {"no_custom_kernel": no_kernel, "fallback": bool(fallback),
            "framework_share": max(shares) if shares else None, "speedup_as_timed": timed}


def _eager_times(rows: pd.DataFrame) -> dict:
    base = rows[(rows["method"] == "eager") & (rows["verdict"] == Verdict.CORRECT) & rows["time_median_us"].notna()
                & (rows["interpreted"].fillna(0) == 0)]
    return {(r.run_key, r.task, r.shape, r.dtype): r.time_median_us for r in base.itertuples(index=False)}


def _why_no_speedup(a: pd.Series) -> str:
    if a["verdict"] == Verdict.MISSING:
        return "missing: " + (str(a["first_error"])[:60] if a["first_error"] else "no code for this variant")
    if not a["correct"]:
        return f"{a['verdict']}" + (f": {str(a['first_error'])[:60]}" if a["first_error"] else "")
    if a["timing"] != "timed":
        return NO_SPEED.get(a["timing"], a["timing"])
    return "no eager baseline timed in the run"


def _recorded(a: pd.Series) -> tuple[float | None, float | None]:
    """(the variant's recorded score, its recorded speedup over eager)."""
    rec = a["recorded"] if isinstance(a["recorded"], dict) else {}
    variant = a["variant"] if isinstance(a["variant"], str) else "default"
    key = {"default": "score_default"}.get(variant, f"score_{variant}")
    score = _num(rec.get(key))
    vs_eager = _num(a.get("recorded_vs_eager"))
    if vs_eager is None and variant == "default":  # stores written before the importer kept it
        vs_eager = score
    return score, vs_eager


def study(results: ResultSet, attempts: pd.DataFrame, roles: tuple[str, ...] = ("large",)) -> CudaL1Study | None:
    """The study over the CUDA-L1 candidates among ``attempts`` (:func:`mkbench.analysis.rates.
    attempt_table` of ``results``), or None when there are none."""
    mask = is_cuda_l1(attempts)
    if not mask.any():
        return None
    cands = attempts[mask].copy()
    cands["variant"] = cands["variant"].map(lambda v: v if isinstance(v, str) else "default")
    rows = results.rows
    rows = rows[(rows["verdict"] != Verdict.SKIPPED) & ~rows["is_baseline"].astype(bool)]
    per = {k: g for k, g in rows.groupby(["run_key", "task", "backend", "method"])}
    eager = _eager_times(results.rows)
    eager_failed = {key for key, methods in results.failed_baselines().items() if "eager" in methods}
    configs = {r.key: r.config for r in results.runs}
    order = {r.key: i for i, r in enumerate(results.runs)}
    devices = sorted(cands["hw"].unique())
    names = {}
    for r in results.runs:
        names.setdefault(r.hw, r.device_name)
    notes = []
    # one attempt per (task, set, variant, device): the latest run's where several measured it
    cands = cands.assign(_order=cands["run_key"].map(order)).sort_values("_order")
    dup = cands.duplicated(["task", "gpu_set", "variant", "hw"], keep="last")
    if dup.any():
        notes.append(f"{int(dup.sum())} kernel(s) were measured by several runs on one device: the latest run's "
                     "result is used")
    cands = cands[~dup]
    out = []
    for _, a in cands.iterrows():
        g = per.get((a["run_key"], a["task"], a["backend"], a["method"]))
        ev = _row_evidence(g, eager, roles, configs.get(a["run_key"], {})) if g is not None else {
            "no_custom_kernel": False, "fallback": False, "framework_share": None, "speedup_as_timed": None}
        score, vs_eager = _recorded(a)
        measured = _num(a["speedup_eager"]) if a["timing"] == "timed" else None
        timed = measured or ev["speedup_as_timed"]
        out.append({"task": a["task"], "category": a["category"], "level": a["level"], "set": a["gpu_set"],
                    "variant": a["variant"], "hw": a["hw"], "device": names.get(a["hw"], a["hw"]),
                    "run_key": a["run_key"], "ran": True, "verdict": a["verdict"], "correct": bool(a["correct"]),
                    "correct_count": a["correct_count"], "speedup_eager": measured,
                    "speedup_eager_by_combo": a["speedup_eager_by_combo"], "flops": a["flops"],
                    "bytes": a["bytes"], "speedup_as_timed": timed if a["verdict"] in RIGHT else None,
                    "note": None if measured else _why_no_speedup(a),
                    "recorded_score": score, "recorded_vs_eager": vs_eager,
                    "ratio": measured / vs_eager if measured and vs_eager else None,
                    "ratio_as_timed": timed / vs_eager if timed and vs_eager and a["verdict"] in RIGHT else None,
                    "eager_fails_too": a["verdict"] == Verdict.INCORRECT and (a["hw"], a["task"]) in eager_failed,
                    **{k: ev[k] for k in ("no_custom_kernel", "fallback", "framework_share")}})
    kernels = pd.DataFrame(out)
    # a device that ran a (set, variant) but not one of its kernels: "-" with the reason
    absent = []
    ran_sv = {(s, v, h) for s, v, h in zip(kernels["set"], kernels["variant"], kernels["hw"])}
    for (s, v, task), g in kernels.groupby(["set", "variant", "task"]):
        first = g.iloc[0]
        for hw in devices:
            if hw in set(g["hw"]) or (s, v, hw) not in ran_sv:
                continue
            absent.append({**{k: first[k] for k in ("task", "category", "level", "set", "variant",
                                                    "recorded_score", "recorded_vs_eager")},
                           "hw": hw, "device": names.get(hw, hw), "run_key": None, "ran": False, "verdict": None,
                           "correct": False, "correct_count": None, "speedup_eager": None,
                           "speedup_eager_by_combo": {}, "speedup_as_timed": None, "ratio": None,
                           "ratio_as_timed": None, "eager_fails_too": False, "no_custom_kernel": False,
                           "fallback": False,
                           "framework_share": None, "note": f"not run on {hw}"})
    if absent:
        kernels = pd.concat([kernels, pd.DataFrame(absent)], ignore_index=True)
    studied = set(kernels["task"])
    failed = sorted({(hw, t) for hw, t in eager_failed if hw in devices and t in studied})
    if failed:
        notes.append(f"on {len(failed)} (device, task) pair(s) the eager baseline itself was incorrect under the "
                     "task's contract, so a candidate's `incorrect` there says nothing of it (counted apart as "
                     "'incorrect, eager too'): " + ", ".join(f"{t} on {hw}" for hw, t in failed))
    kernels = kernels.sort_values(["set", "variant", "level", "task", "hw"], na_position="last").reset_index(drop=True)
    sets, variants = sorted(kernels["set"].unique()), sorted(kernels["variant"].unique(), key=_variant_order)
    groups = _groups(kernels, sets, variants, devices)
    pairs, changes, as_timed = _pairs(kernels)
    return CudaL1Study(roles, devices, names, sets, variants, kernels, groups, pairs, changes,
                       _across_sets(kernels), notes, pairs_as_timed=as_timed)


def _variant_order(v: str) -> tuple[int, str]:
    return (["default", "cuda_graph", "cudnn"].index(v) if v in ("default", "cuda_graph", "cudnn") else 3, v)


# --- per (set, variant, device) ------------------------------------------------------------------

def _groups(kernels: pd.DataFrame, sets: list[str], variants: list[str], devices: list[str]) -> pd.DataFrame:
    out = []
    for s, v, hw in itertools.product(sets, variants, devices):
        g = kernels[(kernels["set"] == s) & (kernels["variant"] == v) & (kernels["hw"] == hw) & kernels["ran"]]
        if not len(kernels[(kernels["set"] == s) & (kernels["variant"] == v)]):
            continue
        rec: dict[str, Any] = {"set": s, "variant": v, "hw": hw, "candidates": len(g)}
        if g.empty:
            out.append({**rec, "verdicts": {}, "correct": 0, "eager_fails_too": 0, "no_custom_kernel": 0, "fallback": 0,
                        "median_speedup_eager": None, "median_speedup_as_timed": None, "median_recorded_score": None,
                        "median_recorded_vs_eager": None, "median_ratio": None, "timed": 0,
                        "note": f"set {s}, variant {v} not run on {hw}"})
            continue
        counts = g["verdict"].value_counts()
        measured = g[g["speedup_eager"].notna()]
        note = None
        if measured.empty:
            note = "no correct, timed candidate (" + ", ".join(f"{int(counts[x])} {x}" for x in SEVERITY
                                                                if x in counts) + ")"
        rec.update(verdicts={str(x): int(counts[x]) for x in SEVERITY if x in counts},
                   correct=int(g["correct"].sum()), eager_fails_too=int(g["eager_fails_too"].sum()),
                   no_custom_kernel=int(g["no_custom_kernel"].sum()),
                   fallback=int(g["fallback"].sum()), timed=len(measured),
                   median_speedup_eager=median(measured["speedup_eager"]),
                   median_speedup_as_timed=median(g["speedup_as_timed"]),
                   median_recorded_score=median(g["recorded_score"]),
                   median_recorded_vs_eager=median(g["recorded_vs_eager"]),
                   # the claim for the same kernels that were measured, so the two medians compare
                   median_recorded_vs_eager_measured=median(measured["recorded_vs_eager"]),
                   median_ratio=median(g["ratio"]), note=note)
        out.append(rec)
    return pd.DataFrame(out)


# --- across devices and across sets ----------------------------------------------------------------

PAIR_AS_TIMED_COLUMNS = ["task", "category", "set", "variant", "hw_a", "hw_b", "verdict_a", "verdict_b", "speedup_a",
                         "speedup_b", "b_over_a", "spread", "recorded_vs_eager"]


def _pairs(kernels: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """One walk over the same kernel (task, set, variant) on every two devices that ran it: (pairs
    with a correct speedup on both over the combinations both timed, verdict changes, pairs with a
    right answer on both as timed: each device's as-timed speedup over eager, geometric mean over the
    study's shapes, framework answers included). Speedups pair only for the same problem sizes."""
    ran = kernels[kernels["ran"]]
    pairs, changes, as_timed = [], [], []
    for (task, s, v), g in ran.groupby(["task", "set", "variant"]):
        for (_, a), (_, b) in itertools.combinations(g.sort_values("hw").iterrows(), 2):
            base = {"task": task, "category": a["category"], "set": s, "variant": v, "hw_a": a["hw"], "hw_b": b["hw"]}
            if a["verdict"] != b["verdict"]:
                changes.append({**base, "verdict_a": a["verdict"], "verdict_b": b["verdict"],
                                "note_a": a["note"] or "", "note_b": b["note"] or ""})
            two = pd.DataFrame([{"hw": x["hw"], "flops": x["flops"], "bytes": x["bytes"],
                                 "speedup_eager_by_combo": x["speedup_eager_by_combo"]} for x in (a, b)])
            if not _same_problem(two):
                continue
            if pd.notna(a["speedup_as_timed"]) and pd.notna(b["speedup_as_timed"]):
                ta, tb = float(a["speedup_as_timed"]), float(b["speedup_as_timed"])
                as_timed.append({**base, "verdict_a": a["verdict"], "verdict_b": b["verdict"], "speedup_a": ta,
                                 "speedup_b": tb, "b_over_a": tb / ta, "spread": max(ta, tb) / min(ta, tb),
                                 "recorded_vs_eager": a["recorded_vs_eager"]})
            if a["speedup_eager"] is None or b["speedup_eager"] is None or pd.isna(a["speedup_eager"]) \
                    or pd.isna(b["speedup_eager"]):
                continue
            per_hw, common = matched_speedups(two)
            if not per_hw:
                continue
            sa, sb = per_hw[a["hw"]], per_hw[b["hw"]]
            pairs.append({**base, "speedup_a": sa, "speedup_b": sb, "b_over_a": sb / sa,
                          "spread": max(sa, sb) / min(sa, sb), "recorded_vs_eager": a["recorded_vs_eager"],
                          "combos": ", ".join(common)})
    cols = ["task", "category", "set", "variant", "hw_a", "hw_b", "speedup_a", "speedup_b", "b_over_a", "spread",
            "recorded_vs_eager", "combos"]
    pairs_df = pd.DataFrame(pairs, columns=cols).sort_values("spread", ascending=False).reset_index(drop=True)
    timed_df = pd.DataFrame(as_timed, columns=PAIR_AS_TIMED_COLUMNS).sort_values("spread", ascending=False)
    return pairs_df, pd.DataFrame(changes, columns=["task", "category", "set", "variant", "hw_a", "hw_b", "verdict_a",
                                                    "verdict_b", "note_a", "note_b"]), timed_df.reset_index(drop=True)


def _across_sets(kernels: pd.DataFrame) -> pd.DataFrame:
    """The same task and variant from several GPU sets on one device: each set's speedup and the
    max/min spread (sets with no speedup there listed by verdict)."""
    ran = kernels[kernels["ran"]]
    out = []
    for (hw, task, v), g in ran.groupby(["hw", "task", "variant"]):
        if g["set"].nunique() < 2:
            continue
        timed = g[g["speedup_eager"].notna()]
        values = {s: float(x) for s, x in zip(timed["set"], timed["speedup_eager"])}
        out.append({"hw": hw, "task": task, "category": g["category"].iloc[0], "variant": v,
                    "per_set": ", ".join(f"{s}={values[s]:.2f}" if s in values else f"{s}=- ({verdict})"
                                         for s, verdict in zip(g["set"], g["verdict"])),
                    "sets_timed": len(values),
                    "spread": max(values.values()) / min(values.values()) if len(values) >= 2 else None})
    cols = ["hw", "task", "category", "variant", "per_set", "sets_timed", "spread"]
    df = pd.DataFrame(out, columns=cols)
    return df.sort_values("spread", ascending=False, na_position="last").reset_index(drop=True)


# --- headline and summary ------------------------------------------------------------------------

def _x(x: Any) -> str:
    x = _num(x)
    return f"{x:.2f}x" if x is not None else "-"


def headline(st: CudaL1Study) -> str:
    """One paragraph, every number computed: per set and device how many kernels are correct, the
    median measured speedup against the median claimed for the same kernels and the median
    measured/claimed ratio; then how speedups move between devices."""
    parts = []
    for s in st.sets:
        g = st.groups[(st.groups["set"] == s) & (st.groups["variant"] == "default") & (st.groups["candidates"] > 0)]
        if g.empty:
            g = st.groups[(st.groups["set"] == s) & (st.groups["candidates"] > 0)]
        per_device = []
        for r in g.itertuples(index=False):
            what = f"on {r.hw}" + (f" ({r.variant})" if r.variant != "default" else "")
            if r.timed and _num(r.median_ratio):
                per_device.append(f"{what} {r.correct}/{r.candidates} correct, median {_x(r.median_speedup_eager)} "
                                  f"over eager measured against {_x(r.median_recorded_vs_eager_measured)} claimed for "
                                  f"the same {r.timed} kernel(s), median measured/claimed {r.median_ratio:.2f}")
            elif r.timed:
                per_device.append(f"{what} {r.correct}/{r.candidates} correct, median {_x(r.median_speedup_eager)} "
                                  "over eager (no claim recorded to compare)")
            else:
                per_device.append(f"{what} {r.correct}/{r.candidates} correct, no measured speedup ({r.note})")
        if per_device:
            parts.append(f"Kernels optimized for {s}: " + "; ".join(per_device) + ".")
    if not parts:
        return "No CUDA-L1 candidate was run."
    too = st.kernels[st.kernels["eager_fails_too"].fillna(False).astype(bool)]
    if len(too):
        parts.append(f"{len(too)} of the incorrect verdicts are on tasks whose eager baseline was itself incorrect on "
                     f"that device ({too['task'].nunique()} task(s)): they say nothing of the candidates.")
    ratios = st.kernels["ratio"].dropna()
    claimed = st.kernels[st.kernels["ran"]]
    if len(ratios):
        kept = int((ratios >= KEEP).sum())
        parts.append(f"Over all {len(claimed)} kernel runs, {len(ratios)} have both a measured speedup and a claim: "
                     f"{kept} keep at least {KEEP:.0%} of the claimed speedup over eager, and the median kernel keeps "
                     f"{median(ratios):.0%} of it (geometric mean {geomean(ratios):.0%}).")
    else:
        parts.append(f"None of the {len(claimed)} kernel runs has both a measured speedup and a claim, so how much of "
                     "the claimed speedup is real cannot be said from these stores.")
    if len(st.pairs):
        for (ha, hb), p in st.pairs.groupby(["hw_a", "hw_b"]):
            r = p["b_over_a"]
            lost = int((r < KEEP).sum())
            parts.append(f"{len(p)} kernel(s) timed on both {ha} and {hb}: median speedup on {hb} / on {ha} "
                         f"{median(r):.2f}, {lost} lose more than {1 - KEEP:.0%} of it on {hb}"
                         f"; largest spread {p['spread'].max():.2f}x ({p.iloc[0]['task']}, set {p.iloc[0]['set']}).")
    elif len(st.devices) > 1:
        parts.append(f"No kernel has a speedup on two of the devices ({', '.join(st.devices)}), so none can be "
                     "compared across them.")
    else:
        parts.append(f"One device only ({st.devices[0]}): nothing to compare across hardware yet.")
    for (ha, hb), p in st.pairs_as_timed.groupby(["hw_a", "hw_b"]):
        r = p["b_over_a"]
        parts.append(f"Counting every right answer as timed (framework ones included), {len(p)} kernel(s) ran on both "
                     f"{ha} and {hb}: median speedup on {hb} / on {ha} {median(r):.2f}, {int((r < KEEP).sum())} lose "
                     f"more than {1 - KEEP:.0%} of it and {int((r > 1 / KEEP).sum())} gain more than "
                     f"{1 / KEEP - 1:.0%}; largest spread {p['spread'].max():.2f}x ({p.iloc[0]['task']}, set "
                     f"{p.iloc[0]['set']}).")
    if len(st.verdict_changes):
        parts.append(f"{len(st.verdict_changes)} kernel(s) change verdict between devices (listed below).")
    return " ".join(parts)


def _r(x: Any, digits: int = 4) -> float | None:
    x = _num(x)
    return round(x, digits) if x is not None else None


def summary(st: CudaL1Study) -> dict[str, Any]:
    """``devices``, ``sets``, ``variants``, the headline, and per set, variant and device (under
    ``by_set``): candidates, verdict counts, correct, no custom kernel, fallback, the median
    speedup over eager (null with ``note`` where none was measured), median recorded score and
    recorded speedup over eager, median measured/claimed ratio; then the largest cross-device
    spreads."""
    by_set: dict[str, Any] = {}
    for r in st.groups.itertuples(index=False):
        by_set.setdefault(r.set, {}).setdefault(r.variant, {})[r.hw] = {
            "device": st.device_names.get(r.hw, r.hw), "candidates": int(r.candidates),
            "verdicts": dict(r.verdicts), "correct": int(r.correct), "incorrect_eager_too": int(r.eager_fails_too),
            "no_custom_kernel": int(r.no_custom_kernel),
            "fallback": int(r.fallback), "timed": int(r.timed), "median_speedup_eager": _r(r.median_speedup_eager),
            "median_speedup_as_timed": _r(r.median_speedup_as_timed),
            "median_recorded_score": _r(r.median_recorded_score),
            "median_recorded_vs_eager": _r(r.median_recorded_vs_eager), "median_ratio": _r(r.median_ratio),
            "note": r.note}
    return {"devices": st.devices, "device_names": st.device_names, "sets": st.sets, "variants": st.variants,
            "shape_roles": list(st.roles), "headline": st.headline(), "by_set": by_set,
            "cross_device": [{"task": p.task, "set": p.set, "variant": p.variant, p.hw_a: _r(p.speedup_a),
                              p.hw_b: _r(p.speedup_b), "spread": _r(p.spread)}
                             for p in st.pairs.head(SHOWN).itertuples(index=False)],
            "cross_device_as_timed": [{"task": p.task, "set": p.set, "variant": p.variant, p.hw_a: _r(p.speedup_a),
                                       p.hw_b: _r(p.speedup_b), "verdicts": [p.verdict_a, p.verdict_b],
                                       "spread": _r(p.spread)}
                                      for p in st.pairs_as_timed.head(SHOWN).itertuples(index=False)],
            "notes": st.notes}


__all__ = ["CudaL1Study", "headline", "is_cuda_l1", "methods_by_gpu_set", "set_method", "study", "summary"]
