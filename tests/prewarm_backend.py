"""Test backends that opt into the compile-ahead stage: ``prewarm_test`` with a compile-only patch
(``Backend.prewarm``: while it is active, ``builtins._mkbench_test_prewarming`` is set, so a candidate
can tell the call apart), ``build_ahead_test`` without one, whose candidates build on import
(``Backend.builds_on_import``, as load_inline's do)."""

import builtins
from contextlib import contextmanager

from mkbench.backend import Backend
from mkbench.candidate import load_python_candidate
from mkbench.hookspecs import hookimpl


@contextmanager
def _flagged():
    builtins._mkbench_test_prewarming = True
    try:
        yield
    finally:
        builtins._mkbench_test_prewarming = False


class PrewarmBackend(Backend):
    name = "prewarm_test"
    language = "python"
    candidate_contract = "test only"

    def compile(self, task, source, hw):
        return load_python_candidate(source, task.name)

    def prewarm(self, hw):
        return _flagged()


class BuildAheadBackend(Backend):
    name = "build_ahead_test"
    language = "python"
    candidate_contract = "test only"
    builds_on_import = True

    def compile(self, task, source, hw):
        return load_python_candidate(source, task.name)


@hookimpl
def register_backends(register):
    register(PrewarmBackend())
    register(BuildAheadBackend())
