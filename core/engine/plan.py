"""Planning a run: which units (task x backend x method) to evaluate, on which (shape, dtype)
combinations, and which are missing or unusable before anything runs.

Candidate files come from users and from generated corpora: the planner looks at them with
``stat`` only (nothing here opens a file that could block), and reading happens later, capped, in the
prepare pool (:mod:`.prepare`).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..backend import Backend
from ..errors import BadInput
from ..hardware import HardwareProfile
from ..registry import Registry
from ..safefile import file_problem
from ..task import Task


@dataclass
class Unit:
    task: Task
    backend: Backend
    hw: HardwareProfile
    method: str
    source: Path | None
    combos: list[tuple[str, str]]
    skipped: list[tuple[str, str, str]]  # (shape, dtype, reason)
    missing: str | None = None      # why there is no candidate to evaluate
    invalid: str | None = None      # why the candidate file cannot be used (recorded as compile_error)
    compile_only: str | None = None  # why this unit is only compiled here (Backend.compile_only)
    # filled in by the prepare step
    warnings: list[str] = field(default_factory=list)  # static findings, "line N: check: message"
    own_names: list[str] | None = None                 # kernel names built from the source (trace)
    metadata: dict[str, Any] = field(default_factory=dict)  # what an importer recorded about the candidate
    device_name: str | None = None  # where the executor sent it
    compiled_ahead: dict[str, float] | None = None  # the compile-ahead stage's steps (None: not run there)
    compile_queued: float | None = None  # seconds it waited for a compile-ahead worker (None: not queued there)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.task.name, self.backend.name, self.method)

    @property
    def needs_worker(self) -> bool:
        return not (self.missing or self.invalid or not self.combos)


class Planner:
    def __init__(self, registry: Registry, options):
        self.reg, self.opt = registry, options
        self.left_out = 0  # tasks without a candidate outside the corpus's suite (see plan)

    def plan(self, hw: HardwareProfile) -> list[Unit]:
        backend = self.reg.backend(self.opt.backend)
        if backend.is_baseline:
            raise BadInput(f"{backend.name} is a baseline; pick a kernel backend (see `mkbench list backends`)")
        backend.availability(hw)  # the backend, not the profile, decides: plugins add backends profiles never heard of
        compile_only = backend.compile_only(hw)
        tasks = self.reg.select_tasks(self.opt.tasks, self.opt.categories)
        seed = getattr(self.opt, "shuffle_seed", None)
        if seed is not None:
            # A run cut short (a device call's deadline, Ctrl-C) then holds a sample of every category, not
            # the first ones: CUDA-L1 sets stopped at their share of a call held activations and convolutions
            # only (reports/2026-11-28-cuda-l1, calls 14-15). A task's units stay together.
            tasks = list(tasks)
            random.Random(seed).shuffle(tasks)
        if self.opt.solutions is not None:
            self._check_solutions_dir(backend)
        baseline_names = self.opt.baselines if self.opt.baselines is not None else list(hw.baselines)
        baselines = [self.reg.backend(n) for n in baseline_names]
        for b in baselines:
            if not b.is_baseline:
                raise BadInput(f"{b.name} is not a baseline")
        units = []
        in_suite = self._suite()
        for task in tasks:
            combos, skipped = self._combos(task, backend, hw, compile_only)
            candidate = self._candidate_unit(task, backend, hw, combos, skipped)
            if candidate.missing and not in_suite(task):
                self.left_out += 1
                continue
            candidate.compile_only = compile_only
            if not candidate.missing and not compile_only:  # baselines only matter next to a timed candidate
                units += [self._baseline_unit(task, b, hw, combos, skipped) for b in baselines]
            units.append(candidate)
        return units

    def _suite(self) -> Callable[[Task], bool]:
        """Whether a task the candidates do not cover is a missing candidate of this run. A corpus judged
        against imported tasks (``--tasks-dir``: KernelBench, KernelBench-X, CUDA-L1) is missing what it
        lacks of those tasks, not mkbench's own 201: counted as missing attempts, they made a CUDA-L1
        run's rates read 342 tasks attempted for 101 candidates. A task named with ``--task`` is always
        in; so is every task where no folder was given."""
        dirs = [Path(d).resolve() for d in (getattr(self.opt, "task_dirs", None) or [])]
        named = {n.rsplit("/", 1)[-1] for item in (self.opt.tasks or []) for n in item.split(",") if n}

        def in_suite(task: Task) -> bool:
            if self.opt.solutions is None or not dirs or task.name in named:
                return True
            source = Path(task.source).resolve() if task.source else None
            return source is not None and any(source.is_relative_to(d) for d in dirs)
        return in_suite

    def _baseline_unit(self, task: Task, baseline: Backend, hw: HardwareProfile, combos, skipped) -> Unit:
        """A baseline is there to be timed: with --time-role it runs only on the shapes that are
        timed (building torch.compile for shapes nobody times is most of a corpus run's compile time)."""
        roles = getattr(self.opt, "time_roles", None)
        if not roles:
            return Unit(task, baseline, hw, baseline.name, None, combos, skipped)
        keep = [(s, d) for s, d in combos if task.shape(s).role in roles]
        dropped = [(s, d, f"baseline timed only on --time-role {','.join(roles)} shapes") for s, d in combos
                   if (s, d) not in keep]
        return Unit(task, baseline, hw, baseline.name, None, keep, skipped + dropped)

    def _combos(self, task: Task, backend: Backend, hw: HardwareProfile, compile_only):
        combos, skipped = [], []
        for shape in task.shapes:
            for dtype in task.dtypes:
                why_not = backend.unsupported(task, dtype)
                if why_not:
                    skipped.append((shape.name, dtype, f"backend {backend.name}: {why_not}"))
                elif self.opt.dtypes and dtype not in self.opt.dtypes:
                    skipped.append((shape.name, dtype, f"not selected (--dtype {','.join(self.opt.dtypes)})"))
                elif self.opt.shape_roles and shape.role not in self.opt.shape_roles:
                    skipped.append((shape.name, dtype, f"not selected (--shape-role {','.join(self.opt.shape_roles)})"))
                elif task.name in hw.skip_tasks:
                    skipped.append((shape.name, dtype, f"hardware profile {hw.name} skips task {task.name}"))
                # skipped for run time; building costs none
                elif shape.role in hw.skip_shape_roles and not compile_only:
                    skipped.append((shape.name, dtype, f"hardware profile {hw.name} skips {shape.role} shapes"))
                else:
                    combos.append((shape.name, dtype))
        return combos, skipped

    def _candidate_unit(self, task: Task, backend: Backend, hw: HardwareProfile, combos, skipped) -> Unit:
        rel = f"{task.category}/{task.name}{backend.suffix}"
        if self.opt.solutions is None:
            ref_dir = backend.reference_dir()
            source = ref_dir / task.category / f"{task.name}{backend.suffix}" if ref_dir else None
            missing = (None if source and os.path.lexists(source)
                       else f"backend {backend.name} has no reference kernel for {task.qualified_name}")
        else:
            # absolute (a relative --solutions would move with a confined worker's chdir into its scratch
            # directory), with symbolic links kept: the candidate is judged as the path it was given
            source = Path(os.path.abspath(self.opt.solutions / task.category / f"{task.name}{backend.suffix}"))
            missing = None if os.path.lexists(source) else f"no candidate file {rel} in {self.opt.solutions}"
        invalid = None if missing else file_problem(source)
        return Unit(task, backend, hw, self.opt.method_name, source, combos, skipped, missing, invalid)

    def _check_solutions_dir(self, backend: Backend) -> None:
        root = self.opt.solutions
        if not root.is_dir():
            raise BadInput(f"--solutions {root}: not a directory")
        for path in sorted(root.rglob(f"*{backend.suffix}")):
            rel = path.relative_to(root)
            if len(rel.parts) != 2:
                raise BadInput(f"--solutions: {rel} is not laid out as <category>/<task>{backend.suffix}")
            category, name = rel.parts[0], path.stem
            task = self.reg.tasks.get(name)
            if task is None or task.category != category:
                raise BadInput(f"--solutions: {rel} names task {category}/{name}, which does not exist")
