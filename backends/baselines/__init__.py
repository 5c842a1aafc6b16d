"""PyTorch baselines: the task's reference run eagerly, and through torch.compile.

They are timed for every task in the same session as the candidate, so a speedup is always
baseline median / candidate median measured on the same card with the same harness."""

from __future__ import annotations

from mkbench.backend import Backend
from mkbench.hookspecs import hookimpl


class EagerBaseline(Backend):
    name = "eager"
    language = "pytorch"
    is_baseline = True
    candidate_contract = "The task's PyTorch reference, run eagerly at the task's dtype."

    def compile(self, task, source, hw):
        return task.reference


class CompileBaseline(Backend):
    name = "torch_compile"
    language = "pytorch"
    is_baseline = True
    candidate_contract = "The task's PyTorch reference through torch.compile (inductor, static shapes)."

    def compile(self, task, source, hw):
        import torch
        return torch.compile(task.reference, dynamic=False)


@hookimpl
def register_backends(register):
    register(EagerBaseline())
    register(CompileBaseline())
