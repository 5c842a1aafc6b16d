"""Importers that turn other benchmarks' problems and generated kernels into mkbench tasks and
candidates (``mkbench import kernelbench|kernelbench-x``).

* :mod:`mkbench.importers.kernelbench`: KernelBench (ScalingIntelligence) ``Model`` problems ->
  mkbench tasks; ``ModelNew`` candidates -> mkbench candidate modules.
* :mod:`mkbench.importers.kernelbench_x`: KernelBench-X predictions (JSONL, one ``.py``, a folder)
  -> mkbench candidate files; KernelBench-X task files (reference + ``test_<task>()`` harness)
  -> mkbench tasks that compare the harness's collected outputs.

Both write plain files: generated task files go to ``<out>/<category>/<task>.py`` (helper files
next to them start with ``_`` so the task loader skips them) and are used with
``mkbench run --tasks-dir <out>``; generated candidates go to ``<solutions>/<category>/<task>.py``
and are used with ``mkbench run --solutions <solutions>``. Generated files import their runtime
helpers from these modules, so they need mkbench installed (they always run under mkbench).
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path

#: one banner line marking code an importer appended to a candidate's own source
WRAPPER_BANNER = "# " + "-" * 30 + " added by `mkbench import` " + "-" * 30


def identifier(text: str) -> str:
    """Lower-case ``text`` with every run of non-alphanumerics turned into one ``_``."""
    out = re.sub(r"[^0-9a-zA-Z]+", "_", text).strip("_").lower()
    return out


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


__all__ = ["ImportReport", "WRAPPER_BANNER", "check_identifier", "identifier", "write_file"]
