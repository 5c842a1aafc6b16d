"""`mkbench analyze`: the analyses as tables on standard output (Markdown), without plots: the
report builder's sections, one group or all."""

from __future__ import annotations

from .report_cmd import add_selection_args, load, runs_of, stores_of

#: `mkbench analyze WHAT` -> report sections (the run environments always come first)
GROUPS = {"all": ("rates", "verdicts", "recorded", "difficulty", "hardware", "backends"),
          "rates": ("rates",), "verdicts": ("verdicts", "recorded"), "difficulty": ("difficulty",),
          "hardware": ("hardware",), "backends": ("backends",)}


def add_parser(sub) -> None:
    p = sub.add_parser("analyze", help="rates, fast_p, verdicts, difficulty GLM, cross-hardware and cross-backend "
                                       "analyses; 'engine': where each run's time went")
    p.add_argument("what", nargs="?", choices=[*GROUPS, "engine"], default="all")
    add_selection_args(p)
    p.add_argument("--glm-baselines", action="store_true",
                   help="count the eager and torch.compile baselines as methods in the GLM")


def run(args) -> int:
    if args.what == "engine":
        return engine(args)
    from ..analysis.report import build_report
    results, profiles = load(args)
    doc = build_report(results, profiles, title="mkbench analysis", roles=tuple(args.roles or ("large",)),
                       sections=("environment", *GROUPS[args.what]),
                       glm_baselines=True if args.glm_baselines else None, plots_on=False)
    print(doc.markdown())
    return 0


def engine(args) -> int:
    """Per run: the engine line, then the mean seconds per unit of each step (waits first)."""
    from tabulate import tabulate

    from ..engine.clock import engine_line, run_wall, step_table, unit_clocks
    from ..store import Store
    for position, path in enumerate(stores_of(args)):
        store = Store(path)
        try:
            wanted = runs_of(args, position)
            for run in store.runs():
                if wanted and run.id not in wanted:
                    continue
                clocks = unit_clocks(store.results([run.id]))
                wall, lanes, counted = run_wall(run.env)
                print(f"## {path} run {run.id} ({run.backend}, {run.hw}, {run.status})\n")
                if wall is not None and counted != len(clocks):  # a session without a clock (older mkbench)
                    print(f"(wall time recorded for {counted} of these {len(clocks)} units: not divided)\n")
                    wall = None
                print(engine_line(clocks, wall, lanes) + "\n")
                if clocks:
                    headers, rows = step_table(clocks)
                    print(tabulate(rows, headers=headers, tablefmt="github") + "\n")
        finally:
            store.close()
    return 0
