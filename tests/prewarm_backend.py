"""A test backend that opts into the compile-ahead call (``Backend.prewarm``): while its patch is
active, ``builtins._mkbench_test_prewarming`` is set, so a candidate can tell the call apart."""

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


@hookimpl
def register_backends(register):
    register(PrewarmBackend())
