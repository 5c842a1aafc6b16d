"""Importers that turn other benchmarks' problems and generated kernels into mkbench tasks and
candidates (``mkbench import kernelbench|kernelbench-x``).

Each importer is three modules, so that what every generated task imports in the worker stays
small and free of file generation:

* runtime (imported by generated task and candidate files, in the worker):
  :mod:`~mkbench.importers.kernelbench` (``Model`` problems, ``ModelNew`` candidates) and
  :mod:`~mkbench.importers.kernelbench_x` (test harnesses);
* naming / rewriting (import time): :mod:`~mkbench.importers.kernelbench_naming` (task names,
  categories, level-3 network inference) and :mod:`~mkbench.importers.kernelbench_x_rewrite`
  (device rewrite, harness entries, helper modules, imports a prediction relies on);
* generation (import time): :mod:`~mkbench.importers.kernelbench_generate` (problem files, JSON
  rows such as CUDA-L1's release, KernelBench's ``eval_results.json``) and
  :mod:`~mkbench.importers.kernelbench_x_generate` (predictions, task files);

with what they share in :mod:`~mkbench.importers.common`.

Importers write plain files: tasks go to ``<out>/<category>/<task>.py`` (helper files start with
``_`` so the task loader skips them) for ``mkbench run --tasks-dir <out>``; candidates go to
``<solutions>/<category>/<task>.py`` for ``mkbench run --solutions <solutions>``, with a manifest
(``mkbench-manifest.json``) recording each candidate's provenance: :func:`candidate_metadata`
reads it back.
"""

from __future__ import annotations

from .common import (
    MANIFEST_NAME,
    WRAPPER_BANNER,
    ImportReport,
    candidate_metadata,
    check_identifier,
    identifier,
    write_file,
)

__all__ = ["ImportReport", "MANIFEST_NAME", "WRAPPER_BANNER", "candidate_metadata", "check_identifier", "identifier",
           "write_file"]
