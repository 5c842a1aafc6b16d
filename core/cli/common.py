"""Helpers shared by subcommands: the summary table and JSON export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tabulate import tabulate

from ..store import SCHEMA_VERSION, Store

DEFAULT_STORE = "mkbench.sqlite"


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def print_summary(summary: list[dict[str, Any]]) -> None:
    rows = []
    for s in summary:
        note = s["error"][:70].replace("\n", " ") if s["verdict"] != "correct" else ""
        speed_e = "interp." if s["interpreted"] and not s["is_baseline"] else _fmt(s["speedup_eager"])
        speed_c = "interp." if s["interpreted"] and not s["is_baseline"] else _fmt(s["speedup_compile"])
        if s["is_baseline"]:
            speed_e = speed_c = ""
        rows.append([s["category"], s["task"], s["method"], s["verdict"], s["correct"], speed_e, speed_c, note])
    print(tabulate(rows, headers=["category", "task", "method", "verdict", "correct", "vs eager", "vs compile", "note"]))
    cands = [s for s in summary if not s["is_baseline"]]
    ok = sum(s["verdict"] == "correct" for s in cands)
    print(f"\n{ok}/{len(cands)} candidates correct on every evaluated shape and dtype "
          "(speedups: geometric mean over shapes and dtypes, baseline median / candidate median)")


def export_json(store: Store, run_ids: list[int], path: Path) -> None:
    runs = []
    for rid in run_ids:
        run = store.run(rid)
        runs.append({"id": run.id, "started": run.started, "finished": run.finished, "status": run.status,
                     "hw": run.hw, "backend": run.backend, "method": run.method, "config": run.config,
                     "seed": run.seed, "environment": run.env, "machine": run.machine})
    doc = {"schema_version": SCHEMA_VERSION, "runs": runs, "results": store.results(run_ids)}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(doc, indent=1, sort_keys=True, default=str))
