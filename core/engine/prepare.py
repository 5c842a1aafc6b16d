"""What is done once per candidate on a CPU, before any device is involved: read the file (capped,
regular files only), the backend's static problem check (syntax, entry point), its static findings
(warnings, never verdicts), the names of the kernels the source defines (to tell them apart from
framework kernels in the device trace), and what an importer recorded about the candidate.

It runs in a process pool sized to the CPU cores (:mod:`.local`), or as Ray tasks: parsing a
hostile file (deep nesting can exhaust the parser) costs at most a pool process, never the
orchestrator.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from ..safefile import MAX_CANDIDATE_BYTES
from .plan import Unit


def read_candidate(path) -> str:
    """The file's text; ValueError with a one-line reason for anything that is not a readable,
    regular, UTF-8 file under the size cap. Opened non-blocking and checked again after opening, so
    a FIFO swapped in after planning cannot block."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise ValueError(f"{path}: cannot open ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path}: not a regular file")
        data = os.read(fd, MAX_CANDIDATE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_CANDIDATE_BYTES:
        raise ValueError(f"{path}: over the {MAX_CANDIDATE_BYTES // 2**20} MiB limit for a candidate file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def prepare(unit: Unit) -> dict[str, Any]:
    """Plain data for the orchestrator to fold into the unit: ``invalid``, ``warnings``,
    ``own_names``, ``metadata``."""
    out: dict[str, Any] = {"invalid": None, "warnings": [], "own_names": None, "metadata": {}}
    if unit.source is None or unit.missing or unit.invalid:
        return out
    try:
        read_candidate(unit.source)
        out["invalid"] = unit.backend.static_problem(unit.task, unit.source)
        if out["invalid"]:
            return out
        out["warnings"] = [str(f) for f in unit.backend.static_findings(unit.task, unit.source)]
        names = unit.backend.own_kernel_names(unit.task, unit.source)
        out["own_names"] = sorted(names) if names is not None else None
    except ValueError as exc:
        out["invalid"] = str(exc)
    except (RecursionError, MemoryError):  # CPython's parser gives up on deep nesting with either
        out["invalid"] = f"{unit.source}: nested too deeply to parse"
    out["metadata"] = _importer_metadata(unit)
    return out


def _importer_metadata(unit: Unit) -> dict[str, Any]:
    try:
        from ..importers import candidate_metadata
    except ImportError:
        return {}
    solutions = unit.source.parent.parent
    try:
        return candidate_metadata(solutions, unit.task.category, unit.task.name) or {}
    except Exception:  # a broken manifest costs the metadata, not the unit
        return {}


def apply(unit: Unit, prepared: dict[str, Any]) -> Unit:
    unit.invalid = unit.invalid or prepared["invalid"]
    unit.warnings = prepared["warnings"]
    unit.own_names = prepared["own_names"]
    unit.metadata = prepared["metadata"]
    return unit


def pool_initializer() -> None:
    from ..procguard import detach_and_guard
    detach_and_guard()
