"""A test backend whose candidates build on any machine but can only be compiled here, with one
side compile check: what the CUDA and HIP backends do on a machine without a GPU."""

from mkbench.backend import Backend
from mkbench.candidate import load_python_candidate
from mkbench.hookspecs import hookimpl


class CompileOnlyBackend(Backend):
    name = "compile_only_test"
    language = "python"
    candidate_contract = "test only"

    def compile_only(self, hw):
        return "test backend: builds everywhere, runs nowhere"

    def compile_checks(self, task, source, hw):
        text = source.read_text()
        return {"side-target": {"ok": "SIDE_FAILS" not in text, "message": "side target rejected it"
                                if "SIDE_FAILS" in text else ""}}

    def compile(self, task, source, hw):
        return load_python_candidate(source, task.name)


@hookimpl
def register_backends(register):
    register(CompileOnlyBackend())
