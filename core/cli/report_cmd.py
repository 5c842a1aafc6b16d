"""`mkbench report`: the comparative report (Markdown, self-contained HTML, or JSON) over one or
more results stores. One builder (mkbench.analysis.report) makes every section; the per-shape
detail is long, so with -o it goes to a file of its own beside the report (`<name>-detail.md`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..errors import BadInput
from ..exporter import write_json
from ..store import Store
from .common import DEFAULT_STORE


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="report on runs in one or more results stores")
    add_selection_args(p)
    p.add_argument("--format", choices=["md", "html", "json"], default="md")
    p.add_argument("--title", default="mkbench report")
    p.add_argument("--detail", choices=["separate", "inline", "none"], default="separate",
                   help="Markdown: the per-shape table of every run in <output stem>-detail.md beside the report "
                        "(separate, the default; none when writing to standard output), in the report (inline), or "
                        "nowhere (none)")
    p.add_argument("--no-run-detail", action="store_const", const="none", dest="detail",
                   help="the same as --detail none")
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
    for check in results.integrity:  # one line per store, on standard error; the report says it too
        check.warn()
    tasks = [t.strip() for item in args.tasks for t in item.split(",") if t.strip()]
    return (results.only_tasks(tasks) if tasks else results), build_registry().hardware


def reference_dirs() -> dict[str, Path]:
    """Each registered backend's folder of reference kernels (where a reference declares its
    limitation, for the portability analysis)."""
    from ..plugins import build_registry
    out = {}
    for name, backend in build_registry().backends.items():
        try:
            folder = backend.reference_dir()
        except Exception:  # a plugin's backend: its folder is an extra, never a reason to fail a report
            continue
        if folder is not None:
            out[name] = Path(folder)
    return out


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
            write_json(store, run_ids, args.output)
            store.integrity(run_ids).warn()
        finally:
            store.close()
        return 0
    from ..analysis.report import MAIN_SECTIONS, build_report
    results, profiles = load(args)
    roles = tuple(args.roles or ("large",))
    inline = args.format == "html" or args.detail == "inline"
    doc = build_report(results, profiles, title=args.title, roles=roles,
                       sections=MAIN_SECTIONS + (("detail",) if inline else ()), reference_dirs=reference_dirs())
    if args.format == "html":
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(doc.html())
        return 0
    plots_dir = args.output.parent / f"{args.output.stem}-plots" if args.output else None
    text = doc.markdown(plots_dir, link_prefix=f"{plots_dir.name}/" if plots_dir else "")
    if args.detail == "separate" and args.output:
        detail_path = args.output.with_name(f"{args.output.stem}-detail.md")
        detail = build_report(results, profiles, title=f"{args.title}: per-shape detail", roles=roles,
                              sections=("detail",), plots_on=False)
        detail_path.parent.mkdir(parents=True, exist_ok=True)
        detail_path.write_text(detail.markdown())
        text += f"\nPer-shape detail of every run: [{detail_path.name}]({detail_path.name}).\n"
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
    else:
        print(text)
    return 0
