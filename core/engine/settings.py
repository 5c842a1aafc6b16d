"""What a lane is told to do with a unit: the step and unit limits and the evaluation settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..timing import TimingSettings


@dataclass
class Limits:
    """Seconds allowed for one step (the whole compile, or one (shape, dtype) check or timing), and
    for a whole unit (``unit``, ``--unit-limit``): the step limits alone let a unit of many steps,
    each just under its limit, run for an hour without a verdict.

    A unit's time is its own: from its worker's fork to its last step, less the time it waited for
    another lane (the device's locks, its memory budget), so its verdict never depends on how busy
    the other lanes were. Those waits are bounded all the same: whoever holds the device is inside a
    step or a unit that has its own limit. None: no unit limit."""

    compile: float = 300.0
    correctness: float = 180.0
    timing: float = 180.0
    start: float = 120.0  # forking and setting up, before the first answer
    unit: float | None = 900.0


@dataclass(frozen=True)
class Sharing:
    """How a device is shared among the units on it: ``--timing-batch``, ``--timing-queue``,
    ``--timing-gather``, ``--timing-defer`` (its timing phases, :class:`~.phases.PhasedLock`),
    ``--memory-share`` (its memory budget) and ``--start-ahead`` (workers started before their lane).
    None: the device's default, which may depend on its lanes.
    One object from the CLI to every device, local or a Ray actor, so a new setting is added here and
    read where it is used, not threaded through each constructor between."""

    timing_batch: int | None = None       # units per exclusive timing phase (phases.default_timing_batch)
    timing_queue: int | None = None       # units waiting to be timed without a lane (device.default_timing_queue)
    timing_gather_s: float | None = None  # a timing phase's gathering time (phases.DEFAULT_GATHER_S)
    timing_defer_s: float | None = None   # how long a ready phase waits for long checks (phases.DEFAULT_DEFER_S)
    memory_share: float | None = None     # of a GPU's memory the units' plans may take (memory.MEMORY_SHARE)
    # start a unit's worker (fork, confinement, CUDA context) before it has a lane, while it waits for one
    # (device.Device.evaluate): at most one such worker per lane; off by default until measured on a GPU
    start_ahead: bool = False


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
    # how a worker hands its CUDA tensors to the judge: "area" (copied into one transfer area the judge
    # maps once per unit) or "ipc" (each tensor's own IPC handles, opened and closed per check)
    transfer: str = "area"
    # how a unit holds its share of the device's memory: "unit" (the whole share, from its first check
    # to its end) or "staged" (the combinations that need little first, on a small share; the whole
    # share from the first combination that needs more: see memory.first_stage)
    memory_hold: str = "unit"
    # where a candidate's kernels are compiled ahead of its first call (compile_ahead.MODES): as its
    # backend says ("backend"), in the compile-ahead pool, in its own lane, or not at all
    compile_ahead: str = "backend"
    # while a candidate builds inside a checked call (load_inline's nvcc, mkbench.worker.host_work), its
    # unit keeps its shared hold on the device ("keep") or lets go of it until the build returns
    # ("release": a timing phase need not wait for the build; the worker is stopped while one holds the
    # device, see phases.PhasedLock.stepped_out)
    build_hold: str = "release"
    # which call of a (shape, dtype) the correctness trace records: the candidate's "first" in its worker, or,
    # with "warm", its second, after one untraced call on another seed's inputs of that shape: the trace then
    # holds what the timer will time, not the first call's JIT compile and autotuning (a KernelBench-X
    # candidate's autotune traced 118k kernels in 12 s, against a 2.5 ms call: reports/2026-11-28-calls, call 29)
    trace_call: str = "warm"
