"""`mkbench import kernelbench`: KernelBench problems -> mkbench tasks, generated ``ModelNew``
kernels -> mkbench candidates. Runs at import time; generated files use only
:mod:`mkbench.importers.kernelbench` in the worker.

Problem files: ``mkbench import kernelbench DIR --out TASKS_DIR [--category C] [--prefix kb_]
[--shape-role large] [--contract mkbench|kernelbench|cuda-l1] [--candidates CAND_DIR --solutions-out
SOL_DIR [--sample N]]``

DIR is a KernelBench problem file (``class Model``, ``get_inputs()``, ``get_init_inputs()``), a
folder of them, or a folder whose ``level<N>/`` subfolders hold them (the KernelBench checkout's
``KernelBench/`` folder). Files starting with ``_`` are ignored. Each problem ``<stem>.py``
becomes ``TASKS_DIR/<category>/_<task>_src.py`` (a verbatim copy) and ``<task>.py`` (the task),
``<task>`` = prefix + ``l<N>_`` when the file sits in ``level<N>/`` + the stem lower-cased
(``level1/19_ReLU.py`` -> ``kb_l1_19_relu``). Category: ``--category``, else inferred
(:mod:`mkbench.importers.kernelbench_naming`: from the name for levels 1 and 2, from the layers
for level-3 networks); the reason is printed and kept in the task's description.

Candidate files (``--candidates CAND_DIR --solutions-out SOL_DIR``): each ``*.py`` under CAND_DIR
is matched to a problem by the same file name, the task name, or KernelBench's generation naming
``level_<L>_problem_<P>[_sample_<S>][_kernel].py`` (sample ``--sample``, default 0). A KernelBench
``eval_results.json`` in CAND_DIR adds each sample's recorded compiled/correctness/runtime to the
manifest (see :mod:`mkbench.importers.kernelbench_rows`).

Rows: ``mkbench import kernelbench ROWS.json[l] --out TASKS_DIR --solutions-out SOL_DIR
[--gpu-set NAME] [--names-from KERNELBENCH_CHECKOUT] ...``: problems and candidates from JSON rows
(CUDA-L1's release and similar, :mod:`mkbench.importers.kernelbench_rows`). Each row's reference
becomes a task named by :func:`~mkbench.importers.kernelbench_naming.row_task_name` (``kb_l1_19``,
or ``kb_l1_19_relu`` with ``--names-from``, which reads the problem names of a KernelBench
checkout by level and number), so the rows of several GPU sets share one task: import each set
into the same TASKS_DIR and its own SOL_DIR, and run each with its own ``--method`` (e.g.
``cuda-l1-h100``). A task already in TASKS_DIR with a different reference source is reported and
skipped (another KernelBench version). Rows without candidate code are noted and recorded in the
manifest as missing: `mkbench run` then records the task as ``missing`` for that method.

``--variant default|cuda_graph|cudnn|all`` (:data:`~mkbench.importers.kernelbench_rows.VARIANTS`):
which code of each row becomes its candidate: ``custom_code`` (default), ``cuda_graph_code`` or
``cudnn_code``; ``all`` writes one solutions folder per variant, SOL_DIR/<variant>. Each variant
is its own method (:func:`row_method`: ``cuda-l1-h100``, ``cuda-l1-h100-cuda_graph``,
``cuda-l1-h100-cudnn``). A row whose code of that variant is null, ``"None"`` or absent is
noted and recorded as missing in that folder, as for the default. CUDA-L1's cuda_graph_code and
cudnn_code are the *reference* rewritten (a CUDA graph replay; cuDNN benchmark flags) as a
``class Model``: the wrapper builds ``Model`` when the code defines no ``ModelNew``. So running
them measures those rewritten baselines against eager, and their recorded scores are not their
own speedups: ``score_cuda_graph`` = time(cuda_graph_code) / time(custom_code).

Every candidate (from files or rows) is the ``ModelNew`` source verbatim plus a footer (below the
import banner) that embeds the problem's source and defines ``kernel_function =
model_new_kernel_function(ModelNew, ...)``. The manifest (``SOL_DIR/mkbench-manifest.json``)
records per candidate: ``importer``, ``source`` (file or row), ``level``, ``problem`` (number),
``gpu_set`` (rows: ``--gpu-set``, default the rows file's stem, e.g. ``h100``), ``recorded``
(the row's scores or KernelBench's eval result), ``candidate`` (null when the row had none); rows
also ``variant``, ``recorded_score_field`` / ``recorded_score`` (the variant's score, e.g.
``score_cuda_graph``), ``recorded_vs_eager`` (the variant code's recorded speedup over the
reference: ``score_default``, or ``score_default / score_<variant>``, null unless both are
recorded) and ``model_class``.

Tasks: weights and inputs as in :mod:`mkbench.importers.kernelbench`; one shape ``default`` (its
parameters the measured input and output shapes), role ``large`` by default (``--shape-role``):
problems carry one set of sizes, and rescaling module constants is not safe in general. Dtype
float32. Contract ``--contract mkbench`` (default): ``AllClose()`` (float64 reference, fp32 rtol
1e-4, atol 1e-5 x RMS, floored at float32's smallest normal); ``--contract kernelbench``:
KernelBench's own ``torch.allclose`` with atol = rtol = 1e-4 on raw values against the reference
at the same precision (:func:`~mkbench.contracts.kernelbench_allclose`), for verdicts comparable
with KernelBench's; ``--contract cuda-l1``: CUDA-L1's own evaluation, atol = rtol = 1e-2 on raw values
(:func:`~mkbench.contracts.cuda_l1_allclose`), with the task's and the candidates' models in eval mode
as CUDA-L1's evaluation runs them, for verdicts on its released kernels comparable with the scores it
recorded. flops 0 (not carried); bytes: inputs read once and outputs written once,
measured by running the problem once on the ``meta`` device (0 when it cannot run there).

Not supported: more than one shape per problem; dtypes other than float32 (KernelBench's
``--precision fp16/bf16``); FLOP counts; ``get_inputs()`` returning nested containers of tensors
(passed through unchanged). Imported ``ModelNew`` / ``load_inline`` candidates are CUDA
candidates: run them with ``--backend cuda`` (which compiles them with nvcc, without running, on
a machine with no NVIDIA GPU).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import torch

from ..errors import BadInput
from ..pyutil import top_level_names
from ..task import CATEGORIES, SHAPE_ROLES
from .common import WRAPPER_BANNER, ImportReport, Manifest, check_identifier, registered_elsewhere, write_file
from .kernelbench import WEIGHT_SEED, load_problem_module
from .kernelbench_naming import (
    LEVEL_DIR,
    SAMPLE_NAME,
    categorize,
    kernelbench_stems,
    level_of,
    row_task_name,
    task_name_for,
)
from .kernelbench_rows import VARIANTS, Row, looks_like_eval_results, read_eval_results, read_rows

#: contracts that also put the models (the reference's and the candidates') in eval mode, as the
#: evaluation they come from does (CUDA-L1's eval/eval_cuda.py calls .eval() on both)
EVAL_MODE_CONTRACTS = {"cuda-l1"}
#: --contract choices -> the expression in mkbench.contracts that a task file uses
CONTRACTS = {"mkbench": "AllClose()", "kernelbench": "kernelbench_allclose()", "cuda-l1": "cuda_l1_allclose()"}
ROW_SUFFIXES = (".json", ".jsonl")


@dataclass
class Problem:
    task: str
    category: str
    why: str  # how the category was found
    number: int | None
    level: int | None
    label: str  # file path or row label, for messages
    source: str  # the problem's code
    stem: str | None = None  # the KernelBench file stem, when known


# --- reading problem files ------------------------------------------------------------------------

def problem_files(src: Path) -> list[Path]:
    if src.is_file():
        return [src]
    if not src.is_dir():
        raise BadInput(f"{src}: no such file or directory")
    files = list(src.glob("*.py"))
    for sub in sorted(src.iterdir()):
        if sub.is_dir() and LEVEL_DIR.fullmatch(sub.name):
            files.extend(sub.glob("*.py"))
    files = [f for f in files if not f.name.startswith("_")]
    if not files:
        raise BadInput(f"{src}: no KernelBench problem files (*.py here or in level<N>/ subfolders)")
    return sorted(files)


def static_problem(source: str) -> str | None:
    """Why ``source`` is not a KernelBench problem (without running it), or None."""
    try:
        names = top_level_names(source)
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in names]
    return f"defines no {', '.join(missing)} at top level" if missing else None


#: methods whose result is the same tensor moved or viewed: ``self.h0 = self.h0.to(x.device)`` keeps
#: the model's answers independent of earlier calls
_MOVES = {"to", "cuda", "cpu", "type", "float", "double", "half", "bfloat16", "contiguous", "detach", "clone"}


def stateful_reference(source: str) -> str | None:
    """Where ``Model.forward`` changes the model's own state from what it computes (KernelBench's
    VanillaRNN assigns ``self.hidden`` the new hidden state on every call), or None. Read from the
    problem's source: this describes the task, never a candidate. Moving or viewing an attribute
    (``self.h0 = self.h0.to(x.device)``) does not count."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    forward = next((n for n in (model.body if model else []) if isinstance(n, ast.FunctionDef) and n.name == "forward"),
                   None)
    for node in ast.walk(forward) if forward else ():
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AugAssign) else [])
        for target in targets:
            if _on_self(target) and not (isinstance(node, ast.Assign) and _is_move(node.value)):
                return f"Model.forward assigns {ast.unparse(target)} at line {node.lineno}"
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_")
                and not node.func.attr.endswith("__") and _on_self(node.func.value)):
            return f"Model.forward updates {ast.unparse(node.func.value)} in place at line {node.lineno}"
    return None


def _stateful_argument(why: str | None) -> str:
    return f"\n    stateful_reference={why!r}," if why else ""


def _on_self(node: ast.AST) -> bool:
    """``self.x``, ``self.x[i]``, ``self.x.y``: the model's own state."""
    if not isinstance(node, (ast.Attribute, ast.Subscript)):
        return False
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"


def _is_move(value: ast.AST) -> bool:
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _MOVES
            and _on_self(value.func.value))


def measure_io(module) -> dict | None:
    """Shapes and dtypes of the problem's inputs and outputs, from one run on the meta device;
    None when the problem cannot run there (data-dependent code, .item(), numpy, ...)."""
    def describe(values) -> list:
        return [[list(v.shape), bool(v.is_floating_point()), str(v.dtype).removeprefix("torch.")]
                for v in values if isinstance(v, torch.Tensor)]
    try:
        with torch.device("meta"), torch.no_grad():
            inputs = list(module.get_inputs())
            model = module.Model(*module.get_init_inputs())
            outputs = model(*inputs)
        if not isinstance(outputs, (tuple, list)):
            outputs = [outputs]
        return {"inputs": describe(inputs), "outputs": describe(outputs)}
    except Exception:
        return None


def _shape_params(io: dict | None) -> dict[str, str]:
    if not io:
        return {}

    def fmt(items):
        return ", ".join("x".join(str(d) for d in shape) or "scalar" for shape, _, _ in items)
    return {"inputs": fmt(io["inputs"]), "outputs": fmt(io["outputs"])}


# --- writing tasks --------------------------------------------------------------------------------

TASK_TEMPLATE = '''"""KernelBench problem {label!r}, imported by `mkbench import kernelbench`
(mkbench.importers.kernelbench_generate).

The problem's own source is {src_name}, next to this file. Category {category}: {why}.
Weights: torch.manual_seed({seed}) before get_init_inputs() and again before Model(*init_inputs),
as KernelBench does before both Model and ModelNew. Inputs: the problem's get_inputs() under a
seed drawn from mkbench's generator. KernelBench problems carry one set of sizes, so this task
has a single shape (role {role!r}). Contract: {contract_note}.
"""

from pathlib import Path

from mkbench import Shape, Task
from mkbench import contracts as _contracts
from mkbench.importers import kernelbench as _kb

_PROBLEM = _kb.ProblemRuntime(Path(__file__).with_name({src_name!r}), {task!r}, seed={seed}{mode})

# [shape, is floating, dtype] of every input and output tensor, measured once on the meta device
# at import time (None: the problem could not run there, so bytes() reports 0).
_IO = {io!r}


def reference(*inputs):
    return _PROBLEM.reference(*inputs)


def make_inputs(shape, dtype, gen):
    return _PROBLEM.make_inputs(shape, dtype, gen)


def flops(shape):
    return 0.0  # KernelBench carries no FLOP counts


def nbytes_moved(shape, dtype):
    return _kb.io_bytes(_IO, dtype)


TASK = Task(
    name={task!r},
    category={category!r},
    description={description!r},
    reference=reference,
    make_inputs=make_inputs,
    shapes=[Shape("default", {params!r}, {role!r})],
    dtypes=("float32",),
    contract=_contracts.{contract},
    flops=flops,
    bytes=nbytes_moved,{stateful}
)
'''

CONTRACT_NOTES = {"mkbench": "mkbench's AllClose (float64 reference, fp32 rtol 1e-4, atol 1e-5 x RMS)",
                  "kernelbench": "KernelBench's own allclose (atol = rtol = 1e-4 on raw values, same-precision "
                                 "reference)",
                  "cuda-l1": "CUDA-L1's own allclose (atol = rtol = 1e-2 on raw values, same-precision reference), "
                             "models in eval mode as its evaluation runs them"}


def write_task(p: Problem, out: Path, *, role: str, contract: str, measure: bool = True) -> tuple[Path, dict | None]:
    """Write the problem's source copy and its task file; (task file, measured I/O). Measuring
    imports the problem, which raises where it cannot import at all."""
    folder = Path(out) / p.category
    src_name = f"_{p.task}_src.py"
    write_file(folder / src_name, p.source)
    io = measure_io(load_problem_module(folder / src_name)) if measure else None
    level = f"level {p.level} " if p.level is not None else ""
    task_file = folder / f"{p.task}.py"
    write_file(task_file, TASK_TEMPLATE.format(
        label=p.label, src_name=src_name, seed=WEIGHT_SEED, role=role, task=p.task, io=io, category=p.category,
        why=p.why, description=f"KernelBench {level}{p.stem or f'problem {p.number}'} ({p.why})",
        params=_shape_params(io), contract=CONTRACTS[contract], contract_note=CONTRACT_NOTES[contract],
        stateful=_stateful_argument(stateful_reference(p.source)), mode=_mode(contract in EVAL_MODE_CONTRACTS)))
    return task_file, io


def _check_options(category: str | None, shape_role: str, contract: str) -> None:
    if category is not None and category not in CATEGORIES:
        raise BadInput(f"--category {category!r}: unknown (known: {', '.join(CATEGORIES)})")
    if shape_role not in SHAPE_ROLES:
        raise BadInput(f"--shape-role {shape_role!r}: must be one of {', '.join(SHAPE_ROLES)}")
    if contract not in CONTRACTS:
        raise BadInput(f"--contract {contract!r}: must be one of {', '.join(CONTRACTS)}")


def _check_names(problems: list[Problem], registry, out: Path) -> None:
    seen: dict[str, str] = {}
    for p in problems:
        bad = check_identifier(p.task, p.label)
        if bad:
            raise BadInput(bad)
        if p.task in seen:
            raise BadInput(f"{p.label} and {seen[p.task]} would both become task {p.task!r}")
        seen[p.task] = p.label
    taken = registered_elsewhere(registry, Path(out))
    clash = [f"{p.task} ({taken[p.task]})" for p in problems if p.task in taken]
    if clash:
        raise BadInput(f"task names already registered elsewhere: {', '.join(clash)}; use another --prefix")


def _write_tasks(problems: list[Problem], out: Path, *, role: str, contract: str,
                 report: ImportReport) -> list[Problem]:
    from ..task import load_task_file
    written = []
    for p in problems:
        try:
            task_file, io = write_task(p, out, role=role, contract=contract)
        except ImportError as exc:  # a module this machine lacks (einops): the task may run where it is installed
            task_file, io = write_task(p, out, role=role, contract=contract, measure=False)
            report.note(f"{p.label}: the problem does not import here ({type(exc).__name__}: {exc}); task {p.task} is "
                        "written, and its runs fail where that holds too")
        except Exception as exc:
            report.skip(f"{p.label}: problem failed to import: {type(exc).__name__}: {exc}")
            continue
        try:
            load_task_file(task_file)
        except BadInput as exc:  # pragma: no cover - a generator bug, not a user error
            report.skip(f"{p.label}: generated task does not load: {exc}")
            continue
        report.wrote(f"task {p.task} ({p.category}: {p.why}) <- {p.label}: {task_file}"
                     + ("" if io else " [bytes unknown: the problem does not run on the meta device]"))
        written.append(p)
    return written


def import_problems(src: Path, out: Path, *, registry, category: str | None = None, prefix: str = "kb_",
                    shape_role: str = "large", contract: str = "mkbench",
                    report: ImportReport | None = None) -> tuple[list[Problem], ImportReport]:
    """Write one task per problem file under ``out``; return the problems written (for candidates)."""
    report = report or ImportReport()
    _check_options(category, shape_role, contract)
    problems: list[Problem] = []
    for path in problem_files(Path(src)):
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            report.skip(f"{path}: cannot read: {exc}")
            continue
        why = static_problem(text)
        if why:
            report.skip(f"{path}: not a KernelBench problem: {why}")
            continue
        level = level_of(path)
        cat, how = (category, "given with --category") if category else categorize(path.stem, text, level)
        m = re.match(r"(\d+)_", path.stem)
        problems.append(Problem(task_name_for(path, prefix), cat, how, int(m.group(1)) if m else None, level,
                                str(path), text, path.stem))
    _check_names(problems, registry, out)
    return _write_tasks(problems, Path(out), role=shape_role, contract=contract, report=report), report


# --- candidates -------------------------------------------------------------------------------

CANDIDATE_FOOTER = '''
# KernelBench candidate {cand!r} for problem {problem!r}
# (mkbench task {task}). ModelNew is built as KernelBench builds it: torch.manual_seed({seed})
# before get_init_inputs() and before ModelNew(*init_inputs), init inputs from the problem's own
# source below.
import mkbench.importers.kernelbench as _mkbench_kb

_MKBENCH_KB_PROBLEM_SOURCE = {source!r}
kernel_function = _mkbench_kb.model_new_kernel_function(
    globals().get("{cls}"), _mkbench_kb.init_inputs_from_source(_MKBENCH_KB_PROBLEM_SOURCE, {problem!r}), seed={seed}{mode})
'''  # noqa: E501 (the text of every generated wrapper: changing it would change imported files)


def candidate_module_source(candidate_source: str, problem_source: str, *, candidate: str, problem: str,
                            task: str, seed: int = WEIGHT_SEED, model_class: str = "ModelNew",
                            eval_mode: bool = False) -> str:
    """A candidate module: the ModelNew source verbatim (line numbers unchanged) plus a footer
    defining ``kernel_function`` (from the class ``model_class``: ``Model`` for CUDA-L1's
    rewritten references, which define no ``ModelNew``)."""
    return candidate_source.rstrip("\n") + "\n\n" + WRAPPER_BANNER + "\n" + CANDIDATE_FOOTER.format(
        cand=candidate, problem=problem, task=task, seed=seed, source=problem_source, cls=model_class,
        mode=_mode(eval_mode))


def _mode(eval_mode: bool) -> str:
    """The generated files' extra argument for eval mode (none otherwise: files as before)."""
    return ", eval_mode=True" if eval_mode else ""


def _model_new_note(text: str, model_class: str = "ModelNew") -> str:
    try:
        names = top_level_names(text)
    except SyntaxError as exc:
        return f" [syntax error at line {exc.lineno}: it will be a compile error]"
    return "" if model_class in names else f" [defines no top-level class {model_class}: it will be a compile error]"


def _model_class(code: str, variant: str) -> str:
    """The class a variant's code is built from: ``ModelNew``, or for the rewritten references of
    the cuda_graph / cudnn variants (``class Model``) ``Model`` where no ``ModelNew`` is defined."""
    if variant == "default":
        return "ModelNew"
    try:
        names = top_level_names(code)
    except SyntaxError:
        return "ModelNew"
    return "Model" if "ModelNew" not in names and "Model" in names else "ModelNew"


def _match_candidate(path: Path, problems: list[Problem], sample: int) -> tuple[Problem | None, str | None, int | None]:
    """(problem, None, sample) or (None, why-unmatched, None), or (None, None, None) for another sample."""
    stem = path.stem
    for p in problems:
        if stem == p.stem or stem == p.task:
            return p, None, None
    m = SAMPLE_NAME.fullmatch(stem)
    if m:
        level, number, this_sample = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
        if this_sample != sample:
            return None, None, None
        found = [p for p in problems if p.number == number and (p.level is None or p.level == level)]
        if len(found) == 1:
            return found[0], None, this_sample
        if len(found) > 1:
            return None, f"problem number {number} is ambiguous ({', '.join(p.label for p in found)})", None
        return None, f"no problem numbered {number}" + ("" if all(p.level is None for p in problems)
                                                        else f" in level {level}"), None
    return None, "no problem with this file name, task name or level_<L>_problem_<P> name", None


def import_candidates(cand_dir: Path, solutions_out: Path, problems: list[Problem], *, sample: int = 0,
                      report: ImportReport | None = None, contract: str = "mkbench") -> ImportReport:
    """Write one candidate per ``ModelNew`` file matched to a problem; report the rest."""
    report = report or ImportReport()
    cand_dir = Path(cand_dir)
    if cand_dir.is_file():
        files = [cand_dir]
    elif cand_dir.is_dir():
        files = sorted(cand_dir.rglob("*.py"))
    else:
        raise BadInput(f"--candidates {cand_dir}: no such file or directory")
    if not files:
        raise BadInput(f"--candidates {cand_dir}: no *.py files")
    results_file = cand_dir / "eval_results.json" if cand_dir.is_dir() else None
    recorded = read_eval_results(results_file) if results_file and results_file.is_file() else {}
    if recorded:
        report.note(f"KernelBench results {results_file}: {len(recorded)} recorded sample(s) go to the manifest")
    manifest = Manifest(Path(solutions_out))
    taken: dict[str, Path] = {}
    other_samples = 0
    for path in files:
        problem, why, this_sample = _match_candidate(path, problems, sample)
        if problem is None:
            if why is None:
                other_samples += 1
            else:
                report.skip(f"{path}: {why}")
            continue
        if problem.task in taken:
            report.skip(f"{path}: problem {problem.label} already has candidate {taken[problem.task]}")
            continue
        taken[problem.task] = path
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            report.skip(f"{path}: cannot read: {exc}")
            continue
        dest = Path(solutions_out) / problem.category / f"{problem.task}.py"
        write_file(dest, candidate_module_source(text, problem.source, candidate=path.name,
                                                 problem=Path(problem.label).name, task=problem.task,
                                                 eval_mode=contract in EVAL_MODE_CONTRACTS))
        manifest.record(problem.category, problem.task, importer="kernelbench", source=str(path), level=problem.level,
                        problem=problem.number, candidate=path.name,
                        recorded=recorded.get((problem.number, this_sample if this_sample is not None else sample)))
        report.wrote(f"candidate {problem.task} <- {path}: {dest}{_model_new_note(text)}")
    manifest.write()
    if other_samples:
        report.note(f"ignored {other_samples} candidate file(s) of samples other than {sample} (see --sample)")
    return report


# --- rows -------------------------------------------------------------------------------------

def _row_problems(rows: list[Row], *, prefix: str, category: str | None, stems: dict[tuple[int, int], str],
                  report: ImportReport) -> list[tuple[Problem, Row]]:
    out = []
    for row in rows:
        why = static_problem(row.reference)
        if why:
            report.skip(f"{row.label}: reference is not a KernelBench problem: {why}")
            continue
        stem = stems.get((row.level, row.number)) if row.level is not None else None
        cat, how = (category, "given with --category") if category else categorize(stem, row.reference, row.level)
        out.append((Problem(row_task_name(row.level, row.number, prefix, stem), cat, how, row.number, row.level,
                            row.label, row.reference, stem), row))
    return out


def _unchanged_or_new(p: Problem, out: Path) -> str | None:
    """Why a task of another import in ``out`` under this name cannot be shared, or None."""
    existing = Path(out) / p.category / f"_{p.task}_src.py"
    if existing.is_file() and existing.read_text().rstrip("\n") != p.source.rstrip("\n"):
        return (f"task {p.task} already exists in {out} with a different reference source ({existing}): another "
                "KernelBench version? Import into another --out or --prefix")
    others = [c for c in CATEGORIES if c != p.category and (Path(out) / c / f"{p.task}.py").is_file()]
    if others:
        return f"task {p.task} already exists in {out} under category {others[0]} (this import infers {p.category})"
    return None


def row_method(gpu_set: str, variant: str = "default") -> str:
    """The ``--method`` suggested for the candidates of one GPU set and variant: ``cuda-l1-h100``
    for the default variant (the name used before variants existed), ``cuda-l1-h100-cuda_graph``
    for the others."""
    return f"cuda-l1-{gpu_set}" + ("" if variant == "default" else f"-{variant}")


def variant_folders(solutions_out: Path, variant: str) -> dict[str, Path]:
    """Variant -> its solutions folder: SOL_DIR itself for one variant, SOL_DIR/<variant> for each
    with ``all``."""
    if variant == "all":
        return {v: Path(solutions_out) / v for v in VARIANTS}
    if variant not in VARIANTS:
        raise BadInput(f"--variant {variant!r}: unknown (known: {', '.join(VARIANTS)}, all)")
    return {variant: Path(solutions_out)}


def _recorded_vs_eager(scores: dict[str, float | None], variant: str) -> float | None:
    """The variant code's own recorded speedup over the reference (PyTorch eager), the number to
    put beside mkbench's speedup of that method: ``score_default`` for the default variant; for the
    others ``score_default / score_<variant>`` (CUDA-L1 records time(variant code) /
    time(custom_code), so the quotient is time(ref_code) / time(variant code)), when both are
    recorded."""
    default = scores.get(VARIANTS["default"].score_key)
    if variant == "default":
        return default
    own = scores.get(VARIANTS[variant].score_key)
    return default / own if default is not None and own else None


def import_rows(path: Path, out: Path, solutions_out: Path | None, *, registry, prefix: str = "kb_",
                category: str | None = None, shape_role: str = "large", contract: str = "mkbench",
                gpu_set: str | None = None, names_from: Path | None = None,
                variant: str = "default") -> ImportReport:
    """Tasks from every row's reference, candidates from every row's code of ``variant`` (see
    module docstring); ``variant="all"``: one solutions folder per variant under ``solutions_out``.
    ``report.solutions`` lists (variant, folder, candidates written, method) per folder."""
    _check_options(category, shape_role, contract)
    folders = variant_folders(solutions_out, variant) if solutions_out is not None else {}
    report = ImportReport()
    rows, problems_read = read_rows(Path(path))
    for line in problems_read:
        report.skip(line)
    stems = kernelbench_stems(names_from) if names_from else {}
    if names_from and not stems:
        raise BadInput(f"--names-from {names_from}: no KernelBench problems (level<N>/<number>_<Name>.py) found there")
    gpu_set = gpu_set or Path(path).stem
    pairs = _row_problems(rows, prefix=prefix, category=category, stems=stems, report=report)
    kept = []
    for p, row in pairs:
        clash = _unchanged_or_new(p, Path(out))
        if clash:
            report.skip(f"{row.label}: {clash}")
        else:
            kept.append((p, row))
    _check_names([p for p, _ in kept], registry, out)
    written = {p.task for p in _write_tasks([p for p, _ in kept], Path(out), role=shape_role, contract=contract,
                                            report=report)}
    for name, folder in folders.items():
        count = _write_variant([(p, row) for p, row in kept if p.task in written], folder, name, gpu_set, report,
                               contract)
        report.solutions.append((name, folder, count, row_method(gpu_set, name)))
    return report


def _write_variant(pairs: list[tuple[Problem, Row]], solutions_out: Path, variant: str, gpu_set: str,
                   report: ImportReport, contract: str = "mkbench") -> int:
    """Candidates of one variant into ``solutions_out``; how many were written."""
    manifest = Manifest(Path(solutions_out))
    score_key = VARIANTS[variant].score_key
    without, count = [], 0
    for p, row in pairs:
        code, why = row.code(variant)
        meta = dict(importer="kernelbench-rows", source=row.label, level=row.level, problem=row.number, gpu_set=gpu_set,
                    recorded=row.scores, variant=variant, recorded_score_field=score_key,
                    recorded_score=row.scores.get(score_key), recorded_vs_eager=_recorded_vs_eager(row.scores, variant))
        if code is None:
            manifest.record(p.category, p.task, candidate=None, why=why, **meta)
            without.append(p.task)
            continue
        cls = _model_class(code, variant)
        dest = Path(solutions_out) / p.category / f"{p.task}.py"
        write_file(dest, candidate_module_source(code, p.source, candidate=row.label, problem=p.label, task=p.task,
                                                 model_class=cls, eval_mode=contract in EVAL_MODE_CONTRACTS))
        manifest.record(p.category, p.task, candidate=row.label, model_class=cls, **meta)
        count += 1
        shown = gpu_set if variant == "default" else f"{gpu_set}, {variant}"
        report.wrote(f"candidate {p.task} ({shown}) <- {row.label}: {dest}{_model_new_note(code, cls)}")
    manifest.write()
    if without:
        what = "candidate code" if variant == "default" else f"{VARIANTS[variant].code_keys[0]} (variant {variant})"
        report.note(f"{len(without)} row(s) of {gpu_set} have no {what}; "
                    "`mkbench run` will record them as missing: " + ", ".join(without))
    return count


def is_rows_file(path: Path) -> bool:
    """Whether ``path`` holds JSON rows (and not a KernelBench results file, which holds no code)."""
    path = Path(path)
    if not (path.is_file() and path.suffix in ROW_SUFFIXES):
        return False
    if path.suffix == ".json":
        import json
        try:
            if looks_like_eval_results(json.loads(path.read_text())):
                raise BadInput(f"{path} is a KernelBench eval_results.json: it holds no code; pass the run folder that "
                               "holds it (with its level_<L>_problem_<P>_sample_<S>_kernel.py files) as --candidates")
        except (json.JSONDecodeError, UnicodeDecodeError):
            pass  # JSON Lines under a .json name (CUDA-L1's release)
    return True


def import_kernelbench(src: Path, out: Path, *, registry, category: str | None = None, prefix: str = "kb_",
                       shape_role: str = "large", contract: str = "mkbench", candidates: Path | None = None,
                       solutions_out: Path | None = None, sample: int = 0, gpu_set: str | None = None,
                       names_from: Path | None = None, variant: str = "default") -> ImportReport:
    """Problems (and candidates) from problem files, or from JSON rows (see module docstring)."""
    if is_rows_file(Path(src)):
        if candidates is not None:
            raise BadInput("--candidates applies to problem files; JSON rows carry their candidates (use "
                           "--solutions-out)")
        return import_rows(src, out, solutions_out, registry=registry, prefix=prefix, category=category,
                           shape_role=shape_role, contract=contract, gpu_set=gpu_set, names_from=names_from,
                           variant=variant)
    if gpu_set is not None or names_from is not None or variant != "default":
        raise BadInput("--gpu-set, --names-from and --variant apply to JSON rows")
    if (candidates is None) != (solutions_out is None):
        raise BadInput("--candidates and --solutions-out go together")
    problems, report = import_problems(src, out, registry=registry, category=category, prefix=prefix,
                                       shape_role=shape_role, contract=contract)
    if candidates is not None:
        import_candidates(candidates, solutions_out, problems, sample=sample, report=report, contract=contract)
    return report


__all__ = ["CONTRACTS", "Problem", "candidate_module_source", "import_candidates", "import_kernelbench",
           "import_problems",
           "import_rows", "is_rows_file", "measure_io", "row_method", "static_problem", "variant_folders"]
