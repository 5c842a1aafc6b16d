"""`mkbench list tasks|backends|hw`."""

from __future__ import annotations

from collections import Counter

from tabulate import tabulate

from ..plugins import build_registry
from ..task import CATEGORIES
from .common import add_tasks_dir_option, use_tasks_dirs


def add_parser(sub) -> None:
    p = sub.add_parser("list", help="list tasks, backends or hardware profiles")
    p.add_argument("what", choices=["tasks", "backends", "hw"])
    p.add_argument("--category", action="append", default=[], help="tasks: only this category")
    p.add_argument("--verbose", "-v", action="store_true", help="more detail (backends: candidate contracts)")
    add_tasks_dir_option(p)


def run(args) -> int:
    use_tasks_dirs(args)
    reg = build_registry()
    reg.raise_problems()
    if args.what == "tasks":
        tasks = reg.select_tasks(categories=args.category)
        rows = [[t.category, t.name, ",".join(t.dtypes), len(t.shapes), reg.origin[("task", t.name)], t.description]
                for t in tasks]
        print(tabulate(rows, headers=["category", "task", "dtypes", "shapes", "plugin", "description"]))
        counts = Counter(t.category for t in tasks)
        print("\n" + tabulate([[c, counts.get(c, 0)] for c in CATEGORIES] + [["total", len(tasks)]],
                              headers=["category", "tasks"]))
        if args.verbose:
            for t in tasks:
                print(f"\n{t.qualified_name}: {t.contract.description}")
                for s in t.shapes:
                    print(f"  {s.name} ({s.role}): {dict(s.params)}")
    elif args.what == "backends":
        rows = []
        for b in sorted(reg.backends.values(), key=lambda b: (b.is_baseline, b.name)):
            ref = b.reference_dir()
            n_ref = len(list(ref.glob(f"*/*{b.suffix}"))) if ref and ref.exists() else 0
            rows.append([b.name, b.language, "baseline" if b.is_baseline else "kernel", b.suffix if not b.is_baseline
                         else "",
                         n_ref if not b.is_baseline else "", reg.origin[("backend", b.name)]])
        print(tabulate(rows, headers=["backend", "language", "kind", "suffix", "reference kernels", "plugin"]))
        if args.verbose:
            for b in reg.backends.values():
                print(f"\n{b.name}: {b.candidate_contract}")
    else:
        rows = []
        for h in sorted(reg.hardware.values(), key=lambda h: h.name):
            rows.append([h.name, h.display_name, h.vendor, h.device, h.memory_bandwidth_gbs, h.peak_tflops.get("fp32"),
                         h.peak_tflops.get("bf16"), h.l2_cache_mb, ",".join(h.backends)])
        print(tabulate(rows,
                       headers=["hw", "device", "vendor", "kind", "GB/s", "fp32 TF/s", "bf16 TF/s", "L2 MB",
                                "backends"]))
        if args.verbose:
            for h in sorted(reg.hardware.values(), key=lambda h: h.name):
                print(f"\n{h.name} ({h.source}): {h.architecture}, {h.compute_units} compute units, peaks "
                      f"{h.peak_tflops}, "
                      f"detect {h.detect}, skips shapes {list(h.skip_shape_roles)} tasks {list(h.skip_tasks)}, "
                      f"baselines {list(h.baselines)}")
    return 0
