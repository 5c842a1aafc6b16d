"""GPU consistency (issue 28): the same `mkbench run` once per GPU of one host, and how far the times of
each row differ across the GPUs; the same candidate must time within 3% on any of them.

    python benchmarks/gpu_consistency.py --out OUT [--gpus all|0,1,..] [--sequential] [--limit S] -- RUN_ARGS...

Each GPU i runs `mkbench run RUN_ARGS --gpus i --store OUT/gpu<i>.sqlite --no-baseline-cache --no-progress`
(its log OUT/gpu<i>.log), this tree laid out as the package it installs as (throughput.layout). By
default all of them at once, one process per GPU, so every GPU is busy as in a real multi-GPU run
(each process gets an equal share of the cores as --workers, unless RUN_ARGS set it; lanes per GPU are
the same as in one `--gpus all` run); --sequential runs them one after the other on an idle host.
Each run is stopped (SIGTERM, as throughput.py does) past --limit seconds; the stores keep what finished.

Then the stores are compared (--compare-only: only that, over stores an earlier call wrote): every
(task, method, shape, dtype) row correct and timed (not interpreted) on at least two GPUs gives the
spread max/min - 1 of its time_median_us across them. Per method and overall: rows compared, median
and p95 spread, share within 3%, the 5 largest spreads; and per GPU, from its run's driver samples, its
SM clock while busy and how often a power or thermal cap slowed it (a spread with a reason). OUT/summary.json
holds them; a Markdown table is printed.

    python benchmarks/gpu_consistency.py --out OUT --from-stores A.sqlite B.sqlite ...

compares instead the rows of `--gpus all` runs by the GPU each row's unit ran on (a row's ``extra["lane"]``):
two runs of one job, an A/B of an engine setting that leaves the timed calls alone, time many rows on two GPUs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from throughput import HERE, finish, layout

WITHIN = 0.03  # issue 28: the same candidate times within 3% on any GPU of a host (exactly 3% counts)
WORST = 5


# --- the comparison: pure functions over result rows (dicts as Store.results() returns them) ---------------
def usable(row: dict) -> bool:
    """A row whose time stands for the GPU: correct, timed, not under Triton's interpreter."""
    t = row.get("time_median_us")
    return row.get("verdict") == "correct" and t is not None and t > 0 and not row.get("interpreted")


def p95(values: list[float]) -> float:
    """95th percentile, linear between the closest ranks (statistics.quantiles, inclusive)."""
    s = sorted(values)
    return s[0] if len(s) == 1 else statistics.quantiles(s, n=20, method="inclusive")[18]


def _stats(compared: list[tuple[tuple, dict, float]], worst: int) -> dict:
    spreads = [c[2] for c in compared]
    top = sorted(compared, key=lambda c: (-c[2], c[0]))[:worst]
    return {
        "rows_compared": len(spreads),
        "median_spread": round(statistics.median(spreads), 6) if spreads else None,
        "p95_spread": round(p95(spreads), 6) if spreads else None,
        "share_within_3pct": round(sum(s <= WITHIN + 1e-9 for s in spreads) / len(spreads), 4) if spreads else None,
        "worst": [{"task": k[0], "method": k[1], "shape": k[2], "dtype": k[3], "spread": round(s, 6),
                   "time_median_us": dict(t)} for k, t, s in top],
    }


def host_bound(row: dict) -> bool:
    """A row whose timer found the host, not the GPU, setting the pace on some sample (its calls could not
    be enqueued ahead of the GPU: ``extra["host_bound_samples"]``, mkbench.timing). Such a time measures
    the host's launch path under whatever else the host runs: on a host of several GPUs, the other GPUs'
    lanes."""
    return int((row.get("extra") or {}).get("host_bound_samples") or 0) > 0


def compare(rows_by_gpu: dict[str, list[dict]], worst: int = WORST) -> dict:
    """Spreads of time_median_us across GPUs, overall, per method and by what bound the row (``by_bound``:
    "device" where no GPU's row was :func:`host_bound`, else "host"), of every (task, method, shape,
    dtype) row usable on two GPUs or more. ``rows_by_gpu``: GPU label -> its result rows (a row
    repeated in one store, as by a second run into it, counts as its last)."""
    times: dict[tuple, dict[str, float]] = {}
    bound: dict[tuple, dict[str, bool]] = {}
    for gpu, rows in rows_by_gpu.items():
        for r in rows:
            key = (r["task"], r["method"], r["shape"], r["dtype"])
            if usable(r):
                times.setdefault(key, {})[gpu] = float(r["time_median_us"])
                bound.setdefault(key, {})[gpu] = host_bound(r)
            elif key in times:
                times[key].pop(gpu, None)
                bound[key].pop(gpu, None)
    compared = [(key, t, max(t.values()) / min(t.values()) - 1.0) for key, t in sorted(times.items()) if len(t) >= 2]
    methods = sorted({key[1] for key, _, _ in compared})
    by_host = {key: any(bound[key].values()) for key, _, _ in compared}
    return {
        "gpus": list(rows_by_gpu),
        **_stats(compared, worst),
        "rows_on_one_gpu_only": sum(len(t) == 1 for t in times.values()),
        "usable_rows_by_gpu": {gpu: sum(map(usable, rows)) for gpu, rows in rows_by_gpu.items()},
        "by_method": {m: _stats([c for c in compared if c[0][1] == m], worst) for m in methods},
        "by_bound": {name: _stats([c for c in compared if by_host[c[0]] == host], worst)
                     for name, host in (("device", False), ("host", True))},
    }


def rows_by_lane(stores_rows: list[list[dict]]) -> dict[str, list[dict]]:
    """The rows of ``--gpus all`` runs by the GPU that ran each (``extra["lane"]``, "cuda:2/lane1" -> "2"),
    for :func:`compare`: a unit runs on one GPU per run, so two runs of one job (an A/B of an engine setting
    that leaves the timed calls alone) time many rows on two GPUs. Rows that do not say (older mkbench) are
    left out; a row on the same GPU in two stores counts as the later store's."""
    from mkbench.engine.clock import row_device
    by_gpu: dict[str, list[dict]] = {}
    for rows in stores_rows:
        for r in rows:
            kind, _, index = row_device(r.get("extra")).partition(":")
            if kind == "cuda" and index.isdigit():
                by_gpu.setdefault(index, []).append(r)
    return dict(sorted(by_gpu.items(), key=lambda kv: int(kv[0])))


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


def markdown(result: dict, devices: dict[str, str | None] | None = None) -> str:
    head = "| scope | rows compared | median spread | p95 spread | within 3% |"
    lines = [head, "|---|---:|---:|---:|---:|"]
    scopes = ([("all", result)] + [(f"method {m}", s) for m, s in result["by_method"].items()]
              + [(f"{b}-bound rows", s) for b, s in result.get("by_bound", {}).items()])
    for name, s in scopes:
        share = s["share_within_3pct"]
        lines.append(f"| {name} | {s['rows_compared']} | {_pct(s['median_spread'])} | {_pct(s['p95_spread'])} | "
                     f"{'-' if share is None else f'{100 * share:.1f}%'} |")
    gpus = result["gpus"]
    if result["worst"]:
        lines += ["", "Largest spreads:", "",
                  "| task | method | shape | dtype | spread | " + " | ".join(
                      f"GPU {g}" + (f" ({devices[g]})" if devices and devices.get(g) else "") + " us" for g in gpus)
                  + " |", "|---|---|---|---|---:|" + "---:|" * len(gpus)]
        for w in result["worst"]:
            t = w["time_median_us"]
            lines.append(f"| {w['task']} | {w['method']} | {w['shape']} | {w['dtype']} | {_pct(w['spread'])} | "
                         + " | ".join(f"{t[g]:.2f}" if g in t else "-" for g in gpus) + " |")
    return "\n".join(lines)


# --- the runs ----------------------------------------------------------------------------------------------
def gpu_names() -> dict[str, str]:
    """GPU index -> name, from nvidia-smi (empty where it cannot be asked)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index,name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return {i.strip(): name.strip() for i, _, name in (line.partition(",") for line in out.splitlines()) if name}


def run_command(gpu: str, out: Path, run_args: list[str], workers: int | None) -> list[str]:
    cmd = [sys.executable, "-m", "mkbench", "run", *run_args, "--gpus", gpu, "--store", str(out / f"gpu{gpu}.sqlite"),
           "--no-baseline-cache", "--no-progress"]
    return cmd + (["--workers", str(workers)] if workers else [])


def run_all(gpus: list[str], out: Path, run_args: list[str], limit: float | None, concurrent: bool) -> list[dict]:
    """One `mkbench run` per GPU, all at once or one after the other, each stopped past ``limit`` s."""
    dest = layout(HERE, Path(tempfile.mkdtemp(prefix="mkbench-gpucons-")))
    env = dict(os.environ, PYTHONPATH=str(dest), PYTHONUNBUFFERED="1")
    given = any(a == "--workers" or a.startswith("--workers=") for a in run_args)
    workers = max(1, (os.cpu_count() or 1) // len(gpus)) if concurrent and not given else None
    for gpu in gpus:  # a store of an earlier call would add its rows to this one's
        for suffix in ("", "-wal", "-shm"):
            (out / f"gpu{gpu}.sqlite{suffix}").unlink(missing_ok=True)
    started: dict[str, tuple] = {}
    results = []

    def start(gpu: str) -> None:
        cmd = run_command(gpu, out, run_args, workers)
        log = open(out / f"gpu{gpu}.log", "w")
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        started[gpu] = (subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=dest), log,
                        time.monotonic())

    def left(gpu: str) -> float | None:
        return None if limit is None else max(0.0, limit - (time.monotonic() - started[gpu][2]))

    def wait(gpu: str, stopped: bool = False) -> None:
        proc, log, t = started[gpu]
        code = finish(proc, 30.0 if stopped else left(gpu))
        log.close()
        wall = time.monotonic() - t
        code = None if stopped else code
        print(f"GPU {gpu}: exit {code}, {wall:.0f} s", flush=True)
        results.append({"gpu": gpu, "exit": code, "wall_s": round(wall, 1)})

    if concurrent:
        for gpu in gpus:
            start(gpu)
        for gpu in gpus:  # to the common limit, then SIGTERM to every run still going at once
            try:
                started[gpu][0].wait(timeout=left(gpu))
            except subprocess.TimeoutExpired:
                pass
        stopped = {gpu for gpu in gpus if started[gpu][0].poll() is None}
        for gpu in stopped:
            started[gpu][0].terminate()
        for gpu in gpus:
            wait(gpu, gpu in stopped)
    else:
        for gpu in gpus:
            start(gpu)
            wait(gpu)
    return results


def clocks(out: Path, gpus: list[str]) -> dict[str, dict | None]:
    """Per GPU, what the driver's samples in its own run's last session say of it (mkbench.engine.gpu_busy):
    busy %, the median SM clock while busy, the share of busy samples slowed by a power or thermal cap.
    A GPU that times slower at a lower clock, or capped, is the hardware, not the measurement. None where
    its store recorded no sample of it (a CPU run, an older mkbench)."""
    from mkbench.store import Store
    got: dict[str, dict | None] = {}
    for gpu in gpus:
        got[gpu] = None
        path = out / f"gpu{gpu}.sqlite"
        if not path.exists():
            continue
        store = Store(path)
        try:
            runs = store.runs()
        finally:
            store.close()
        sessions = (runs[-1].env.get("engine_clock") or {}).get("sessions") or [] if runs else []
        sampled = ((sessions[-1].get("gpu_busy") or {}).get("gpus") or {}).get(gpu) if sessions else None
        if sampled:
            got[gpu] = {k: sampled.get(k) for k in ("busy_mean", "sm_mhz_busy_median", "slowdown_share")}
    return got


def clock_lines(by_gpu: dict[str, dict | None]) -> str:
    """One line per GPU for the Markdown table's foot."""
    def text(c: dict | None) -> str:
        if not c:
            return "not sampled"
        mhz, slowed = c.get("sm_mhz_busy_median"), c.get("slowdown_share")
        return (f"busy {c['busy_mean']:.0f}%, SM clock while busy {'-' if mhz is None else f'{mhz:.0f} MHz'} "
                f"(median), slowed by a power or thermal cap in {'-' if slowed is None else f'{100 * slowed:.0f}%'}"
                " of busy samples")
    return "\n".join(f"- GPU {g}: {text(c)}" for g, c in by_gpu.items())


def load(out: Path, gpus: list[str]) -> dict[str, list[dict]]:
    from mkbench.store import Store
    rows = {}
    for gpu in gpus:
        path = out / f"gpu{gpu}.sqlite"
        if not path.exists():
            rows[gpu] = []
            continue
        store = Store(path)
        try:
            rows[gpu] = store.results()
        finally:
            store.close()
    return rows


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--gpus", default="all", help="'all' (nvidia-smi's list) or GPU indices 0,1,...")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--concurrent", dest="sequential", action="store_false",
                      help="one process per GPU, all at once (default)")
    mode.add_argument("--sequential", dest="sequential", action="store_true", help="one GPU at a time")
    p.add_argument("--limit", type=float, help="seconds per run before it is stopped (default: none)")
    p.add_argument("--compare-only", action="store_true", help="no runs: compare the stores OUT already holds")
    p.add_argument("--from-stores", nargs="+", type=Path, metavar="STORE",
                   help="no runs: compare the rows of these --gpus all stores by the GPU each row's unit ran on")
    p.add_argument("run_args", nargs="*", help="`mkbench run` arguments, after --")
    p.set_defaults(sequential=False)  # store_false's own default would be True
    return p


def main() -> int:
    p = parser()
    a = p.parse_args()
    clash = [x for x in a.run_args if x.split("=")[0] in ("--gpus", "--store", "--resume")]
    if clash:
        p.error(f"{', '.join(clash)}: set by this script per GPU")
    out = a.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    names = gpu_names()
    if a.from_stores:
        return from_stores(a.from_stores, out, names)
    if a.gpus == "all":
        gpus = sorted(names, key=int)
        if not gpus and a.compare_only:  # compared where no GPU is: the stores there are
            gpus = sorted((f.stem[3:] for f in out.glob("gpu*.sqlite") if f.stem[3:].isdigit()), key=int)
        if not gpus:
            p.error("--gpus all: nvidia-smi lists no GPU")
    else:
        gpus = [g.strip() for g in a.gpus.split(",")]
        if not all(g.isdigit() for g in gpus):
            p.error(f"--gpus {a.gpus}: 'all' or GPU indices such as 0,1")
    runs = [] if a.compare_only else run_all(gpus, out, a.run_args, a.limit, not a.sequential)
    # the stores are read with this tree's mkbench
    sys.path.insert(0, str(layout(HERE, Path(tempfile.mkdtemp(prefix="mkbench-reader-")))))
    rows = load(out, gpus)
    result = compare(rows)
    devices = {g: names.get(g) for g in gpus}
    by_gpu = clocks(out, gpus)
    summary = {
        "devices": devices, "same_model": len(set(devices.values())) == 1 and None not in devices.values(),
        "mode": "sequential" if a.sequential else "concurrent", "limit_s": a.limit, "run_args": a.run_args,
        **result,
        "runs": [dict(r, rows=len(rows[r["gpu"]]), usable_rows=result["usable_rows_by_gpu"][r["gpu"]]) for r in runs],
        "clocks": by_gpu,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    table = markdown(result, devices) + "\n\nEach GPU during its run (nvidia-smi's samples):\n\n" + clock_lines(by_gpu)
    (out / "summary.md").write_text(table + "\n")
    print(table)
    return 0


def from_stores(paths: list[Path], out: Path, names: dict[str, str]) -> int:
    """``--from-stores``: the comparison of :func:`rows_by_lane` over these stores, to OUT/summary.json and
    OUT/summary.md."""
    sys.path.insert(0, str(layout(HERE, Path(tempfile.mkdtemp(prefix="mkbench-reader-")))))
    from mkbench.store import Store
    stores_rows = []
    for path in paths:
        if not path.exists():
            raise SystemExit(f"error: {path}: no such store")
        store = Store(path)
        try:
            stores_rows.append(store.results())
        finally:
            store.close()
    result = compare(rows_by_lane(stores_rows))
    devices = {g: names.get(g) for g in result["gpus"]}
    summary = {"devices": devices, "mode": "from --gpus all stores", "stores": [str(p) for p in paths], **result}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    table = markdown(result, devices)
    (out / "summary.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
