"""A test-only backend that imports any Python-hosted candidate (``kernel_function`` or a callable
named after the task) and runs it as is: enough to run KernelBench ``ModelNew`` candidates written
in plain PyTorch on a CPU, where mkbench has no backend for ``load_inline`` CUDA candidates."""

from mkbench import Backend, hookimpl
from mkbench.candidate import load_python_candidate, static_entry_problem


class PythonCandidateBackend(Backend):
    name = "pycand"
    language = "python"
    candidate_contract = "test-only: a Python module defining kernel_function, imported and called as is"

    def static_problem(self, task, source):
        return static_entry_problem(source, task.name)

    def compile(self, task, source, hw):
        return load_python_candidate(source, task.name)


@hookimpl
def register_backends(register):
    register(PythonCandidateBackend())
