"""`mkbench export`: results as JSON Lines or CSV, one row per (task, shape, dtype, method),
each carrying the environment of the run it came from, ready for ``pandas.read_json(lines=True)``
or ``pandas.read_csv``. The formats are mkbench.exporter's."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import BadInput
from ..exporter import ROW_FILTERS, select_rows, write_csv, write_jsonl
from ..store import Store
from . import args as check
from .common import DEFAULT_STORE


def add_parser(sub) -> None:
    p = sub.add_parser("export", help="export results as jsonl or csv")
    p.add_argument("--store", type=Path, default=Path(os.environ.get("MKBENCH_STORE", DEFAULT_STORE)))
    p.add_argument("--format", choices=["jsonl", "csv"], required=True)
    p.add_argument("--run", type=int, action="append", dest="runs", help="run id (repeatable; default: every run)")
    p.add_argument("--hw", action="append", default=[], help="only runs on this hardware profile (repeatable)")
    for name in ROW_FILTERS:
        p.add_argument(f"--{name}", action="append", default=[], help=f"only rows with this {name} (repeatable)")
    p.add_argument("--no-baselines", action="store_true", help="leave out baseline rows")
    p.add_argument("-o", "--output", type=check.file_path, help="write here instead of standard output")


def run(args) -> int:
    if not args.store.exists():
        raise BadInput(f"no results store at {args.store}")
    store = Store(args.store)
    try:
        rows, runs = select_rows(store, args.runs, hw=args.hw, filters={f: getattr(args, f) for f in ROW_FILTERS},
                                 baselines=not args.no_baselines)
        store.integrity(list(runs)).warn()  # rows carry their own `integrity`; the store's state once, here
    finally:
        store.close()
    out = open(args.output, "w", newline="") if args.output else sys.stdout
    try:
        (write_jsonl if args.format == "jsonl" else write_csv)(rows, runs, out)
    finally:
        if args.output:
            out.close()
    if args.output:
        print(f"{len(rows)} rows written to {args.output}", file=sys.stderr)
    return 0
