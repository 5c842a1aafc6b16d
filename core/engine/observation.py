"""What a unit's evaluation observed: the seam between the lane (which runs steps) and the rules
(:func:`.rows.decide`, which turns observations into rows and verdicts).

Everything here is frozen plain data: picklable (the Ray executor returns observations across
processes) and free of process state. The steps build a unit's observation through a
:class:`Recorder`, which hands out only frozen values (:meth:`Recorder.freeze`).

A correctness check says what it saw in its own vocabulary (:class:`CheckStatus`), not as a verdict:
a backend's runtime integrity check is ``backend_violation``, evidence for the integrity rules, not
a "correct" that means "let the rules decide". Verdicts are decided in :mod:`.rows` only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Mapping

from ..verdicts import Verdict

Combo = tuple[str, str]  # (shape, dtype)
#: how torch (OutOfMemoryError), CuPy, the CUDA and HIP runtimes and OpenCL say a device allocation
#: failed. OpenCL allocates a buffer's memory at its first use: NVIDIA's said so as SYCL's
#: quantize_int8_per_tensor_asym uploaded its large input beside 11 other lanes on an H200
#: (reports/2026-11-27-portability/call5), and the unit was an `error` instead of being run again alone
OUT_OF_MEMORY = re.compile(r"out of memory|OutOfMemoryError|cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY"
                           r"|hipErrorOutOfMemory|MEM_OBJECT_ALLOCATION_FAILURE")
#: a worker's device-trace summary (see :func:`mkbench.trace.analyze`), as the worker sent it, with
#: ``alone`` set by the orchestrator
TraceSummary = Mapping[str, Any]


class CheckStatus(StrEnum):
    """How the correctness check of one (shape, dtype) ended."""

    CORRECT = Verdict.CORRECT.value              # every seed's outputs accepted by the judge
    INCORRECT = Verdict.INCORRECT.value          # the judge rejected an output (or its structure)
    ERROR = Verdict.ERROR.value                  # the candidate raised
    COMPILE_ERROR = Verdict.COMPILE_ERROR.value  # a JIT compile failed at the first call
    BACKEND_VIOLATION = "backend_violation"      # the backend's own runtime check fired (IntegrityViolation)

    @property
    def goes_on(self) -> bool:
        """Whether the combination goes on to the decoy check and timing. A backend violation does,
        as it always has: its evidence is recorded and the integrity rules call it a hack."""
        return self in (CheckStatus.CORRECT, CheckStatus.BACKEND_VIOLATION)


@dataclass(frozen=True)
class Check:
    status: CheckStatus
    message: str = ""
    max_abs_err: float | None = None
    max_rel_err: float | None = None


@dataclass(frozen=True)
class Decoy:
    """The first seed run once more with the candidate's own launches suppressed."""

    still_correct: bool
    launches: int | None

    def as_dict(self) -> dict[str, Any]:
        return {"checked": True, "still_correct": self.still_correct, "launches": self.launches}


@dataclass(frozen=True)
class Timing:
    """The timed calls of one combination and what was seen around them."""

    stats: Mapping[str, Any] | None = None  # the timer's record (mkbench.timing), None: not timed
    trace: TraceSummary | None = None       # the calls traced alone, right after the timed ones
    tamper: str | None = None               # tampering seen by the worker while timing
    before: str | None = None               # a timing input answered wrongly before the timed calls
    error: str | None = None                # a timing-stage step failed


@dataclass(frozen=True)
class AfterTiming:
    """The checks after the timed calls."""

    stale: str | None = None      # a timing input right before the timed calls, wrong after them
    fresh: str | None = None      # a never-seen seed answered wrongly after them
    unchecked: str | None = None  # why the answers after them were not judged
    replayed: str | None = None   # a stateful task's answers repeated bit for bit after them (a cache)


@dataclass(frozen=True)
class ComboObservation:
    """What one (shape, dtype) of a unit observed."""

    check: Check | None = None
    launches: int | None = None             # the candidate's own launches in the first seed's call
    trace: TraceSummary | None = None       # the first seed's call, traced under sharing
    tamper: str | None = None               # tampering seen by the worker in a checked call
    backend_violation: str | None = None    # the backend's runtime check, at any step
    judge_note: str | None = None           # what the judge said beside its verdict
    judge_warning: str | None = None        # what the judge saw and the verdict does not count (devices moved)
    # the reference's answer was one value in every element for every seed's inputs: the work the task
    # counts is not needed to answer it (a degenerate imported task), so no roofline floor applies
    constant_reference: str | None = None
    decoy: Decoy | None = None
    timing: Timing = field(default_factory=Timing)
    after: AfterTiming = field(default_factory=AfterTiming)


@dataclass(frozen=True)
class Compiled:
    ok: bool
    message: str
    checks: Mapping[str, Any] | None = None
    tamper: str | None = None  # tampering seen by the worker right after the candidate's import (compile)


@dataclass(frozen=True)
class AbnormalEnd:
    """How a unit ended early: ``kind`` timeout, crash, poisoned or error, in ``stage`` (None: before
    the worker started), on ``combo`` (None: not inside one combination)."""

    kind: str
    stage: str | None
    combo: Combo | None
    message: str


@dataclass(frozen=True)
class Observation:
    """One unit's observation. ``seconds``: wall time per stage (start, compile, wait_memory,
    correctness, timing); ``steps``: seconds per kind of step summed over the unit (None: the worker
    never started)."""

    compile: Compiled | None = None
    combos: Mapping[Combo, ComboObservation] = field(default_factory=dict)
    abnormal: AbnormalEnd | None = None
    log_tail: str = ""
    lane: str | None = None
    seconds: Mapping[str, float] = field(default_factory=dict)
    steps: Mapping[str, float] | None = None
    # device memory, bytes: ``planned`` (the budget's share for the unit), ``judge_peak`` (the judges'
    # allocator, trusted), ``worker_peak`` (the worker's allocator, as the worker said)
    memory: Mapping[str, int] | None = None
    # the first attempt's out-of-memory message, where the unit was run again with the device's
    # memory budget to itself (:meth:`.device.Device.evaluate`)
    retried: str | None = None

    @property
    def out_of_memory(self) -> str | None:
        """The first message of this unit that says the device ran out of memory (the candidate's,
        its timing's or the judge's), or None. A judge's note that its float64 reference did not fit
        and it computed at the task's precision (as KernelBench does) is not one: that check has its
        verdict, and a large model's float64 copy may fit nowhere."""
        messages = [self.abnormal.message if self.abnormal else None]
        for c in self.combos.values():
            messages += [c.check.message if c.check else None, c.timing.error, c.timing.before,
                         c.after.stale, c.after.fresh]
        return next((m for m in messages if m and OUT_OF_MEMORY.search(m)), None)

    def with_step(self, name: str, seconds: float) -> Observation:
        """The same observation, with one more step's seconds (added outside the lane: prewarm)."""
        return self.with_steps({name: seconds})

    def with_steps(self, steps: dict[str, float]) -> Observation:
        """The same observation, with more steps' seconds (the compile-ahead stage's)."""
        return replace(self, steps={**(self.steps or {}), **steps})

    def with_memory(self, **memory: int) -> Observation:
        return replace(self, memory={**(self.memory or {}), **memory})


class Recorder:
    """A unit's observation while its steps run: mutable here, frozen when handed on."""

    def __init__(self, lane: str | None = None):
        self.lane = lane
        self.compile: Compiled | None = None
        self.combos: dict[Combo, ComboObservation] = {}
        self.abnormal: AbnormalEnd | None = None
        self.log_tail = ""
        self.seconds: dict[str, float] = {}
        self.steps: dict[str, float] | None = None
        self.memory: dict[str, int] = {}

    def peak(self, key: str, value: int | None) -> None:
        """The larger of the peaks seen for ``key`` (a unit's judge is asked at each release)."""
        if value is not None:
            self.memory[key] = max(self.memory.get(key, 0), value)

    def combo(self, shape: str, dtype: str) -> ComboObservation:
        return self.combos.get((shape, dtype)) or ComboObservation()

    def note(self, shape: str, dtype: str, **changes: Any) -> ComboObservation:
        c = self.combos[(shape, dtype)] = replace(self.combo(shape, dtype), **changes)
        return c

    def note_timing(self, shape: str, dtype: str, **changes: Any) -> ComboObservation:
        return self.note(shape, dtype, timing=replace(self.combo(shape, dtype).timing, **changes))

    def note_after(self, shape: str, dtype: str, **changes: Any) -> ComboObservation:
        return self.note(shape, dtype, after=replace(self.combo(shape, dtype).after, **changes))

    def freeze(self) -> Observation:
        return Observation(compile=self.compile, combos=dict(self.combos), abnormal=self.abnormal,
                           log_tail=self.log_tail, lane=self.lane, seconds=dict(self.seconds),
                           steps=dict(self.steps) if self.steps is not None else None,
                           memory=dict(self.memory) or None)
