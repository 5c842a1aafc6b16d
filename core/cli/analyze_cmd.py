"""`mkbench analyze`: the analyses as tables on standard output (Markdown), without plots: the
report builder's sections, one group or all; 'portability': the task x backend matrix against
eager per profile (headline, per-backend table, slow cells), with --json writing its summary;
'cuda-l1': imported CUDA-L1 kernels across hardware (mkbench.analysis.cuda_l1), --json writing its
summary."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import BadInput
from .report_cmd import add_selection_args, load, reference_dirs, runs_of, stores_of

#: `mkbench analyze WHAT` -> report sections (the run environments always come first)
GROUPS = {"all": ("rates", "verdicts", "recorded", "difficulty", "hardware", "backends"),
          "rates": ("rates",), "verdicts": ("verdicts", "recorded"), "difficulty": ("difficulty",),
          "hardware": ("hardware",), "backends": ("backends",)}


def add_parser(sub) -> None:
    p = sub.add_parser("analyze", help="rates, fast_p, verdicts, difficulty GLM, cross-hardware and cross-backend "
                                       "analyses; 'engine': where each run's time went; 'portability': every "
                                       "backend's kernels against eager, task by task; 'cuda-l1': imported CUDA-L1 "
                                       "kernels across GPU sets and devices, measured against recorded")
    p.add_argument("what", nargs="?", choices=[*GROUPS, "engine", "portability", "cuda-l1"], default="all")
    add_selection_args(p)
    p.add_argument("--glm-baselines", action="store_true",
                   help="count the eager and torch.compile baselines as methods in the GLM")
    p.add_argument("--json", type=Path, dest="json_out",
                   help="portability: also write the per-backend summary (tasks, correct, median speedup over "
                        "eager, per backend; the device) here; cuda-l1: the per set / variant / device summary "
                        "(devices, sets, by_set: candidates, verdicts, median_speedup_eager, no_custom_kernel, "
                        "median_recorded_score, ...)")
    p.add_argument("--matrix", action="store_true", help="portability: print the task x backend matrix too")


def run(args) -> int:
    if args.what == "engine":
        return engine(args)
    if args.what == "portability":
        return portability(args)
    if args.what == "cuda-l1":
        return cuda_l1(args)
    if args.json_out:
        raise BadInput("--json goes with `mkbench analyze portability` or `mkbench analyze cuda-l1`")
    from ..analysis.report import build_report
    results, profiles = load(args)
    doc = build_report(results, profiles, title="mkbench analysis", roles=tuple(args.roles or ("large",)),
                       sections=("environment", *GROUPS[args.what]),
                       glm_baselines=True if args.glm_baselines else None, plots_on=False)
    print(doc.markdown())
    return 0


def portability(args) -> int:
    """Per profile: the headline, the per-backend table and the slow cells (the matrix with
    --matrix); --json: the summary, one profile's at the top level, several under ``profiles``."""
    from ..analysis.document import Document
    from ..analysis.portability import portability as matrices
    from ..analysis.report import portability_blocks
    results, profiles = load(args)
    found = matrices(results, profiles, tuple(args.roles or ("large",)), reference_dirs())
    if not found:
        raise BadInput("no candidate results to compare in the given stores")
    for m in found:
        doc = Document(f"Portability on {m.hw}: {m.device}")
        portability_blocks(doc, m)
        if not args.matrix:  # the task x backend table is long: only with --matrix
            doc.blocks = [b for b in doc.blocks if not (b.kind == "table" and "portable" in b.headers)
                          and not b.text.startswith("Task x backend")]
        print(doc.markdown())
    if args.json_out:
        summaries = [m.summary() for m in found]
        data = summaries[0] if len(summaries) == 1 else {"profiles": summaries}
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(data, indent=2) + "\n")
    return 0


def cuda_l1(args) -> int:
    """The CUDA-L1 study (headline, per set / variant / device, across devices and sets, per
    kernel); --json: its summary."""
    from ..analysis.cuda_l1 import study
    from ..analysis.document import Document
    from ..analysis.rates import attempt_table
    from ..analysis.report import cuda_l1_blocks
    results, profiles = load(args)
    roles = tuple(args.roles or ("large",))
    st = study(results, attempt_table(results, profiles, roles), roles)
    if st is None:
        raise BadInput("no imported CUDA-L1 candidates in the given stores (rows whose extra.import has a gpu_set "
                       "and a variant or score_default: `mkbench import kernelbench <CUDA-L1>/optimized_cuda_code/"
                       "<gpu>.json`, then `mkbench run --solutions ...`)")
    doc = Document("CUDA-L1 kernels across hardware")
    cuda_l1_blocks(doc, st)
    print(doc.markdown())
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(st.summary(), indent=2) + "\n")
    return 0


def engine(args) -> int:
    """Per run: the engine line, then the mean seconds per unit of each step (waits first)."""
    from tabulate import tabulate

    from ..engine.clock import (
        device_table,
        engine_line,
        longest_shared_calls,
        run_gpu,
        run_host,
        run_wall,
        session_table,
        step_table,
        unit_clocks,
    )
    from ..engine.memory_report import extremes, memory_table, unit_memory
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
                print(engine_line(clocks, wall, lanes, run_host(run.env), run_gpu(run.env)) + "\n")
                headers, rows = session_table(run.env)
                if rows:
                    print(tabulate(rows, headers=headers, tablefmt="github") + "\n")
                if clocks:
                    headers, rows = step_table(clocks)
                    print(tabulate(rows, headers=headers, tablefmt="github") + "\n")
                    headers, rows = device_table(clocks)
                    if rows:  # a run over several GPUs: where each GPU's units spent their time
                        print(tabulate(rows, headers=headers, tablefmt="github") + "\n")
                    held = longest_shared_calls(clocks)
                    if held:
                        print("Longest calls on the shared device (a timing phase drains for the one in flight):\n")
                        print("\n".join(f"- {line}" for line in held) + "\n")
                memory = unit_memory(store.results([run.id]))
                if memory:
                    print("Device memory: each unit's planned share against its allocators' peaks\n")
                    headers, rows = memory_table(memory)
                    print(tabulate(rows, headers=headers, tablefmt="github") + "\n")
                    print("\n".join(f"- {line}" for line in extremes(memory)) + "\n")
        finally:
            store.close()
    return 0
