"""Engine throughput: the same `mkbench run` by the previous main and by this tree, one after the
other on the same device, and a summary.json of what each measured.

    python benchmarks/throughput.py --previous PREV_TREE --out OUT [--limit S] -- RUN_ARGS...

PREV_TREE is a checkout (or `git archive`) of the previous main. Each tree is laid out as the
package it installs as (core/ -> mkbench/, backends/, tasks/, hardware_profiles/ below it) and run
from there through PYTHONPATH, so neither depends on what is installed (a wheel of the previous
main lacked mkbench.engine). Each run writes OUT/<label>.sqlite, OUT/<label>.log, and its rows as
OUT/<label>.json; RUN_ARGS go to both (e.g. `--task a,b --time-role large --baselines eager`).

Every number in summary.json is read from the stores this run wrote (None where not measured):
wall time, units, seconds per unit, hack and framework rows on mkbench's own references, lock-wait
share of unit time, trace seconds per candidate unit (mkbench.engine.clock reads both stores).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
FOLDERS = ("backends", "tasks", "hardware_profiles")


def layout(tree: Path, dest: Path) -> Path:
    """``tree``'s sources as the installed package ``mkbench`` under ``dest``."""
    pkg = dest / "mkbench"
    shutil.copytree(tree / "core", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    for name in FOLDERS:
        shutil.copytree(tree / name, pkg / name, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def finish(proc: subprocess.Popen, limit: float | None, grace: float = 30.0) -> int | None:
    """``proc``'s exit status once it ends, or None where it ran past ``limit`` seconds and was stopped:
    SIGTERM, as a user's Ctrl-C (the run records its engine clock, timing phases included, as it stops;
    the store keeps what finished), then SIGKILL past ``grace`` seconds more."""
    try:
        return proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        return None


def run(label: str, tree: Path, out: Path, args: list[str], limit: float) -> dict:
    dest = layout(tree, Path(tempfile.mkdtemp(prefix=f"mkbench-{label}-")))
    env = dict(os.environ, PYTHONPATH=str(dest), PYTHONUNBUFFERED="1")
    store = out / f"{label}.sqlite"
    cmd = [sys.executable, "-m", "mkbench", "run", "--backend", "triton", "--store", str(store), "--no-progress",
           "--json", str(out / f"{label}.json"), *args]
    t = time.monotonic()
    with open(out / f"{label}.log", "w") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        code = finish(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=dest), limit)
    wall = time.monotonic() - t
    print(f"{label}: exit {code}, {wall:.0f} s", flush=True)
    return {"label": label, "exit": code, "wall_s": round(wall, 1), **measure(store)}


def measure(store: Path) -> dict:
    from mkbench.engine.clock import totals, unit_clocks
    from mkbench.store import Store
    if not store.exists():
        return {"units": 0}
    s = Store(store)
    try:
        rows = s.results()
        runs = s.runs()
    finally:
        s.close()
    sessions = [sess for r in runs for sess in (r.env or {}).get("engine_clock", {}).get("sessions", [])]
    clocks = unit_clocks(rows)
    cand = [c for c in clocks if not c.baseline]
    every, candidates = totals(clocks), totals(cand)
    busy = every["unit_seconds"]
    refs = [r for r in rows if r["method"] == "reference" and not r["is_baseline"]]
    verdicts: dict[str, int] = {}
    for r in rows:
        if r["verdict"] != "skipped":
            verdicts[f"{'baseline' if r['is_baseline'] else 'candidate'}:{r['verdict']}"] = \
                verdicts.get(f"{'baseline' if r['is_baseline'] else 'candidate'}:{r['verdict']}", 0) + 1
    return {
        "units": len(clocks), "candidate_units": len(cand),
        "reference_hack_rows": sum(r["verdict"] == "hack" for r in refs),
        "reference_framework_rows": sum(r["verdict"] == "framework" for r in refs),
        "reference_hack_reasons": sorted({f"{r['task']} {r['shape']}/{r['dtype']}: {r['error']}"
                                          for r in refs if r["verdict"] == "hack"})[:40],
        "verdicts": verdicts,
        "lock_wait_share": round(every["wait_seconds"] / busy, 3) if busy else None,
        # the memory budget's part of those waits (mkbench.engine.memory_report says how its plan fared)
        "memory_wait_share": round(every["memory_wait_seconds"] / busy, 3) if busy else None,
        "trace_seconds_per_unit": round(candidates["trace_seconds"] / len(cand), 3) if cand else None,
        "trace_overhead_seconds_per_unit": round(candidates["trace_overhead_seconds"] / len(cand), 3) if cand else None,
        "unit_seconds_mean": round(busy / len(clocks), 3) if clocks else None,
        # the device's timing phases (how many, seconds draining the checks in flight, seconds held), as
        # the run recorded them when it stopped (absent where it was killed before it could)
        "timing_phases": next((sess["timing"] for sess in reversed(sessions) if "timing" in sess), None),
        # the timed steps themselves (every other lane waits through them), and the calls the timer's
        # run-ahead dropped while it found its spin length
        "time_step_seconds": round(sum(c.steps.get("time_step", 0.0) for c in clocks), 3),
        # the first timed combination's inputs, made before the hold (0 for a tree that made them inside)
        "time_inputs_seconds": round(sum(c.steps.get("time_inputs", 0.0) for c in clocks), 3),
        "run_ahead_dropped": sum(int(((r["extra"] or {}).get("run_ahead_dropped")) or 0) for r in rows),
        "host_bound_samples": sum(int(((r["extra"] or {}).get("host_bound_samples")) or 0) for r in rows),
        "host_cpu": next((sess["host_cpu"] for sess in reversed(sessions) if sess.get("host_cpu")), None),
        # how busy the GPUs were (mkbench.engine.gpu_busy), and the judge's seconds per candidate unit by
        # part: what bounds a job whose units wait for the memory budget
        "gpu_busy": next((sess["gpu_busy"] for sess in reversed(sessions) if sess.get("gpu_busy")), None),
        "judge_seconds_per_candidate_unit": judge_parts(cand),
        "cpu_seconds": {"workers": round(sum(c.steps.get("cpu_worker", 0.0) for c in clocks), 1),
                        "compile_ahead": round(sum(c.steps.get("cpu_compile_ahead", 0.0) for c in clocks), 1),
                        "judges": round(sum(sess.get("judge_cpu_s") or 0.0 for sess in sessions), 1)},
    }


def judge_parts(cand: list) -> dict[str, float] | None:
    """Mean seconds per candidate unit of ``judge`` and each of its parts (``judge_import_map`` ...): the
    rows of ``analyze engine``'s step table that are the judge's."""
    from mkbench.engine.clock import step_table
    if not cand:
        return None
    _, rows = step_table(cand)
    return {name: mean for name, mean in rows if name == "judge" or name.startswith("judge_")}


def gpus_used(run_args: list[str]) -> int | None:
    """How many GPUs the runs were given (``--gpus``, default one), None where it cannot be told."""
    chosen = run_args[run_args.index("--gpus") + 1] if "--gpus" in run_args[:-1] else "0"
    if chosen != "all":
        return len(chosen.split(","))
    try:
        import torch
        return torch.cuda.device_count() if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001 - the summary says None
        return None


def scaling(results: dict[str, dict]) -> dict[str, float]:
    """Units per second of each run that used more than one GPU over those of the first run on one GPU
    (the same plan in the same order, each stopped at the same limit), by label; empty without both."""
    def rate(r: dict) -> float | None:
        return r["units"] / r["wall_s"] if r.get("units") and r.get("wall_s") else None
    one = next((r for r in results.values() if r.get("gpus") == 1 and rate(r)), None)
    if one is None:
        return {}
    return {label: round(rate(r) / rate(one), 3) for label, r in results.items()
            if (r.get("gpus") or 0) > 1 and rate(r)}


#: the README main job's own arguments (`.ci/main` on a GPU): a run with these and no narrower choice of tasks,
#: shapes or candidates that ends by itself is the whole main job
MAIN_JOB_ARGS = ("--baselines", "eager", "--time-role", "large")
NARROWING = ("--task", "--tasks-dir", "--solutions", "--shape-role", "--dtype", "--category", "--no-timing")


def is_main_job(run_args: list[str]) -> bool:
    pairs = {(a, b) for a, b in zip(run_args, run_args[1:])}
    wanted = {(MAIN_JOB_ARGS[i], MAIN_JOB_ARGS[i + 1]) for i in range(0, len(MAIN_JOB_ARGS), 2)}
    return wanted <= pairs and not any(a in NARROWING for a in run_args)


def main_job_seconds(results: dict[str, dict], run_args: list[str], gpus: int, first: str | None) -> float | None:
    """The wall time of a run on ``gpus`` GPUs that ran the whole main job and ended by itself (exit 0, not
    stopped at the limit), ``first``'s where it is one; None where none did. The run's own wall time: the
    job's setup (`.ci/setup`) and its report are not in it."""
    if not is_main_job(run_args):
        return None
    done = {label: r for label, r in results.items() if r.get("exit") == 0 and r.get("gpus") == gpus}
    r = done.get(first) or next(iter(done.values()), None)
    return r["wall_s"] if r else None


def device_name() -> str | None:
    try:
        import torch
        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    except Exception:  # noqa: BLE001 - the summary says None
        return None


def summarize(results: dict[str, dict], run_args: list[str], device: str) -> dict:
    """summary.json: the issue's keys for this tree's run (or, where no run is labelled ``this``, the last run:
    an A/B of ``--variant`` runs), the previous main's seconds per kernel, each run's, the scaling of any
    multi-GPU run over a one-GPU run of the call, and every run's figures under ``runs``."""
    scaled = scaling(results)
    # the top-level figures are this tree's run, or where none is labelled so the last run's (call 41's summary
    # gave nulls and "gpus": 1 for three 4-GPU runs); "summary_of" says which
    shown = "this" if "this" in results else next(reversed(results), None)
    this, prev = results.get(shown, {}) if shown else {}, results.get("previous", {})

    def per_unit(r):
        # per candidate kernel, amortized: its baselines' units are part of what evaluating it costs
        return round(r["wall_s"] / r["candidate_units"], 3) if r.get("candidate_units") else None

    return {
        "device": device, "gpus": this.get("gpus", gpus_used(run_args)), "run_args": run_args,
        "summary_of": shown,
        "kernels": this.get("candidate_units"), "units": this.get("units"), "seconds_per_kernel": per_unit(this),
        "seconds_per_kernel_previous_main": per_unit(prev),
        "seconds_per_kernel_by_run": {label: per_unit(r) for label, r in results.items()},
        "main_job_seconds": main_job_seconds(results, run_args, 1, shown),
        "main_job_seconds_4gpu": main_job_seconds(results, run_args, 4, shown),
        # a run given 4 GPUs against one given 1, in this call (None where no such pair ran)
        "scaling_4gpu": next((scaled[k] for k, r in results.items() if r.get("gpus") == 4 and k in scaled), None),
        "scaling_by_run": scaled,
        "reference_hack_rows": this.get("reference_hack_rows"),
        "lock_wait_share": this.get("lock_wait_share"),
        "memory_wait_share": this.get("memory_wait_share"),
        "trace_seconds_per_unit": this.get("trace_seconds_per_unit"),
        "trace_overhead_seconds_per_unit": this.get("trace_overhead_seconds_per_unit"),
        "runs": results,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--previous", type=Path, required=True, help="tree of the previous main")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--limit", type=float, default=240.0, help="seconds per run before it is stopped")
    p.add_argument("--order", default="previous,this", help="which trees run, in this order ('' for none)")
    p.add_argument("--variant", action="append", default=[], metavar="LABEL=ARGS",
                   help="also run this tree as LABEL with ARGS (space-separated) added, after the others: "
                        "an A/B of one engine setting in the same device call")
    p.add_argument("run_args", nargs="*")
    a = p.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0,
                    str(layout(HERE,
                               Path(tempfile.mkdtemp(prefix="mkbench-reader-")))))  # measure() reads with this tree
    trees = {"previous": a.previous.resolve(), "this": HERE}
    # --order "" runs neither: an A/B of settings of this tree alone (--variant)
    results = {label: dict(run(label, trees[label], a.out, a.run_args, a.limit), gpus=gpus_used(a.run_args))
               for label in a.order.split(",") if label}
    for variant in a.variant:
        label, _, extra = variant.partition("=")
        args = a.run_args + extra.split()
        results[label] = dict(run(label, HERE, a.out, args, a.limit), gpus=gpus_used(args))
    summary = summarize(results, a.run_args, device_name())
    (a.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
