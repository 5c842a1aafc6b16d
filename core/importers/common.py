"""What every importer shares: the import report, file writing, task-name checks, seeded calls
that leave the global RNG state as they found it, and the candidate manifest.

The candidate manifest (:data:`MANIFEST_NAME` in a solutions folder) is how an imported candidate
keeps its provenance: which file or row it came from, what another benchmark recorded for it
(e.g. CUDA-L1's speedups), and what the importer did to it (imports added, missing code). `mkbench
run` puts :func:`candidate_metadata` of each candidate into its result rows' ``extra``, so a
report can set mkbench's verdicts and speedups next to the recorded ones.
"""

from __future__ import annotations

import contextlib
import json
import keyword
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import torch

#: one banner line marking code an importer appended to a candidate's own source
WRAPPER_BANNER = "# " + "-" * 30 + " added by `mkbench import` " + "-" * 30

#: the candidate manifest's file name, at the root of a solutions folder
MANIFEST_NAME = "mkbench-manifest.json"
MANIFEST_FORMAT = 1


def identifier(text: str) -> str:
    """Lower-case ``text`` with every run of non-alphanumerics turned into one ``_``."""
    return re.sub(r"[^0-9a-zA-Z]+", "_", text).strip("_").lower()


def check_identifier(name: str, what: str) -> str | None:
    """Why ``name`` cannot be a task name, or None."""
    if not name.isidentifier() or keyword.iskeyword(name):
        return f"{what}: {name!r} is not a valid Python identifier"
    return None


@dataclass
class ImportReport:
    """What an import did: one line per file written, one per item skipped (with the reason)."""

    written: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: row imports: (variant, solutions folder, candidates written, suggested --method) per folder
    solutions: list[tuple[str, Path, int, str]] = field(default_factory=list)

    def wrote(self, line: str) -> None:
        self.written.append(line)

    def skip(self, line: str) -> None:
        self.skipped.append(line)

    def note(self, line: str) -> None:
        self.notes.append(line)


def write_file(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not text.endswith("\n"):
        text += "\n"
    path.write_text(text)


def registered_elsewhere(registry, out: Path) -> dict[str, str]:
    """Task name -> source file of the registry's tasks that were not generated under ``out``
    (a re-import into the same folder replaces its own tasks; any other clash is an error)."""
    out = Path(out).resolve()
    taken = {}
    for name, task in registry.tasks.items():
        src = Path(task.source).resolve() if task.source else None
        if src is None or out not in src.parents:
            taken[name] = str(src) if src else "(in-process)"
    return taken


def cuda_devices(device: torch.device) -> list[int]:
    """The CUDA device indices whose RNG state a fork must save for ``device``."""
    if device.type != "cuda":
        return []
    return [device.index if device.index is not None else torch.cuda.current_device()]


@contextlib.contextmanager
def seeded(seed: int, device: torch.device | str) -> Iterator[None]:
    """torch (CPU and ``device``), ``random`` and numpy seeded with ``seed`` inside the block;
    every global RNG state restored afterwards, so an imported benchmark's own seeding never
    leaks into mkbench's input draws."""
    device = torch.device(device)
    py_state = random.getstate()
    try:
        import numpy as np
        np_state = np.random.get_state()
    except ImportError:  # pragma: no cover - numpy ships with torch's CPU wheels
        np, np_state = None, None
    try:
        with torch.random.fork_rng(devices=cuda_devices(device)):
            torch.manual_seed(seed)
            random.seed(seed)
            if np is not None:
                np.random.seed(seed % 2**32)
            yield
    finally:
        random.setstate(py_state)
        if np is not None:
            np.random.set_state(np_state)


# --- candidate manifest ------------------------------------------------------------------------

def _manifest_key(category: str, task: str) -> str:
    return f"{category}/{task}"


def read_manifest(solutions_dir: Path) -> dict[str, dict[str, Any]]:
    """``"<category>/<task>"`` -> metadata of every candidate recorded in the folder's manifest
    ({} when there is none)."""
    path = Path(solutions_dir) / MANIFEST_NAME
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text())
    return dict(doc.get("candidates", {}))


def write_manifest(solutions_dir: Path, entries: dict[str, dict[str, Any]]) -> Path:
    """Merge ``entries`` (``"<category>/<task>"`` -> metadata) into the folder's manifest: a later
    import of the same task replaces its entry, other entries stay."""
    path = Path(solutions_dir) / MANIFEST_NAME
    merged = read_manifest(solutions_dir)
    merged.update(entries)
    doc = {"format": MANIFEST_FORMAT, "written_by": "mkbench import",
           "candidates": dict(sorted(merged.items()))}
    write_file(path, json.dumps(doc, indent=1, sort_keys=True, default=str))
    return path


def candidate_metadata(solutions_dir: str | Path, category: str, task: str) -> dict[str, Any]:
    """What the importer recorded about candidate ``<category>/<task>`` of ``solutions_dir``
    ({} for a folder without a manifest or a candidate it does not list). `mkbench run` copies
    it into each result row's ``extra["import"]``."""
    return dict(read_manifest(Path(solutions_dir)).get(_manifest_key(category, task), {}))


class Manifest:
    """Manifest entries collected during one import, written once at the end."""

    def __init__(self, solutions_dir: Path):
        self.solutions_dir = Path(solutions_dir)
        self.entries: dict[str, dict[str, Any]] = {}

    def record(self, category: str, task: str, **metadata: Any) -> None:
        self.entries[_manifest_key(category, task)] = metadata

    def write(self) -> Path | None:
        return write_manifest(self.solutions_dir, self.entries) if self.entries else None


__all__ = ["ImportReport", "MANIFEST_NAME", "Manifest", "WRAPPER_BANNER", "candidate_metadata", "check_identifier",
           "cuda_devices", "identifier", "read_manifest", "registered_elsewhere", "seeded", "write_file",
           "write_manifest"]
