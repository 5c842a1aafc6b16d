"""What a lane is told to do with a unit: the step limits and the evaluation settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..timing import TimingSettings


@dataclass
class Limits:
    """Seconds allowed for one step: the whole compile, or one (shape, dtype) check or timing."""

    compile: float = 300.0
    correctness: float = 180.0
    timing: float = 180.0
    start: float = 120.0  # forking and setting up, before the first answer


@dataclass
class EvalSettings:
    run_seed: int
    seeds: int = 2
    timing: TimingSettings = field(default_factory=TimingSettings)
    timed: bool = True
    limits: Limits = field(default_factory=Limits)
    trace_calls: int = 3
    time_roles: tuple[str, ...] = ()  # shape roles to time; empty: every role
    worker_memory_mb: int | None = None  # the candidate worker's RLIMIT_DATA (None: no cap)
    confine: dict | None = None  # mkbench.sandbox.confine's settings for candidate workers (None: unconfined)
