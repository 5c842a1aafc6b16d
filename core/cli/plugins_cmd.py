"""`mkbench plugins`: what is loaded, from where, which hooks it implements, what failed."""

from __future__ import annotations

import json

from tabulate import tabulate

from ..plugins import build_registry, plugin_infos


def add_parser(sub) -> None:
    p = sub.add_parser("plugins", help="list loaded plugins and their hooks")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    infos = plugin_infos()
    reg = build_registry()
    if args.json:
        print(json.dumps([dict(vars(i)) for i in infos] + [{"problem": p} for p in reg.problems], indent=2))
        return 0
    rows = []
    for i in infos:
        contributed = sorted(name for (kind, name), plugin in reg.origin.items() if plugin == i.name)
        what = ", ".join(contributed[:6]) + (f" (+{len(contributed) - 6})" if len(contributed) > 6 else "")
        rows.append([i.name, i.source, i.module, ", ".join(i.hooks) or "-", "FAILED: " + i.error if i.error else what])
    print(tabulate(rows, headers=["plugin", "source", "module", "hooks", "registers"]))
    for problem in reg.problems:
        print(f"problem: {problem}")
    return 0
