"""`mkbench analyze`: the analyses as tables on standard output (Markdown), without plots: the
report builder's sections, one group or all."""

from __future__ import annotations

from .report_cmd import add_selection_args, load

#: `mkbench analyze WHAT` -> report sections (the run environments always come first)
GROUPS = {"all": ("rates", "verdicts", "recorded", "difficulty", "hardware", "backends"),
          "rates": ("rates",), "verdicts": ("verdicts", "recorded"), "difficulty": ("difficulty",),
          "hardware": ("hardware",), "backends": ("backends",)}


def add_parser(sub) -> None:
    p = sub.add_parser("analyze", help="rates, fast_p, verdicts, difficulty GLM, cross-hardware and cross-backend analyses")
    p.add_argument("what", nargs="?", choices=list(GROUPS), default="all")
    add_selection_args(p)
    p.add_argument("--glm-baselines", action="store_true", help="count the eager and torch.compile baselines as methods in the GLM")


def run(args) -> int:
    from ..analysis.report import build_report
    results, profiles = load(args)
    doc = build_report(results, profiles, title="mkbench analysis", roles=tuple(args.roles or ("large",)),
                       sections=("environment", *GROUPS[args.what]),
                       glm_baselines=True if args.glm_baselines else None, plots_on=False)
    print(doc.markdown())
    return 0
