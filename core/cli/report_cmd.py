"""`mkbench report`: the comparative report (Markdown, self-contained HTML, or JSON) over one or
more results stores, followed in Markdown by each run's own summary and detail."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..errors import BadInput
from ..report import markdown_report
from ..store import Store
from .common import DEFAULT_STORE, export_json


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="report on runs in one or more results stores")
    add_selection_args(p)
    p.add_argument("--format", choices=["md", "html", "json"], default="md")
    p.add_argument("--title", default="mkbench report")
    p.add_argument("--no-run-detail", action="store_true", help="Markdown: leave out each run's per-shape tables")
    p.add_argument("-o", "--output", type=Path, help="write here instead of standard output (needed for html and json; "
                                                        "Markdown plots are written beside it)")


def add_selection_args(p) -> None:
    p.add_argument("--store", type=Path, action="append", dest="stores",
                   help="results store (repeatable: results of several stores are merged, each run keeping its "
                        "environment; default $MKBENCH_STORE or mkbench.sqlite)")
    p.add_argument("--run", type=int, action=RunsOfStore, dest="runs",
                   help="run id in the --store named just before it (repeatable; a store given without --run "
                        "contributes every run)")
    p.add_argument("--task", action="append", dest="tasks", default=[],
                   help="only these tasks (repeatable, or comma-separated), e.g. the set every compared backend "
                        "has a kernel for; by default a task without a candidate counts as a failed attempt")
    p.add_argument("--shape-role", action="append", dest="roles", choices=["small", "awkward", "large", "standard"],
                   help="shape roles whose times make the speedups (repeatable; default: large)")


class RunsOfStore(argparse.Action):
    """--run belongs to the --store before it, so that one report can take run 1 of one store and
    every run of another; ``runs`` maps the store's position to its run ids."""

    def __call__(self, parser, namespace, value, option_string=None):
        position = max(len(getattr(namespace, "stores", None) or []) - 1, 0)
        runs = dict(getattr(namespace, self.dest, None) or {})
        runs[position] = runs.get(position, []) + [value]
        setattr(namespace, self.dest, runs)


def runs_of(args, position: int) -> list[int] | None:
    return (args.runs or {}).get(position)


def stores_of(args) -> list[Path]:
    stores = args.stores or [Path(os.environ.get("MKBENCH_STORE", DEFAULT_STORE))]
    for s in stores:
        if not s.exists():
            raise BadInput(f"no results store at {s}")
    return stores


def load(args):
    from ..analysis import load_results
    from ..plugins import build_registry
    results = load_results(stores_of(args), args.runs)
    tasks = [t.strip() for item in args.tasks for t in item.split(",") if t.strip()]
    return (results.only_tasks(tasks) if tasks else results), build_registry().hardware


def run(args) -> int:
    stores = stores_of(args)
    if args.format in ("html", "json") and not args.output:
        raise BadInput(f"--format {args.format} needs -o FILE")
    if args.format == "json":
        if len(stores) > 1:
            raise BadInput("--format json exports one store; use `mkbench export` per store")
        store = Store(stores[0])
        try:
            run_ids = runs_of(args, 0) or [r.id for r in store.runs()]
            if not run_ids:
                raise BadInput(f"{stores[0]} holds no runs")
            export_json(store, run_ids, args.output)
        finally:
            store.close()
        return 0
    from ..analysis.report import build_report
    results, profiles = load(args)
    doc = build_report(results, profiles, title=args.title, roles=tuple(args.roles or ("large",)))
    if args.format == "html":
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(doc.html())
        return 0
    plots_dir = args.output.parent / f"{args.output.stem}-plots" if args.output else None
    text = doc.markdown(plots_dir, link_prefix=f"{plots_dir.name}/" if plots_dir else "")
    if not args.no_run_detail:
        text += "\n\n# Runs in detail\n\n"
        for position, path in enumerate(stores):
            store = Store(path)
            try:
                ids = runs_of(args, position) or [r.id for r in store.runs()]
                text += markdown_report(store, ids).replace("# mkbench report\n", f"Store `{path}`\n", 1)
            finally:
                store.close()
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
    else:
        print(text)
    return 0
