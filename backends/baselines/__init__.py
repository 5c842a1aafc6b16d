"""PyTorch baselines: the task's reference (or its ``Task.baseline``, where the reference is ground
truth but not what PyTorch code for the task does) run eagerly, and through torch.compile.

They are timed for every task in the same session as the candidate, so a speedup is always
baseline median / candidate median measured on the same card with the same harness."""

from __future__ import annotations

from mkbench.backend import Backend
from mkbench.hookspecs import hookimpl
from mkbench.task import baseline_reference


class EagerBaseline(Backend):
    name = "eager"
    language = "pytorch"
    is_baseline = True
    reuse_worker = True
    candidate_contract = ("The task's PyTorch reference, run eagerly at the task's dtype (or, where the task sets "
                          "baseline_compute_dtype, in that dtype with the result cast back; where it sets baseline, "
                          "that function instead of the reference; rows say so in extra['baseline_variant']).")

    def compile(self, task, source, hw):
        return baseline_reference(task)


class CompileBaseline(Backend):
    name = "torch_compile"
    language = "pytorch"
    is_baseline = True
    candidate_contract = ("The task's PyTorch reference through torch.compile (inductor, static shapes); as eager "
                          "for tasks that set baseline_compute_dtype or baseline.")

    def compile(self, task, source, hw):
        import torch
        return torch.compile(baseline_reference(task), dynamic=False)


@hookimpl
def register_backends(register):
    register(EagerBaseline())
    register(CompileBaseline())
