"""Numbers derived from measurements, defined once: a speedup, the geometric mean, the median, and a
candidate's summary over its rows. The store keeps raw measurements (its speedup columns, kept for
the readers of existing stores, are computed with :func:`speedup`); the CLI's end-of-run summary
(:mod:`mkbench.summary`) and the report (:mod:`mkbench.analysis`) take their derived numbers from
here, so the two cannot disagree.

A *candidate* is one (task, backend, method) of one run; its *rows* are its (shape, dtype)
combinations. Its speedup is the geometric mean of its rows' speedups, and it has one only when
every evaluated row counts as correct (KernelBench's rule, and what a kernel researcher reads a
speedup as: the kernel that solves the task, this much faster). A candidate that fails some shapes
gets no speedup at all: a mean over the shapes it got right would hide the failures behind a number
that looks like a result. Its verdict and its ``correct`` count (e.g. ``3/4``) say how far it got.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .verdicts import SEVERITY, Verdict, counts_as_correct


def speedup(baseline_us: float | None, candidate_us: float | None) -> float | None:
    """How many times faster the candidate is: baseline median / candidate median. None where
    either time is missing, zero, negative or not finite (no measurement, not a speed)."""
    if not _positive(baseline_us) or not _positive(candidate_us):
        return None
    return float(baseline_us) / float(candidate_us)


def geomean(values: Iterable[float | None]) -> float | None:
    """Geometric mean of the positive, finite values (None, NaN and zeros are no measurement);
    None when there are none."""
    kept = [float(v) for v in values if _positive(v)]
    return math.exp(sum(math.log(v) for v in kept) / len(kept)) if kept else None


def median(values: Iterable[float | None]) -> float | None:
    """Median of the positive, finite values (None, NaN and zeros are no measurement), e.g. of
    per-task speedups; None when there are none."""
    kept = sorted(float(v) for v in values if _positive(v))
    if not kept:
        return None
    mid = len(kept) // 2
    return kept[mid] if len(kept) % 2 else (kept[mid - 1] + kept[mid]) / 2


def _positive(x: Any) -> bool:
    try:
        return x is not None and math.isfinite(x) and x > 0
    except TypeError:  # not a number
        return False


def worst_verdict(verdicts: Iterable[str]) -> str:
    """The most severe evaluated verdict (``skipped`` never decides); ``skipped`` when nothing was
    evaluated. A verdict this mkbench does not know (a store from a newer one) ranks after every
    known one, so reading such a store still works."""
    present = {str(v) for v in verdicts} - {Verdict.SKIPPED}
    known = next((str(v) for v in SEVERITY if v in present), None)
    return known or (sorted(present)[0] if present else str(Verdict.SKIPPED))


@dataclass(frozen=True)
class CandidateSummary:
    """A candidate over its rows (see the module docstring)."""

    verdict: str                   # the worst verdict of its evaluated rows
    rows_evaluated: int            # rows not skipped
    rows_correct: int
    rows_skipped: int
    first_error: str               # why it is not correct: the first message of a row with its verdict
    framework_share: float | None  # the largest share of device time in framework kernels on any row

    @property
    def correct(self) -> bool:
        """Correct on every evaluated shape and dtype (and at least one was evaluated)."""
        return self.rows_evaluated > 0 and self.rows_correct == self.rows_evaluated

    @property
    def correct_count(self) -> str:
        """``correct of evaluated`` rows, e.g. ``3/4``."""
        return f"{self.rows_correct}/{self.rows_evaluated}"

    def speedup(self, row_speedups: Iterable[float | None]) -> float | None:
        """The candidate's speedup from its rows' speedups: their geometric mean when the candidate
        is correct, else None (a partial mean would hide the failed shapes)."""
        return geomean(row_speedups) if self.correct else None


def summarize_candidate(rows: Iterable[Mapping[str, Any]]) -> CandidateSummary:
    """The summary of one candidate's result rows (mappings with ``verdict``, and optionally
    ``error`` and ``extra``), skipped rows included or not."""
    rows = list(rows)
    evaluated = [r for r in rows if r["verdict"] != Verdict.SKIPPED]
    verdict = worst_verdict(r["verdict"] for r in evaluated)
    correct = sum(counts_as_correct(r["verdict"]) for r in evaluated)
    first_error = ""
    if correct < len(evaluated):
        first_error = next((r["error"] for r in evaluated
                            if r["verdict"] == verdict and isinstance(r.get("error"), str) and r["error"]), "")
    extras = [r.get("extra") for r in evaluated]
    shares = [float(e["framework_share"]) for e in extras if isinstance(e, dict)
              and e.get("framework_share") is not None]
    return CandidateSummary(verdict=verdict, rows_evaluated=len(evaluated), rows_correct=correct,
                            rows_skipped=len(rows) - len(evaluated), first_error=first_error,
                            framework_share=max(shares) if shares else None)


__all__ = ["CandidateSummary", "geomean", "median", "speedup", "summarize_candidate", "worst_verdict"]
