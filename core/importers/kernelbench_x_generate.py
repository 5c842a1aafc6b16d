"""`mkbench import kernelbench-x`: KernelBench-X predictions -> mkbench candidates, and KernelBench-X
task files -> mkbench tasks (``--as-tasks``). Runs at import time; the generated files use only
:mod:`mkbench.importers.kernelbench_x` in the worker.

Predictions: ``mkbench import kernelbench-x PATH --out SOL_DIR [--prefix P] [--tasks-dir D]
[--harness-imports add|never] [--round R]``

PATH is, as in KernelBench-X's ``EVAL/0_call_acc.py --source``:

* a JSONL file, one object per line ``{"file": "<Category>/<task>.py", "predict": "<code>"}``;
  the code may be wrapped in Markdown fences: the first fenced block is taken (a ```` ```python ````
  block first; an unterminated fence runs to the end), and ``<|im_end|>``/``<|EOT|>`` are removed;
  lines of KernelBench-X's GEAK corpus (``data/kbx_corpus/*.jsonl``: ``task_id``, ``from_round``/
  ``to_round``, ``before_code``/``after_code``) are read too: the code of round ``--round`` (default:
  each task's last round);
* a single ``.py`` file whose base name is the task;
* a folder, searched recursively for ``*.py`` and ``*.jsonl`` files, each handled as above.

Only the code above a 146-``#`` separator line is kept. A prediction for task ``<task>`` becomes
``SOL_DIR/<category>/<P><task>.py`` when the registry (mkbench's tasks plus ``--tasks-dir``
folders) has task ``<P><task>``; ``<category>`` is that task's category. Predictions for unknown
tasks, unreadable lines and second predictions for one task are reported and skipped (exit 3).

Imports the harness provided. KernelBench-X runs a prediction concatenated with the task's test
file, so a prediction may use names only the test file imports (``torch``, ``F``) and still pass
there. mkbench runs a prediction as a module of its own, where such a name is a ``NameError``.
Policy (``--harness-imports``, recorded per candidate in the manifest as ``harness_imports``):

* ``add`` (default): the harness's import statements that bind a name the prediction reads but
  binds nowhere are appended below the prediction (under the import banner), where the
  concatenation puts them too: names used inside functions resolve, module-level uses still fail,
  as they do in KernelBench-X. Nothing the prediction binds is shadowed. For an ``--as-tasks``
  task the statements are that task's harness's; for one of mkbench's own tasks they are
  :data:`~mkbench.importers.kernelbench_x_rewrite.COMMON_HARNESS_IMPORTS`.
* ``never``: predictions are written as they are (a missing import is the prediction's error).

The manifest (``SOL_DIR/mkbench-manifest.json``) records for each candidate where it came from
and ``harness_imports``: ``{"policy": ..., "added": [lines]}``.

For an ``--as-tasks`` task the prediction is followed by a footer (below the import banner)
defining ``kernel_function(seed, run_harness)``, which returns ``run_harness(seed, impls)`` with
``impls`` the prediction's objects for the task's entries (the names the harness uses that the
reference defines; the primary one may come from the prediction's ``<task>`` or
``kernel_function``). An entry the prediction lacks is left out, so the harness fails on it as
KernelBench-X's does.

Task files: ``mkbench import kernelbench-x TASKFILE_OR_DIR --as-tasks --out TASKS_DIR
[--category C] [--prefix kbx_] [--shape-role standard] [--contract mkbench|kernelbench-x
[--kbx-metadata kernelbenchx_v1.json]]``

Each task file ``<name>.py`` (a folder is searched recursively) becomes task ``<prefix><name>``
in ``TASKS_DIR/<category>/`` (``--category``, or the folder name mapped with
:data:`~mkbench.importers.kernelbench_x_rewrite.CATEGORY_MAP`):

* ``_<task>_ref.py``: the part above the separator; ``_<task>_harness.py``: the part below, without
  the module-level statements that run it, after the reference part's imports it uses without
  importing (in KernelBench-X it runs in the same module, below them); in both, device literals
  are rewritten (``"cuda"`` ->
  the worker's device, ``x.cuda()`` -> ``x.to(device)``, ``torch.cuda.synchronize()`` -> a sync
  of that device), so the harness also runs on a CPU under the Triton interpreter;
* ``_kbx_helpers/_<module>_<digest>.py``: every helper module the harness imports from a folder it
  puts on ``sys.path`` (KernelBench-X's ``utils/data_utils.py``), copied from the user's checkout
  with its device literals rewritten. The task needs nothing outside TASKS_DIR at run time;
* ``<task>.py``: the task (see :mod:`mkbench.importers.kernelbench_x`). One shape ``harness``,
  role ``standard`` by default; dtype float32 (the harness picks its own dtypes); flops and bytes 0.
  Timings cover the whole harness, input creation included: they are not kernel timings.

Entries: the names the harness reads that the reference part defines: the task function, but
also ``adamw_step`` for ``Optimizer/AdamW.py`` or a class the harness instantiates. A file whose
harness uses nothing the reference defines is skipped.

Contract: ``--contract mkbench`` (default): ``AllClose(reference_precision=None)`` (fp32 rtol
1e-4, atol 1e-5 x RMS of the output; fp16/bf16 looser; integers and bools exactly).
``--contract kernelbench-x``: KernelBench-X's own judgement, for verdicts comparable with its:
the task's ``precision_thresholds`` from KernelBench-X's metadata (``kernelbenchx_v1.json``, found
above the task folder or given with ``--kbx-metadata``) as a
:class:`~mkbench.contracts.SimilarityThresholds`, else its default tolerance
(:func:`~mkbench.contracts.kernelbench_x_allclose`).

Not supported: JSONL lines without ``file`` (KernelBench-X can match ``instruction`` text against
its metadata); KernelBench-X's golden timings; predictions are not rewritten for the device (a
prediction that allocates on ``"cuda"`` fails on a CPU, as on any mkbench backend).
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import BadInput
from ..pyutil import top_level_names
from ..task import CATEGORIES, SHAPE_ROLES
from .common import WRAPPER_BANNER, ImportReport, Manifest, check_identifier, registered_elsewhere, write_file
from .kernelbench_x import SEPARATOR, Harness
from .kernelbench_x_rewrite import (
    CATEGORY_MAP,
    COMMON_HARNESS_IMPORTS,
    above_separator,
    entry_problem,
    find_helpers,
    find_test_function,
    harness_entries,
    harness_imports,
    imports_needed,
    map_category,
    rewrite_source,
    strip_fences,
)

HARNESS_IMPORT_POLICIES = ("add", "never")
CONTRACTS = ("mkbench", "kernelbench-x")
HELPERS_DIR = "_kbx_helpers"


# ---------------------------------------------------------------------------------------------
# Predictions -> candidates
# ---------------------------------------------------------------------------------------------


@dataclass
class Prediction:
    label: str  # where it came from, for messages
    stem: str
    kbx_category: str | None
    code: str
    origin: dict[str, Any] = field(default_factory=dict)  # provenance for the manifest


def _geak_predictions(rows: list[tuple[str, dict]], wanted_round: str | None) -> tuple[list[Prediction], list[str]]:
    """GEAK corpus lines (one per round transition of a task): the code of ``wanted_round``, or of
    each task's last round."""
    by_task: dict[str, dict[str, tuple[str, str]]] = {}
    for label, obj in rows:
        code_of = by_task.setdefault(obj["task_id"], {})
        for side, key in (("from_round", "before_code"), ("to_round", "after_code")):
            if obj.get(side) and isinstance(obj.get(key), str):
                code_of[obj[side]] = (label, obj[key])
    preds, problems = [], []
    for task_id, rounds in sorted(by_task.items()):
        names = sorted(rounds, key=lambda r: (len(r), r))
        pick = wanted_round if wanted_round is not None else names[-1]
        if pick not in rounds:
            problems.append(f"{task_id}: no code for round {pick!r} (has {', '.join(names)})")
            continue
        label, code = rounds[pick]
        kbx_file = PurePosixPath(task_id)
        preds.append(Prediction(f"{label} ({task_id}, {pick})", kbx_file.stem, kbx_file.parent.name or None,
                                above_separator(code), {"round": pick}))
    return preds, problems


def collect_predictions(path: Path, wanted_round: str | None = None) -> tuple[list[Prediction], list[str]]:
    """Predictions found at ``path`` and one line per thing that could not be read."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in (".py", ".jsonl"))
        if not files:
            raise BadInput(f"{path}: no *.py or *.jsonl files")
    elif path.is_file():
        files = [path]
    else:
        raise BadInput(f"{path}: no such file or directory")
    preds, problems = [], []
    for f in files:
        try:
            text = f.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{f}: cannot read: {exc}")
            continue
        if f.suffix == ".py":
            parent = f.parent.name if map_category(f.parent.name) else None
            preds.append(Prediction(str(f), f.stem, parent, above_separator(text), {"file": str(f)}))
            continue
        if f.suffix != ".jsonl":
            problems.append(f"{f}: not a .py or .jsonl file")
            continue
        geak = []
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            label = f"{f}:{i}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(f"{label}: not JSON: {exc.msg}")
                continue
            if (isinstance(obj, dict) and isinstance(obj.get("task_id"), str)
                    and ("after_code" in obj or "before_code" in obj)):
                geak.append((label, obj))
                continue
            if not isinstance(obj, dict) or "predict" not in obj:
                problems.append(f"{label}: no \"predict\" field")
                continue
            if not isinstance(obj.get("file"), str) or not obj["file"].strip():
                problems.append(f"{label}: no \"file\" field (matching by \"instruction\" needs KernelBench-X's "
                                "metadata and is not supported)")
                continue
            kbx_file = PurePosixPath(obj["file"].strip().replace("\\", "/"))
            code = above_separator(strip_fences(obj["predict"] or ""))
            preds.append(Prediction(f"{label} ({kbx_file})", kbx_file.stem, kbx_file.parent.name or None, code,
                                    {"file": str(f), "line": i, "kbx_file": str(kbx_file)}))
        if geak:
            more, why = _geak_predictions(geak, wanted_round)
            preds += more
            problems += why
    return preds, problems


HARNESS_FOOTER = '''
# KernelBench-X prediction for `{stem}`, for mkbench task {task}, whose inputs are a seed and a
# function running the task's test harness {test_fn}(): kernel_function hands the harness this
# file's implementation of {entries}.
_mkbench_kbx_impls = {{{impls}}}


def kernel_function(seed, run_harness):
    return run_harness(seed, _mkbench_kbx_impls)
'''


def harness_bindings(code: str, harness: Harness) -> dict[str, str]:
    """Entry name -> the prediction's top-level name that implements it: the entry itself when
    the prediction binds it; for the primary entry also the file's stem or ``kernel_function``
    (KernelBench-X's entry names)."""
    try:
        bound = top_level_names(code)
    except SyntaxError:
        return {}
    out = {e: e for e in harness.entries if e in bound}
    if harness.primary not in out:
        alias = next((n for n in (harness.stem, "kernel_function") if n in bound), None)
        if alias:
            out[harness.primary] = alias
    return out


def candidate_source(pred: Prediction, harness: Harness | None, task: str, policy: str) -> tuple[str, list[str]]:
    """(candidate file text, import lines added): the prediction verbatim, then, under the
    banner, the imports it relies on (policy ``add``) and, for a harness task, the footer."""
    if policy == "add":
        available = harness_imports(harness.test_source) if harness is not None else list(COMMON_HARNESS_IMPORTS)
        added = imports_needed(pred.code, available)
    else:
        added = []
    parts = []
    if added:
        parts.append("# Imports KernelBench-X's test harness provides (it runs the prediction concatenated with the "
                     "test file):\n" + "\n".join(added) + "\n")
    if harness is not None:
        impls = harness_bindings(pred.code, harness)
        if impls:  # else left as is: the run reports the missing entry point
            parts.append(HARNESS_FOOTER.format(
                stem=harness.stem, task=task, test_fn=harness.test_fn,
                entries=", ".join(f"`{e}`" for e in harness.entries),
                impls=", ".join(f"{e!r}: {impls[e]}" for e in harness.entries if e in impls)))
    if not parts:
        return pred.code, []
    return pred.code.rstrip("\n") + "\n\n" + WRAPPER_BANNER + "\n" + "\n".join(parts), added


def import_predictions(path: Path, out: Path, *, registry, prefix: str = "", policy: str = "add",
                       wanted_round: str | None = None) -> ImportReport:
    """Write one candidate per prediction whose task exists in ``registry``; report the rest."""
    if policy not in HARNESS_IMPORT_POLICIES:
        raise BadInput(f"--harness-imports {policy!r}: must be one of {', '.join(HARNESS_IMPORT_POLICIES)}")
    report = ImportReport()
    manifest = Manifest(Path(out))
    preds, problems = collect_predictions(Path(path), wanted_round)
    if not preds and not problems:
        raise BadInput(f"{path}: no KernelBench-X predictions in it (empty, or no solution field)")
    for line in problems:
        report.skip(line)
    seen: dict[str, str] = {}
    for pred in preds:
        name = f"{prefix}{pred.stem}"
        task = registry.tasks.get(name) if name.isidentifier() else None
        if task is None:
            report.skip(f"{pred.label}: no task {name!r} in mkbench's registry")
            continue
        if name in seen:
            report.skip(f"{pred.label}: task {name} already has a prediction ({seen[name]})")
            continue
        seen[name] = pred.label
        mapped = map_category(pred.kbx_category)
        if pred.kbx_category and mapped is None:
            report.note(f"{pred.label}: unknown KernelBench-X category {pred.kbx_category!r}; written under "
                        f"{task.category}")
        elif mapped and mapped != task.category:
            report.note(f"{pred.label}: KernelBench-X category {pred.kbx_category} is mkbench's {mapped}, "
                        f"but task {name} is in {task.category}; written under {task.category}")
        harness = getattr(task.reference, "kbx_harness", None)
        harness = harness if isinstance(harness, Harness) else None
        text, added = candidate_source(pred, harness, name, policy)
        dest = Path(out) / task.category / f"{name}.py"
        write_file(dest, text)
        manifest.record(task.category, name, importer="kernelbench-x", source=pred.label, **pred.origin,
                        harness_imports={"policy": policy, "added": added})
        entry_names = {pred.stem, "kernel_function"} | ({harness.primary} if harness else {name})
        problem = entry_problem(pred.code, entry_names)
        kind = "harness candidate" if harness else "candidate"
        report.wrote(f"{kind} {name} ({task.category}) <- {pred.label}: {dest}"
                     + (f" [{len(added)} harness import(s) added: {'; '.join(added)}]" if added else "")
                     + (f" [{problem}: it will be a compile error]" if problem else ""))
    manifest.write()
    return report


# ---------------------------------------------------------------------------------------------
# Task files -> harness tasks
# ---------------------------------------------------------------------------------------------

TASK_TEMPLATE = '''"""KernelBench-X task {stem!r}, imported by `mkbench import kernelbench-x --as-tasks`
(mkbench.importers.kernelbench_x_generate) from {origin}.

Reference: the part of that file above its 146-'#' line, {ref_name}.
Harness: the part below it without its module-level call{rewritten}, {harness_name}{helpers_note}.
Entries (what the harness calls that the reference defines): {entries_text}.
Inputs: a seed tensor and a function run_harness(seed, impl). reference(seed, run_harness) runs
{test_fn}() with the reference's entries under torch.manual_seed(seed) and returns every
collected output, flattened in sorted-key order. Candidates written by `mkbench import
kernelbench-x --prefix {prefix}` call run_harness(seed, <their own entries>). Timings cover the
whole harness (input creation included), not one kernel call.
Contract: {contract_note}.
"""

from pathlib import Path

from mkbench import Shape, Task
from mkbench import contracts as _contracts
from mkbench.importers import kernelbench_x as _kbx

_HERE = Path(__file__).parent
_HARNESS = _kbx.Harness({stem!r}, {test_fn!r}, test_path=_HERE / {harness_name!r}, origin={origin!r},
                        entries={entries!r}, primary={primary!r}, helpers={helpers})
_REFERENCE = _kbx.ReferenceFunction(_HERE / {ref_name!r}, {stem!r}, entries={entries!r})


def reference(seed, run_harness):
    return _HARNESS.run(_REFERENCE, seed)  # its own harness, not the one handed to candidates


reference.kbx_harness = _HARNESS  # lets `mkbench import kernelbench-x` wrap predictions for this task


def make_inputs(shape, dtype, gen):
    return _kbx.harness_inputs(gen, _HARNESS)  # (seed tensor, run_harness(seed, impl))


def flops(shape):
    return 0.0  # KernelBench-X harnesses carry no FLOP counts


def nbytes_moved(shape, dtype):
    return 0.0  # nor byte counts


TASK = Task(
    name={task!r},
    category={category!r},
    description={description!r},
    reference=reference,
    make_inputs=make_inputs,
    shapes=[Shape("harness", {{}}, {role!r})],
    dtypes=("float32",),
    contract=_contracts.{contract},
    harness_in_call=True,
    flops=flops,
    bytes=nbytes_moved,
)
'''


def load_kbx_metadata(path: Path) -> dict[str, dict[str, float]]:
    """File base name -> ``precision_thresholds`` from KernelBench-X's metadata
    (``data/kernelbenchx_v1.json``: a list of task records)."""
    try:
        items = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInput(f"--kbx-metadata {path}: cannot read KernelBench-X metadata: {exc}") from None
    if not isinstance(items, list):
        raise BadInput(f"--kbx-metadata {path}: not a list of task records")
    return {PurePosixPath(str(item.get("file", ""))).name: dict(item["precision_thresholds"])
            for item in items if isinstance(item, dict) and isinstance(item.get("precision_thresholds"), dict)}


def find_kbx_metadata(source: Path) -> Path | None:
    """KernelBench-X's ``kernelbenchx_v1.json`` in the task folder or a folder above it."""
    source = Path(source).resolve()
    for folder in ([source] if source.is_dir() else []) + list(source.parents):
        hit = folder / "kernelbenchx_v1.json"
        if hit.is_file():
            return hit
    return None


def contract_for(contract: str, file_name: str, thresholds: dict[str, dict[str, float]]) -> tuple[str, str]:
    """(expression in mkbench.contracts, note for the task's docstring)."""
    if contract == "mkbench":
        return "AllClose(reference_precision=None)", "mkbench's AllClose against the reference at native precision"
    t = thresholds.get(file_name)
    if t is not None:
        return (f"SimilarityThresholds(cosine_min={t.get('cosine_sim', 0.99)!r}, "
                f"l1_relative_max={t.get('l1_relative', 0.01)!r}, rmse_max={t.get('rmse', 0.01)!r})",
                f"KernelBench-X's precision thresholds for {file_name} {t}")
    return ("kernelbench_x_allclose()",
            "KernelBench-X's default tolerance (rtol = atol = 1e-5 for fp32, 5e-3 for fp16/bf16)")


def vendor_helper(module: str, path: Path, out: Path) -> str:
    """Copy a helper module into ``out/_kbx_helpers/`` with its device literals rewritten; the
    file name carries a digest of the copy, so helpers of different checkouts never collide.
    Returns the file's path relative to ``out``."""
    text, _ = rewrite_source(path.read_text(), strip_invocations=False)
    digest = hashlib.sha1(text.encode()).hexdigest()[:8]
    rel = f"{HELPERS_DIR}/_{module}_{digest}.py"
    write_file(Path(out) / rel,
               f"# {module}.py from {path}, device literals rewritten by `mkbench import kernelbench-x`\n"
               + text)
    return rel


@dataclass
class _Plan:
    file: Path
    task: str
    category: str


def _task_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.py") if p.name != "__init__.py")
    elif path.is_file():
        files = [path]
    else:
        raise BadInput(f"{path}: no such file or directory")
    if not files:
        raise BadInput(f"{path}: no *.py files")
    return files


def import_task_files(path: Path, out: Path, *, registry, category: str | None = None, prefix: str = "kbx_",
                      shape_role: str = "standard", contract: str = "mkbench",
                      metadata: Path | None = None) -> ImportReport:
    """Write one harness task per KernelBench-X task file under ``out``; report the files skipped."""
    if category is not None and category not in CATEGORIES:
        raise BadInput(f"--category {category!r}: unknown (known: {', '.join(CATEGORIES)})")
    if shape_role not in SHAPE_ROLES:
        raise BadInput(f"--shape-role {shape_role!r}: must be one of {', '.join(SHAPE_ROLES)}")
    if contract not in CONTRACTS:
        raise BadInput(f"--contract {contract!r}: must be one of {', '.join(CONTRACTS)}")
    path = Path(path)
    thresholds: dict[str, dict[str, float]] = {}
    if contract == "kernelbench-x":
        metadata = metadata or find_kbx_metadata(path)
        if metadata is None:
            raise BadInput("--contract kernelbench-x needs KernelBench-X's kernelbenchx_v1.json (its per-task "
                           f"precision thresholds); none found above {path}: pass --kbx-metadata FILE")
        thresholds = load_kbx_metadata(metadata)
    report = ImportReport()
    plans = []
    for f in _task_files(path):
        name = f"{prefix}{f.stem}"
        bad = check_identifier(name, str(f))
        if bad:
            report.skip(bad)
            continue
        cat = category or map_category(f.parent.name)
        if cat is None:
            raise BadInput(f"{f}: cannot infer a category from folder {f.parent.name!r}; pass --category "
                           f"(KernelBench-X folders: {', '.join(CATEGORY_MAP)})")
        plans.append(_Plan(f, name, cat))
    names = [p.task for p in plans]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise BadInput(f"several files would become task(s) {', '.join(dupes)}")
    taken = registered_elsewhere(registry, Path(out))
    clash = [f"{n} ({taken[n]})" for n in names if n in taken]
    if clash:
        raise BadInput(f"task names already registered elsewhere: {', '.join(clash)}; use another --prefix")

    from ..task import load_task_file
    checkout_root = path if path.is_dir() else path.parent
    for plan in plans:
        why = _write_task(plan, Path(out), prefix=prefix, shape_role=shape_role, contract=contract,
                          thresholds=thresholds, root=checkout_root, report=report)
        if why:
            report.skip(f"{plan.file}: {why}")
            continue
        task_file = Path(out) / plan.category / f"{plan.task}.py"
        try:
            load_task_file(task_file)
        except BadInput as exc:  # pragma: no cover - a generator bug, not a user error
            report.skip(f"{plan.file}: generated task does not load: {exc}")
            continue
        report.wrote(f"task {plan.task} ({plan.category}) <- {plan.file}: {task_file}")
    return report


def _write_task(plan: _Plan, out: Path, *, prefix: str, shape_role: str, contract: str,
                thresholds: dict[str, dict[str, float]], root: Path, report: ImportReport) -> str | None:
    """Write one task's files; the reason it cannot be imported, or None."""
    f, stem = plan.file, plan.file.stem
    try:
        text = f.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read: {exc}"
    if SEPARATOR not in text:
        return "no line of 146 '#' separating the reference from the test harness"
    ref_part, test_part = text.split(SEPARATOR, 1)[0], text.split(SEPARATOR)[-1]
    for part, label in ((ref_part, "reference part"), (test_part, "test harness")):
        try:
            ast.parse(part)
        except SyntaxError as exc:
            return f"{label}: syntax error at line {exc.lineno}: {exc.msg}"
    test_fn = find_test_function(test_part, stem)
    if test_fn is None:
        return f"test harness defines no test_{stem}() (nor exactly one test_* function)"
    entries, primary = harness_entries(ref_part, test_part, stem, test_fn)
    if not entries:
        return f"the test harness {test_fn}() uses nothing the reference part defines"
    if primary is None:
        return (f"the harness uses several reference definitions ({', '.join(entries)}) and none is named after the "
                "file or the test function: cannot tell which one a prediction's kernel_function stands for")
    helpers, missing = find_helpers(test_part, f, root)
    if missing:
        return (f"the test harness imports {', '.join(missing)}, which neither this Python nor the folders the harness "
                f"adds to sys.path provide (import from a KernelBench-X checkout, where utils/ sits above the tasks)")
    # The harness runs below the reference in KernelBench-X's file: it may use the reference's imports.
    borrowed = imports_needed(test_part, harness_imports(ref_part))
    if borrowed:
        test_part = "\n".join(borrowed) + "\n" + test_part
    ref_src, ref_changed = rewrite_source(ref_part, strip_invocations=False)
    test_src, test_changed = rewrite_source(test_part, strip_invocations=True)
    folder = out / plan.category
    ref_name, harness_name = f"_{plan.task}_ref.py", f"_{plan.task}_harness.py"
    write_file(folder / ref_name, ref_src)
    write_file(folder / harness_name, test_src)
    vendored = {module: vendor_helper(module, source, out) for module, source in sorted(helpers.items())}
    for module, rel in vendored.items():
        report.note(f"{plan.task}: helper module {module} vendored from {helpers[module]} as {rel}")
    kbx_cat = f.parent.name if map_category(f.parent.name) else None
    contract_expr, contract_note = contract_for(contract, f.name, thresholds)
    write_file(folder / f"{plan.task}.py", TASK_TEMPLATE.format(
        stem=stem, origin=str(f.resolve()), ref_name=ref_name, harness_name=harness_name,
        rewritten="; device literals rewritten" if (ref_changed or test_changed) else "",
        helpers_note=(f"; helper module(s) {', '.join(vendored)} vendored under {HELPERS_DIR}/" if vendored else ""),
        helpers="{" + ", ".join(f"{m!r}: _HERE.parent / {rel!r}" for m, rel in vendored.items()) + "}",
        entries=entries, primary=primary,
        entries_text=", ".join(entries) + (f" (primary {primary})" if len(entries) > 1 else ""),
        test_fn=test_fn, prefix=prefix, task=plan.task, category=plan.category, role=shape_role,
        description=f"KernelBench-X {(kbx_cat + '/') if kbx_cat else ''}{f.name} through its test harness {test_fn}()",
        contract=contract_expr, contract_note=contract_note))
    return None


__all__ = ["CONTRACTS", "HARNESS_IMPORT_POLICIES", "Prediction", "candidate_source", "collect_predictions",
           "contract_for", "import_predictions", "import_task_files", "load_kbx_metadata"]
