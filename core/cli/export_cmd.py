"""`mkbench export`: results as JSON Lines or CSV, one row per (task, shape, dtype, method),
each carrying the environment of the run it came from, ready for ``pandas.read_json(lines=True)``
or ``pandas.read_csv``."""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import BadInput
from ..store import SCHEMA_VERSION, Store
from .common import DEFAULT_STORE

FILTERS = ("task", "category", "backend", "method", "verdict", "dtype")


def add_parser(sub) -> None:
    p = sub.add_parser("export", help="export results as jsonl or csv")
    p.add_argument("--store", type=Path, default=Path(os.environ.get("MKBENCH_STORE", DEFAULT_STORE)))
    p.add_argument("--format", choices=["jsonl", "csv"], required=True)
    p.add_argument("--run", type=int, action="append", dest="runs", help="run id (repeatable; default: every run)")
    p.add_argument("--hw", action="append", default=[], help="only runs on this hardware profile (repeatable)")
    for name in FILTERS:
        p.add_argument(f"--{name}", action="append", default=[], help=f"only rows with this {name} (repeatable)")
    p.add_argument("--no-baselines", action="store_true", help="leave out baseline rows")
    p.add_argument("-o", "--output", type=Path, help="write here instead of standard output")


def run_environment_columns(run) -> dict[str, Any]:
    env, machine = run.env, run.machine
    pk = env.get("packages", {})
    return {
        "run_hw": run.hw, "run_started": run.started, "run_status": run.status, "run_seed": run.seed,
        "device_name": machine.get("device_name"), "driver": machine.get("driver"), "hostname": machine.get("hostname"),
        "torch": pk.get("torch"), "triton": pk.get("triton"), "python": env.get("python"),
        "mkbench_revision": env.get("git_revision"), "mkbench_source_digest": env.get("source_digest"),
    }


def selected_rows(store: Store, args) -> list[dict[str, Any]]:
    runs = [store.run(r) for r in args.runs] if args.runs else store.runs()
    if args.hw:
        runs = [r for r in runs if r.hw in args.hw]
    by_id = {r.id: r for r in runs}
    rows = []
    for row in store.results(list(by_id)) if by_id else []:
        if args.no_baselines and row["is_baseline"]:
            continue
        if any(getattr(args, f) and row[f] not in getattr(args, f) for f in FILTERS):
            continue
        rows.append(dict(row, **run_environment_columns(by_id[row["run_id"]])))
    return rows


def run(args) -> int:
    if not args.store.exists():
        raise BadInput(f"no results store at {args.store}")
    store = Store(args.store)
    try:
        rows = selected_rows(store, args)
        envs = {r.id: {"environment": r.env, "machine": r.machine, "config": r.config} for r in store.runs()}
    finally:
        store.close()
    out = open(args.output, "w", newline="") if args.output else sys.stdout
    try:
        if args.format == "jsonl":
            for row in rows:
                row = dict(row, schema_version=SCHEMA_VERSION, run=envs[row["run_id"]])
                out.write(json.dumps(row, sort_keys=True, default=str) + "\n")
        else:
            if rows:
                fields = list(rows[0].keys()) + ["run_environment_json"]
                writer = csv.DictWriter(out, fieldnames=fields)
                writer.writeheader()
                for row in rows:
                    flat = dict(row, extra=json.dumps(row["extra"], sort_keys=True),
                                run_environment_json=json.dumps(envs[row["run_id"]], sort_keys=True, default=str))
                    writer.writerow(flat)
    finally:
        if args.output:
            out.close()
    if args.output:
        print(f"{len(rows)} rows written to {args.output}", file=sys.stderr)
    return 0
