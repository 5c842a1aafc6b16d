"""`mkbench report`: a Markdown or JSON report of runs in a store."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import BadInput
from ..report import markdown_report
from ..store import Store
from .common import DEFAULT_STORE, export_json


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="report on runs in the results store")
    p.add_argument("--store", type=Path, default=Path(os.environ.get("MKBENCH_STORE", DEFAULT_STORE)))
    p.add_argument("--run", type=int, action="append", dest="runs", help="run id (repeatable; default: the latest run)")
    p.add_argument("--all", action="store_true", help="every run in the store")
    p.add_argument("--format", choices=["md", "json"], default="md")
    p.add_argument("-o", "--output", type=Path, help="write here instead of standard output")


def run(args) -> int:
    if not args.store.exists():
        raise BadInput(f"no results store at {args.store}")
    store = Store(args.store)
    try:
        if args.all:
            run_ids = [r.id for r in store.runs()]
        elif args.runs:
            run_ids = [store.run(r).id for r in args.runs]
        else:
            latest = store.latest_run()
            run_ids = [latest.id] if latest else []
        if not run_ids:
            raise BadInput(f"{args.store} holds no runs")
        if args.format == "json":
            if not args.output:
                raise BadInput("--format json needs -o FILE")
            export_json(store, run_ids, args.output)
            return 0
        text = markdown_report(store, run_ids)
        if args.output:
            args.output.parent.mkdir(parents=True, exist_ok=True)
            args.output.write_text(text)
        else:
            print(text)
        return 0
    finally:
        store.close()
