"""`mkbench import kernelbench|kernelbench-x`: other benchmarks' problems and kernels as mkbench
tasks and candidates. The formats, and what is not supported, are described in the docstrings of
mkbench.importers.kernelbench_generate and mkbench.importers.kernelbench_x_generate.

Exit codes: 0 everything was imported; 2 bad input (nothing written); 3 some items were skipped
(each reported on one line on stderr; the rest was written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import BadInput
from ..task import CATEGORIES, SHAPE_ROLES
from .common import add_tasks_dir_option, use_tasks_dirs

#: --variant choices: mkbench.importers.kernelbench_rows.VARIANTS and "all" (spelled out: importing
#: the importers here would load torch for every command's parser)
VARIANT_CHOICES = ("default", "cuda_graph", "cudnn", "all")


def add_parser(sub) -> None:
    p = sub.add_parser("import",
                       help="turn KernelBench / KernelBench-X problems and kernels into mkbench tasks and candidates",
                       description="Turn KernelBench / KernelBench-X problems and kernels into mkbench tasks and "
                                   "candidates.")
    fmt = p.add_subparsers(dest="format", required=True, metavar="FORMAT")

    kb = fmt.add_parser(
        "kernelbench", formatter_class=argparse.RawDescriptionHelpFormatter,
        help="KernelBench problems (class Model + get_inputs/get_init_inputs) and ModelNew candidates, from files or "
             "JSON rows (CUDA-L1's release)",
        description="Write one mkbench task per KernelBench problem to TASKS_DIR/<category>/<task>.py and, with "
                    "--candidates (problem files) or --solutions-out (JSON rows), one candidate per ModelNew kernel to "
                    "SOL_DIR/<category>/<task>.py, with a manifest of where each came from.",
        epilog="examples:\n  mkbench import kernelbench KernelBench/level1 --out kb_tasks --candidates runs/my_run "
               "--solutions-out kb_solutions\n  mkbench run --tasks-dir kb_tasks --solutions kb_solutions --method "
               "my_run ...\n"
               "  mkbench import kernelbench CUDA-L1/optimized_cuda_code/h100.json --out kb_tasks --solutions-out "
               "sol_h100 "
               "--names-from KernelBench\n  mkbench run --backend cuda --tasks-dir kb_tasks --solutions sol_h100 "
               "--method cuda-l1-h100 ...\n"
               "  mkbench import kernelbench CUDA-L1/optimized_cuda_code/h100.json --out kb_tasks --solutions-out "
               "sol_h100 --variant all\n  mkbench run --backend cuda --tasks-dir kb_tasks "
               "--solutions sol_h100/cuda_graph --method cuda-l1-h100-cuda_graph ...")
    kb.add_argument("source", type=Path, metavar="SOURCE",
                    help="a KernelBench problem file, a folder of them, a folder with level<N>/ subfolders, or a "
                         ".json/.jsonl file of rows (level_id, task_id, ref_code, custom_code, score_*)")
    kb.add_argument("--out", type=Path, required=True, metavar="TASKS_DIR", help="where the task files go")
    kb.add_argument("--category", help="category of every problem (default: inferred from each name, or from the "
                                       "layers of level-3 networks and of rows without names)")
    kb.add_argument("--prefix", default="kb_", help="task name prefix (default kb_)")
    kb.add_argument("--shape-role", default="large", choices=SHAPE_ROLES,
                    help="role of the problem's single shape (default large: the CPU profile skips it)")
    kb.add_argument("--contract", default="mkbench", choices=["mkbench", "kernelbench", "cuda-l1"],
                    help="mkbench's AllClose (default), KernelBench's own atol = rtol = 1e-4 on raw values, or "
                         "CUDA-L1's own atol = rtol = 1e-2 with the models in eval mode (for its released kernels)")
    kb.add_argument("--candidates", type=Path, metavar="CAND_DIR", help="ModelNew files to import as candidates")
    kb.add_argument("--solutions-out", type=Path, metavar="SOL_DIR",
                    help="where the candidates go (with --candidates, or for JSON rows)")
    kb.add_argument("--sample", type=int, default=0,
                    help="with level_<L>_problem_<P>_sample_<S> candidate names: the sample to take (default 0)")
    kb.add_argument("--gpu-set", metavar="NAME",
                    help="JSON rows: the GPU the kernels were optimized for, recorded per candidate (default: the "
                         "rows file's stem, e.g. h100)")
    kb.add_argument("--names-from", type=Path, metavar="KERNELBENCH",
                    help="JSON rows: a KernelBench checkout (or its KernelBench/ folder) whose "
                         "level<N>/<number>_<Name>.py "
                         "files name the problems (default: tasks are named kb_l<N>_<number>)")
    kb.add_argument("--variant", default="default", choices=VARIANT_CHOICES,
                    help="JSON rows: which code of each row is its candidate: custom_code (default), "
                         "cuda_graph_code (cuda_graph) or cudnn_code (cudnn), each recorded with its own score "
                         "(score_default, score_cuda_graph, score_cudnn); all: one SOL_DIR/<variant> folder each, "
                         "each its own --method. CUDA-L1's cuda_graph_code / cudnn_code are the reference rewritten "
                         "(class Model), so these measure those baselines")
    add_tasks_dir_option(kb)

    kbx = fmt.add_parser(
        "kernelbench-x", formatter_class=argparse.RawDescriptionHelpFormatter,
        help="KernelBench-X predictions (JSONL / .py / folder), or task files with --as-tasks",
        description="Predictions: write SOL_DIR/<category>/<task>.py for each prediction whose task exists in "
                    "mkbench's registry; unknown tasks are reported and skipped (exit status 3). With --as-tasks: "
                    "turn KernelBench-X task files (reference, 146-'#' line, test_<task>() harness) into mkbench "
                    "tasks under TASKS_DIR.",
        epilog="examples:\n  mkbench import kernelbench-x predictions.jsonl --out sol\n"
               "  mkbench run --backend triton --solutions sol --method my-llm\n"
               "  mkbench import kernelbench-x KernelBenchX/data/kernelbenchx --as-tasks --out kbx_tasks\n"
               "  mkbench import kernelbench-x predictions.jsonl --prefix kbx_ --tasks-dir kbx_tasks --out kbx_sol\n"
               "  mkbench run --backend triton --tasks-dir kbx_tasks --solutions kbx_sol --method my-llm --category "
               "activation")
    kbx.add_argument("source", type=Path, metavar="PATH",
                     help="predictions: a .jsonl, a .py or a folder of them; with --as-tasks: a task file or folder")
    kbx.add_argument("--out", type=Path, required=True, help="SOL_DIR for predictions, TASKS_DIR with --as-tasks")
    kbx.add_argument("--as-tasks", action="store_true", help="PATH holds KernelBench-X task files: write tasks")
    kbx.add_argument("--category", help="with --as-tasks: category of every task (default: from the file's folder)")
    kbx.add_argument("--prefix", default=None,
                     help="task name prefix: predictions for task T go to task <prefix>T (default ''); "
                          "--as-tasks names tasks <prefix>T (default kbx_)")
    kbx.add_argument("--shape-role", default="standard", choices=SHAPE_ROLES,
                     help="with --as-tasks: role of the harness's single shape (default standard)")
    kbx.add_argument("--contract", default="mkbench", choices=["mkbench", "kernelbench-x"],
                     help="with --as-tasks: mkbench's AllClose (default), or KernelBench-X's own judgement (its "
                          "per-task precision thresholds where given, else rtol = atol = 1e-5)")
    kbx.add_argument("--kbx-metadata", type=Path, metavar="JSON",
                     help="with --contract kernelbench-x: KernelBench-X's kernelbenchx_v1.json (default: found above "
                          "the task files)")
    kbx.add_argument("--harness-imports", default="add", choices=["add", "never"],
                     help="predictions: append the harness imports a prediction uses without importing (add, the "
                          "default: KernelBench-X runs predictions concatenated with the test file), or not (never)")
    kbx.add_argument("--round", metavar="R",
                     help="GEAK corpus lines: the round whose code to take (default: each task's last)")
    add_tasks_dir_option(kbx)


def _print_report(report, summary: str) -> int:
    for line in report.written:
        print(f"wrote {line}")
    for line in report.notes:
        print(f"note: {line}")
    for line in report.skipped:
        print(f"skipped: {line}", file=sys.stderr)
    print(summary)
    if report.skipped:
        print(f"error: {len(report.skipped)} item(s) skipped (see above)", file=sys.stderr)
        return 3
    return 0


def run(args) -> int:
    if args.category is not None and args.category not in CATEGORIES:
        raise BadInput(f"--category {args.category!r}: unknown (known: {', '.join(CATEGORIES)})")
    use_tasks_dirs(args)
    from ..plugins import build_registry
    registry = build_registry()
    if args.format == "kernelbench":
        from ..importers.kernelbench_generate import import_kernelbench, is_rows_file
        rows = is_rows_file(args.source)
        report = import_kernelbench(args.source, args.out, registry=registry, category=args.category,
                                    prefix=args.prefix, shape_role=args.shape_role, contract=args.contract,
                                    candidates=args.candidates, solutions_out=args.solutions_out, sample=args.sample,
                                    gpu_set=args.gpu_set, names_from=args.names_from, variant=args.variant)
        tasks = sum(line.startswith("task ") for line in report.written)
        cands = sum(line.startswith("candidate ") for line in report.written)
        summary = f"imported {tasks} task(s) into {args.out}"
        if rows and args.solutions_out is not None and args.variant == "all":
            summary += "".join(
                f"\n  {name}: {count} candidate(s) into {folder}; use them with `mkbench run --tasks-dir {args.out} "
                f"--solutions {folder} --method {method} ...`" for name, folder, count, method in report.solutions)
            return _print_report(report, summary)
        with_solutions = args.solutions_out is not None and (rows or args.candidates is not None)
        if with_solutions:
            summary += f" and {cands} candidate(s) into {args.solutions_out}"
        method = report.solutions[0][3] if rows and report.solutions else "NAME"
        summary += f"; use them with `mkbench run --tasks-dir {args.out}" + (
            f" --solutions {args.solutions_out} --method {method} ...`" if with_solutions else " ...`")
        return _print_report(report, summary)

    from ..importers import kernelbench_x_generate as kbx
    if args.as_tasks:
        prefix = "kbx_" if args.prefix is None else args.prefix
        report = kbx.import_task_files(args.source, args.out, registry=registry, category=args.category, prefix=prefix,
                                       shape_role=args.shape_role, contract=args.contract, metadata=args.kbx_metadata)
        summary = (f"imported {len(report.written)} task(s) into {args.out}; use them with "
                   f"`mkbench run --tasks-dir {args.out} ...`; import predictions for them with "
                   f"`mkbench import kernelbench-x PRED --prefix {prefix} --tasks-dir {args.out} --out SOL_DIR`")
        return _print_report(report, summary)
    if args.category is not None:
        raise BadInput("--category applies to --as-tasks only (a prediction goes to its task's category)")
    registry.raise_problems()
    report = kbx.import_predictions(args.source, args.out, registry=registry, prefix=args.prefix or "",
                                    policy=args.harness_imports, wanted_round=args.round)
    summary = (f"imported {len(report.written)} prediction(s) into {args.out}; use them with "
               f"`mkbench run --solutions {args.out} --method NAME"
               + "".join(f" --tasks-dir {d}" for d in args.tasks_dir) + " ...`")
    return _print_report(report, summary)
