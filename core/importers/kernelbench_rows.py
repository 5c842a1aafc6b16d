"""Readers for KernelBench problems and candidates published as JSON rather than files.

Rows (:func:`read_rows`): one record per problem, with its reference and, optionally, a generated
candidate and the speedups its authors recorded. Accepted layouts:

* JSON Lines, one record per line: CUDA-L1's release (``optimized_cuda_code/<gpu>.json``, JSON
  Lines despite the suffix): ``level_id``, ``task_id``, ``ref_code``, ``custom_code`` (null, or the
  string ``"None"``, where the set has no kernel for the problem), ``cuda_graph_code`` and
  ``cudnn_code`` (the reference rewritten to replay a CUDA graph / under cuDNN benchmark flags:
  a ``class Model``, not a ``ModelNew``), ``score_*`` recorded speedups (``score_default``:
  time(ref_code) / time(custom_code), i.e. over PyTorch eager; ``score_torch_compile_*``: over
  the reference compiled; ``score_cuda_graph`` / ``score_cudnn``: time(cuda_graph_code /
  cudnn_code) / time(custom_code), the custom code over those rewritten references);
* one JSON document: a list of such records, or an object keyed by level whose values are lists
  of records (CUDA-L1's ``codes/<gpu>.json``: ``task_id``, ``ref_code``, ``custom_code``,
  ``score``).

Field names: level ``level_id``/``level``; problem number ``task_id``/``problem_id``; reference
``ref_code``/``ref_arch_src``; candidate ``custom_code``/``kernel_code``/``custom_kernel``;
recorded scores: every numeric (or null) field whose name starts with ``score`` or ``speedup``.

Variants (:data:`VARIANTS`, ``mkbench import kernelbench --variant``): which code of a row is its
candidate, and which recorded score goes with it: ``default`` (the candidate fields above,
``score_default``), ``cuda_graph`` (``cuda_graph_code``, ``score_cuda_graph``), ``cudnn``
(``cudnn_code``, ``score_cudnn``). :attr:`Row.candidate` is the default variant's code;
:meth:`Row.code` gives any variant's, or why the row has none.

KernelBench's own results (:func:`read_eval_results`): ``runs/<run>/eval_results.json`` written
by its ``scripts/eval_from_generations.py``: ``{"<problem_id>": [{"sample_id", "compiled",
"correctness", "metadata", "runtime", "runtime_stats"}, ...]}`` (runtime in microseconds, -1 when
not timed). It holds no code: the kernels are the ``level_<L>_problem_<P>_sample_<S>_kernel.py``
files next to it, which ``--candidates`` reads; the recorded results go to each candidate's
manifest entry.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BadInput

LEVEL_KEYS = ("level_id", "level")
NUMBER_KEYS = ("task_id", "problem_id")
REFERENCE_KEYS = ("ref_code", "ref_arch_src")
CANDIDATE_KEYS = ("custom_code", "kernel_code", "custom_kernel")
#: candidate texts that stand for "no code" (CUDA-L1's release has ``"None"`` strings besides nulls)
NO_CODE = ("", "None", "null")


@dataclass(frozen=True)
class Variant:
    name: str
    code_keys: tuple[str, ...]  # the fields holding its code, first present wins
    score_key: str  # its recorded score


#: --variant choices: a row's code fields and the score CUDA-L1 recorded for each
VARIANTS = {v.name: v for v in (Variant("default", CANDIDATE_KEYS, "score_default"),
                                Variant("cuda_graph", ("cuda_graph_code",), "score_cuda_graph"),
                                Variant("cudnn", ("cudnn_code",), "score_cudnn"))}


@dataclass
class Row:
    label: str  # "<file>:<line>" or "<file>[level 1][3]", for messages
    level: int | None
    number: int
    reference: str
    candidate: str | None
    scores: dict[str, float | None] = field(default_factory=dict)
    no_candidate: str | None = None  # why there is no candidate code, when there is none
    #: variant -> (code, why there is none) for the variants other than ``default``
    others: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)

    def code(self, variant: str = "default") -> tuple[str | None, str | None]:
        """(code, None) or (None, why the row has no code) for ``variant``."""
        if variant == "default":
            return self.candidate, self.no_candidate
        return self.others[variant]


def _first(obj: dict, keys: tuple[str, ...]) -> Any:
    return next((obj[k] for k in keys if k in obj), None)


def _row(label: str, obj: Any, level: int | None = None) -> tuple[Row | None, str | None]:
    if not isinstance(obj, dict):
        return None, f"{label}: not a JSON object"
    number = _first(obj, NUMBER_KEYS)
    reference = _first(obj, REFERENCE_KEYS)
    level = _first(obj, LEVEL_KEYS) if level is None else level
    if not isinstance(number, int) or isinstance(number, bool):
        return None, f"{label}: no integer problem number ({' / '.join(NUMBER_KEYS)})"
    if not isinstance(reference, str) or not reference.strip():
        return None, f"{label}: no reference code ({' / '.join(REFERENCE_KEYS)})"
    if level is not None and (not isinstance(level, int) or isinstance(level, bool)):
        return None, f"{label}: level {level!r} is not an integer"
    candidate = _first(obj, CANDIDATE_KEYS)
    if candidate is not None and not isinstance(candidate, str):
        return None, f"{label}: candidate code is a {type(candidate).__name__}, not a string"
    scores = {k: (float(v) if v is not None else None) for k, v in obj.items()
              if k.startswith(("score", "speedup"))
              and (v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)
                                                                        and math.isfinite(v)))}
    no_candidate = None
    if candidate is None:
        no_candidate = "the row's candidate code is null"
    elif candidate.strip() in NO_CODE:
        no_candidate, candidate = f"the row's candidate code is the string {candidate.strip()!r}", None
    others = {v.name: _variant_code(obj, v) for v in VARIANTS.values() if v.name != "default"}
    return Row(label, level, number, reference, candidate, scores, no_candidate, others), None


def _variant_code(obj: dict, variant: Variant) -> tuple[str | None, str | None]:
    """A non-default variant's (code, why none): a missing or unusable field costs that variant
    only, never the row (whose other variants may be fine)."""
    key = next((k for k in variant.code_keys if k in obj), None)
    if key is None:
        return None, f"the row has no {variant.code_keys[0]}"
    code = obj[key]
    if code is None:
        return None, f"the row's {key} is null"
    if not isinstance(code, str):
        return None, f"the row's {key} is a {type(code).__name__}, not a string"
    if code.strip() in NO_CODE:
        return None, f"the row's {key} is the string {code.strip()!r}"
    return code, None


def read_rows(path: Path) -> tuple[list[Row], list[str]]:
    """Rows found in ``path`` and one line per record that could not be read."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot read: {exc}") from None
    rows, problems = [], []
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        doc = None  # JSON Lines
    if isinstance(doc, list):
        items = [(f"{path}[{i}]", obj, None) for i, obj in enumerate(doc)]
    elif isinstance(doc, dict) and doc and all(isinstance(v, list) for v in doc.values()):
        items = []
        for key, records in doc.items():
            digits = "".join(c for c in str(key) if c.isdigit())
            level = int(digits) if digits else None
            items += [(f"{path}[{key}][{i}]", obj, level) for i, obj in enumerate(records)]
    elif isinstance(doc, dict):
        items = [(str(path), doc, None)]
    else:
        items = []
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append((f"{path}:{i}", json.loads(line), None))
            except json.JSONDecodeError as exc:
                problems.append(f"{path}:{i}: not JSON: {exc.msg}")
    for label, obj, level in items:
        row, why = _row(label, obj, level)
        if row is None:
            problems.append(why)
        else:
            rows.append(row)
    if not rows and not problems:
        raise BadInput(f"{path}: no KernelBench rows (JSON or JSON Lines records with {NUMBER_KEYS[0]} and "
                       f"{REFERENCE_KEYS[0]})")
    return rows, problems


def looks_like_eval_results(doc: Any) -> bool:
    return (isinstance(doc, dict) and bool(doc) and all(str(k).isdigit() for k in doc)
            and all(isinstance(v, list) and all(isinstance(s, dict) and "sample_id" in s for s in v)
                    for v in doc.values()))


def read_eval_results(path: Path) -> dict[tuple[int, int], dict[str, Any]]:
    """(problem number, sample id) -> {compiled, correctness, runtime_us, metadata} from a
    KernelBench ``eval_results.json``."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInput(f"{path}: cannot read KernelBench eval results: {exc}") from None
    if not looks_like_eval_results(doc):
        raise BadInput(f"{path}: not a KernelBench eval_results.json ({{\"<problem_id>\": [{{\"sample_id\": ...}}]}})")
    out = {}
    for pid, samples in doc.items():
        for s in samples:
            runtime = s.get("runtime")
            out[(int(pid), int(s["sample_id"]))] = {
                "compiled": s.get("compiled"), "correctness": s.get("correctness"),
                "runtime_us": runtime if isinstance(runtime, (int, float)) and runtime >= 0 else None,
                "metadata": s.get("metadata") or {}}
    return out


__all__ = ["Row", "VARIANTS", "Variant", "looks_like_eval_results", "read_eval_results", "read_rows"]
