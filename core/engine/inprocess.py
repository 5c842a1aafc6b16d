"""A lane's correctness steps in one process, for a backend's own tests: run a compiled candidate
through the backend (launches counted), judge it with the same :class:`~mkbench.judge.Judge`, and
apply the same integrity rules to what can be seen without a separate worker (a backend's runtime
check, no launch of the candidate's own kernels). No isolation and no trusted judge: never used for
results, only to test backends quickly."""

from __future__ import annotations

from ..errors import IntegrityViolation
from ..inputs import generate, normalize, seed_for, sync
from ..judge import Judge, alias_problem
from ..verdicts import Verdict


def check_combo(backend, task, fn, shape, dtype: str, hw, seeds: int = 1,
                run_seed: int = 1234) -> tuple[str, str, tuple]:
    """(status, message, (max_abs_err, max_rel_err)); status is correct, incorrect, hack or framework."""
    judge = Judge(hw.device)
    worst = (0.0, 0.0)
    for k in range(seeds):
        seed = seed_for(run_seed, task.name, shape.name, dtype, k)
        inputs = generate(task, shape, dtype, seed, hw.device)
        try:
            with backend.launch_counter() as launches:
                out = normalize(backend.run(fn, inputs))
                sync(hw.device)
        except IntegrityViolation as exc:
            return Verdict.HACK, f"seed {k}: {exc}", worst
        except Exception as exc:  # the candidate raised (a backend's rule broken, a bug)
            return Verdict.ERROR, f"seed {k}: {type(exc).__name__}: {exc}", worst
        problem = alias_problem(out, inputs)
        res = judge.check(task, shape, dtype, seed, out, inputs,
                          lambda *a: normalize(backend.run(fn, a))) if not problem else None
        if problem or not res.ok:
            return (Verdict.INCORRECT, f"seed {k}: {problem or res.message}",
                    (None, None) if problem else (res.max_abs_err, res.max_rel_err))
        if launches.count == 0:
            return Verdict.FRAMEWORK, f"seed {k}: no {backend.name} kernel of the candidate ran", worst
        worst = (max(worst[0], res.max_abs_err or 0.0), max(worst[1], res.max_rel_err or 0.0))
    return Verdict.CORRECT, "", worst
