"""The verdict vocabulary: what a result row's ``verdict`` can be, what each means, and which is
worse. Every module that writes, reads or ranks verdicts uses this enum; the README's "What a
verdict means" section is tested against :data:`MEANING`.

A row is one (task, shape, dtype) of one candidate (or baseline). A candidate's summary verdict over
its rows is the worst of them (:func:`worst`), so precedence matters: an unusable candidate
(missing, does not build) ranks above a cheating one, which ranks above one that failed at run time,
which ranks above a wrong answer.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Iterable


class Verdict(StrEnum):
    TAMPERED = "tampered"
    MISSING = "missing"
    COMPILE_ERROR = "compile_error"
    HACK = "hack"
    CRASH = "crash"
    TIMEOUT = "timeout"
    ERROR = "error"
    INCORRECT = "incorrect"
    FRAMEWORK = "framework"
    NOT_RUN = "not_run"
    COMPILED = "compiled"
    CORRECT = "correct"
    SKIPPED = "skipped"


#: Worst first. ``skipped`` rows are not evaluated and never decide a summary.
SEVERITY: tuple[Verdict, ...] = tuple(Verdict)

MEANING: dict[Verdict, str] = {
    Verdict.TAMPERED: "the stored row was changed after mkbench wrote it (its keyed digest does not match, or it has "
                      "none): never reported as its stored verdict, never counted as correct",
    Verdict.MISSING: "no candidate file, or no reference kernel, for the task",
    Verdict.COMPILE_ERROR: "the candidate did not build: syntax, import, missing entry point, compiler or JIT error "
                           "(the message names the file and line)",
    Verdict.HACK: "runtime evidence of cheating: the harness or judge tampered with, work hidden from the timer "
                  "(kernels on another stream ending after the timed span, threads), answers that were right "
                  "before the timed calls and wrong after them (for a model that keeps state across calls: its "
                  "answers repeated bit for bit after them, where the reference's change from call to call), "
                  "a decoy (the answer stays right with the "
                  "candidate's own kernels suppressed), or a time under the hardware's roofline floor. "
                  "Never counted as correct; static findings alone never give it",
    Verdict.CRASH: "the candidate's worker died (signal or exit code, with the log tail)",
    Verdict.TIMEOUT: "no progress within the step's time limit, or no verdict within the unit's (`--unit-limit`); "
                     "the worker was killed",
    Verdict.ERROR: "the candidate raised, or the device context was corrupted",
    Verdict.INCORRECT: "the judge rejected an output (the contract's message says where), the candidate modified "
                       "an input, or an output had the wrong structure",
    Verdict.FRAMEWORK: "right answer, but not the candidate's own kernels' work: framework or vendor-library kernels "
                       "(ATen, cuBLAS, cuDNN, XLA) took more than the run's --framework-threshold share of the "
                       "device time, or none of the candidate's own kernels ran (--framework-ops forbid)",
    Verdict.NOT_RUN: "an earlier step of the same candidate crashed or hung, so this one never ran",
    Verdict.COMPILED: "built but not run: a backend that can only compile here (e.g. CUDA without an NVIDIA GPU)",
    Verdict.CORRECT: "every output accepted by the judge on every seed, with no integrity evidence against it",
    Verdict.SKIPPED: "not evaluated: the hardware profile or the backend skips this shape or dtype (the reason "
                     "is recorded)",
}


def worst(verdicts: Iterable[str]) -> Verdict | None:
    """The most severe verdict among evaluated rows (``skipped`` ignored); None if there are none."""
    present = {Verdict(v) for v in verdicts} - {Verdict.SKIPPED}
    return next((v for v in SEVERITY if v in present), None)


def counts_as_correct(verdict: str) -> bool:
    return verdict == Verdict.CORRECT


def markdown() -> str:
    """The README's table of verdicts (a test keeps the README equal to it)."""
    lines = ["| verdict | meaning |", "|---|---|"]
    lines += [f"| `{v}` | {MEANING[v]} |" for v in SEVERITY]
    return "\n".join(lines)


if __name__ == "__main__":  # python -m mkbench.verdicts: print the table
    print(markdown())
