"""A third-party-style plugin used by tests: one backend that runs the task's own reference
as its "kernel", so the pipeline's plumbing can be exercised without any toolchain."""

from mkbench import Backend, hookimpl


class ThrowawayBackend(Backend):
    name = "throwaway"
    language = "pytorch"
    candidate_contract = "test-only: evaluates the task's reference as if it were a kernel"

    def compile(self, task, source, hw):
        return task.reference

    def reference_dir(self):
        from pathlib import Path
        return Path(__file__).parent / "throwaway_refs"


@hookimpl
def register_backends(register):
    register(ThrowawayBackend())
