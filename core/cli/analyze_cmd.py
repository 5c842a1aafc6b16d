"""`mkbench analyze`: the analyses as tables on standard output (Markdown), without plots."""

from __future__ import annotations

from .report_cmd import add_selection_args, load

SECTIONS = ("all", "rates", "difficulty", "hardware", "backends")


def add_parser(sub) -> None:
    p = sub.add_parser("analyze", help="rates, fast_p, difficulty GLM, cross-hardware and cross-backend analyses")
    p.add_argument("what", nargs="?", choices=SECTIONS, default="all")
    add_selection_args(p)
    p.add_argument("--glm-baselines", action="store_true", help="count the eager and torch.compile baselines as methods in the GLM")


def run(args) -> int:
    from ..analysis.report import build_report
    results, profiles = load(args)
    doc = build_report(results, profiles, title="mkbench analysis", roles=tuple(args.roles or ("large",)),
                       glm_baselines=True if args.glm_baselines else None, plots_on=False)
    wanted = {"rates": "Rates", "difficulty": "Category-aware", "hardware": "Cross-hardware", "backends": "Cross-backend"}
    if args.what != "all":
        keep, on = [], False
        for b in doc.blocks:
            if b.kind == "h2":
                on = b.text.startswith(wanted[args.what]) or b.text.startswith("Runs")
            if on or b.kind == "h1":
                keep.append(b)
        doc.blocks = keep
    print(doc.markdown())
    return 0
