"""Markdown report of runs: the environment of each run, a per-candidate summary and the
per-shape detail with times and speedups."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from .cli.common import SPEEDUP_HEADERS, speedup_cells
from .summary import summarize_run
from .store import Store


def _num(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def markdown_report(store: Store, run_ids: list[int]) -> str:
    out: list[str] = ["# mkbench report", ""]
    for rid in run_ids:
        run = store.run(rid)
        env, m = run.env, run.machine
        out += [f"## Run {run.id}: backend `{run.backend}`, method `{run.method}`, profile `{run.hw}`", "",
                f"- device: **{m.get('device_name')}** (driver {m.get('driver')}, {m.get('multiprocessors')} SMs, "
                f"L2 {round((m.get('l2_cache_bytes') or 0) / 2**20)} MiB, compute capability {m.get('compute_capability')})",
                f"- host: {m.get('hostname')}, {m.get('cpu')}, {m.get('os')}",
                f"- status: {run.status}; started {run.started}, finished {run.finished}; seed {run.seed}",
                f"- software: python {env.get('python')}, " + ", ".join(f"{k} {v}" for k, v in sorted(env.get('packages', {}).items())),
                f"- mkbench revision: {env.get('git_revision')} (source digest {env.get('source_digest')})",
                f"- GPU state at start: {env.get('gpu_state_at_start')}; at end: {env.get('gpu_state_at_end')}", ""]
        summary = summarize_run(store, rid)
        rows = [[s["category"], s["task"], s["method"], s["verdict"], s["correct"],
                 *speedup_cells(s, lambda x: _num(x, ".2f")),
                 (s["error"] or "")[:90].replace("\n", " ").replace("|", "/")] for s in summary]
        out += ["### Summary", "",
                "Speedup = baseline median / candidate median per shape and dtype; geometric mean over all shapes and "
                "dtypes, and over the large (timing) shapes only: small shapes mostly measure launch overhead.", "",
                tabulate(rows, headers=["category", "task", "method", "verdict", "correct", *SPEEDUP_HEADERS, "first error"],
                         tablefmt="github"), ""]
        cands = [s for s in summary if not s["is_baseline"]]
        out += [f"{sum(s['verdict'] == 'correct' for s in cands)}/{len(cands)} candidates correct on every evaluated shape and dtype.", ""]
        detail = []
        for r in store.results([rid]):
            if r["verdict"] == "skipped":
                continue
            detail.append([r["task"], r["method"], r["shape"], r["dtype"], r["verdict"], _num(r["time_median_us"], ".2f"),
                           _num(r["time_iqr_us"], ".2f"), r["time_n"] or "-", "yes" if r["interpreted"] else "",
                           _num(r["speedup_eager"], ".2f"), _num(r["speedup_compile"], ".2f"),
                           _num(_gbs(r), ".0f")])
        out += ["### Detail", "", "Times in microseconds (median and IQR over `n` calls, L2 flushed before each call on GPUs).", "",
                tabulate(detail, headers=["task", "method", "shape", "dtype", "verdict", "median us", "IQR us", "n",
                                          "interpreted", "vs eager", "vs compile", "GB/s"], tablefmt="github"), ""]
    return "\n".join(out)


def _gbs(r: dict[str, Any]) -> float | None:
    if not r["time_median_us"] or r["interpreted"] or not r["bytes"]:
        return None
    return r["bytes"] / (r["time_median_us"] * 1e-6) / 1e9
