"""Where a run's time went: per-step seconds of its units, and the one-line engine summary.

Every evaluated unit carries its clock in its rows (``extra["unit_seconds"]``): seconds per stage
(``start``, ``compile``, ``correctness``, ``timing`` ...) and, under ``steps``, seconds per kind of
step summed over the unit (``wait_shared``, ``run_traced``, ``judge``, ``time_step`` ...). The run
records its own wall time and lane count in its environment (``engine_clock``). From those:

* :func:`engine_line`: units, wall time, seconds per unit, lane busy %, lock-wait %, trace % (the
  run command's last line, and ``mkbench analyze engine``'s first);
* :func:`step_table`: the mean seconds per unit of each step, candidates and baselines apart.

Both read the same :func:`unit_clocks`, so the line and the table always agree. Each session also
records how busy the host's cores were (:func:`host_cpu`): a job that waits on the host's CPU
(compiles, judges and workers' starts competing for cores) looks, in the step table alone, like a
job that waits on locks.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from .gpu_busy import busy_text

#: the step spent waiting for room in the device's memory budget (said apart on the engine line)
WAIT_MEMORY = "wait_memory"
#: steps spent waiting for another lane (device locks, the memory budget, a free lane after timing), not working
WAIT_STEPS = ("wait_shared", "wait_exclusive", WAIT_MEMORY, "wait_lane")
#: a unit's seconds without a lane (waiting for its timing hold and taking it, see device.Lease): its
#: lane worked for other units meanwhile, so these are not lane time (they overlap the steps above)
WITHOUT_LANE = "without_lane"
#: steps that record device traces (the correctness call traced, the calls traced after timing)
TRACE_STEPS = ("run_traced", "trace_step")
#: the profiler's own part of them (start, stop, reading the events): the rest is the traced calls,
#: which cost as much untraced (a candidate's first call: its JIT compile, autotuning, set-up)
TRACE_OVERHEAD = "trace_overhead"
#: steps outside the unit's stages but inside its lane: the compile ahead where a lane made it (Ray),
#: the worker's start, its stop. The compile-ahead stage's own pool (``compile_ahead``, and the wait for
#: one of its workers, ``compile_queue``) is not lane time.
OUTSIDE_STAGES = ("prewarm", "fork", "stop")
#: CPU seconds, not wall time (read from ``/proc`` by the orchestrator, see :func:`tree_cpu`): a
#: lane's worker over its whole unit, a compile-ahead worker over its life. Set against the unit's
#: wall seconds they say whether a step computed or waited for a core.
CPU_WORKER, CPU_COMPILE_AHEAD = "cpu_worker", "cpu_compile_ahead"
CPU_STEPS = (CPU_WORKER, CPU_COMPILE_AHEAD)
#: the compile-ahead worker's seconds by part (inside ``compile_ahead``, never added to it): its start
#: (fork, confinement, CUDA context), importing the candidate, and the compile-only calls themselves. The CPU
#: seconds of all three are ``cpu_compile_ahead``; a part much longer than its CPU waited for something.
COMPILE_AHEAD_PARTS = ("compile_ahead_start", "compile_ahead_import", "compile_ahead_build")
# The judge's seconds by part are steps too: ``judge_`` + each of mkbench.judge.JUDGE_PARTS, inside
# ``judge`` and never added to it (engine.steps.judge_parts puts them on the clock).


#: steps that run the candidate's calls while its unit shares the device (the first seed's call traced,
#: the untraced call before it, the checked calls, the run with its launches suppressed): a timing phase
#: drains for whichever is in flight, so one long call (a load_inline build inside a first ``forward``:
#: 38 s on an H100, CUDA-L1) stops every lane (docs/engine.md)
SHARED_CALL_STEPS = ("run_traced", "run_warm", "run", "run_suppressed")


@dataclass(frozen=True)
class UnitClock:
    """One unit's clock: its total seconds, and seconds per kind of step; ``unit`` names it."""

    baseline: bool
    total: float
    steps: dict[str, float] = field(default_factory=dict)
    unit: str = ""
    device: str = ""  # where the unit ran ("cuda:2"), from its rows' lane


def row_device(extra: dict[str, Any] | None) -> str:
    """The device a row's unit ran on ("cuda:2"), from the lane its row records ("cuda:2/lane1"); "" where
    it records none (an older mkbench)."""
    return str((extra or {}).get("lane") or "").split("/", 1)[0]


def unit_clock(unit_seconds: dict[str, Any] | None, baseline: bool) -> UnitClock | None:
    """A unit's clock from its ``unit_seconds`` record (None where it has none: cached, skipped)."""
    if not unit_seconds:
        return None
    stages = {k: float(v) for k, v in unit_seconds.items() if k != "steps" and isinstance(v, (int, float))}
    steps = {k: float(v) for k, v in (unit_seconds.get("steps") or {}).items() if isinstance(v, (int, float))}
    # before the stages' clock starts and after it stops: the unit's time all the same
    return UnitClock(baseline, sum(stages.values()) + sum(steps.get(k, 0.0) for k in OUTSIDE_STAGES), steps)


def unit_clocks(rows: Iterable[dict[str, Any]]) -> list[UnitClock]:
    """One clock per unit (a unit's rows all carry the same record) from stored result rows."""
    seen: dict[tuple, UnitClock] = {}
    for r in rows:
        key = (r.get("run_id"), r.get("task"), r.get("backend"), r.get("method"))
        extra = r.get("extra") or {}
        # skipped rows carry no clock; a baseline taken from the cache ran in an earlier run
        if key in seen or extra.get("baseline_cache"):
            continue
        clock = unit_clock(extra.get("unit_seconds"), bool(r.get("is_baseline")))
        if clock is not None:
            seen[key] = replace(clock, unit=f"{r.get('task')} [{r.get('method')}]",
                                device=row_device(extra))
    return list(seen.values())


def longest_shared_calls(clocks: list[UnitClock], n: int = 5, at_least_s: float = 1.0) -> list[str]:
    """The ``n`` units whose calls held the shared device longest (over ``at_least_s`` seconds in one
    of :data:`SHARED_CALL_STEPS`), longest first: what timing phases drained for."""
    held = [(max(c.steps.get(s, 0.0) for s in SHARED_CALL_STEPS), c) for c in clocks]
    held = sorted((h for h in held if h[0] >= at_least_s), key=lambda h: -h[0])[:n]
    return [f"{c.unit}: " + ", ".join(f"{s} {c.steps[s]:.1f} s" for s in SHARED_CALL_STEPS if c.steps.get(s, 0) >= 0.05)
            for _, c in held]


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole > 0 else None


def totals(clocks: list[UnitClock]) -> dict[str, float]:
    busy = sum(c.total for c in clocks)
    return {"units": len(clocks), "unit_seconds": busy,
            "lane_seconds": busy - sum(c.steps.get(WITHOUT_LANE, 0.0) for c in clocks),
            "wait_seconds": sum(c.steps.get(k, 0.0) for c in clocks for k in WAIT_STEPS),
            "memory_wait_seconds": sum(c.steps.get(WAIT_MEMORY, 0.0) for c in clocks),
            "trace_seconds": sum(c.steps.get(k, 0.0) for c in clocks for k in TRACE_STEPS),
            "trace_overhead_seconds": sum(c.steps.get(TRACE_OVERHEAD, 0.0) for c in clocks)}


def process_cpu(pid: int | None, fields: list[bytes] | None = None) -> float | None:
    """CPU seconds process ``pid`` has used so far, its own and its waited-for children's (``ptxas``
    run by a Triton compile), read from ``/proc/<pid>/stat`` (or its ``fields``, already read) by the
    orchestrator, not reported by the process; None where it cannot be read (gone, no ``/proc``)."""
    from ..procguard import stat_fields
    if not pid:
        return None
    fields = stat_fields(pid) if fields is None else fields
    try:
        ticks = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    except (TypeError, ValueError):
        return None
    return ticks / os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int | None) -> float | None:
    """CPU seconds used so far by process ``pid`` and every live process below it: a confined worker
    is a reaper's child (:mod:`mkbench.sandbox`), whose seconds reach the reaper only once it has
    exited. None where ``pid`` itself cannot be read. ``/proc`` is read once for the whole tree."""
    from ..procguard import descendants, process_table
    if not pid:
        return None
    table = process_table()
    own = process_cpu(pid, table.get(pid))
    if own is None:
        return None
    return round(own + sum(process_cpu(p, table.get(p)) or 0.0 for p in descendants(pid, table)), 3)


def cpu_sample() -> dict[str, float] | None:
    """The host's CPU time so far (``/proc/stat``: busy and total jiffies over every core) and this
    process's own CPU seconds (all its threads), or None where there is no ``/proc/stat``."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:9]]  # user nice system idle iowait irq softirq steal
    except (OSError, ValueError):
        return None
    t = os.times()
    return {"busy": float(sum(fields) - fields[3] - fields[4]), "total": float(sum(fields)),
            "own_s": t.user + t.system, "at": time.monotonic()}


def process_age() -> float | None:
    """Seconds since this process began (``/proc``: its start time in clock ticks since boot, against the
    host's uptime), None where there is no ``/proc``: what the run's start took before the engine's own
    clocks began (the interpreter, the imports)."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return round(max(uptime - start_ticks / os.sysconf("SC_CLK_TCK"), 0.0), 3)
    except (OSError, ValueError, IndexError):
        return None


class StartClock:
    """Where a run's start went before the session's clock began: ``imports`` (the process's age as the
    runner begins), then each named part up to the next mark (``probe``: what is left of the device probe,
    whose worker `mkbench run` spawned as it began, :mod:`.head_start`; ``plan``; ``record``: the run's
    environment and launch overheads). On one
    H200 a KernelBench-X run's first unit came about 14 s after its process began
    (reports/2026-11-28-corpus-scaling, call 45), 8% of the whole corpus's wall time."""

    PARTS = ("imports", "probe", "plan", "record")  # in the order they happen

    def __init__(self, own_process: bool = False):
        """``own_process``: the run is what this process was started for (``mkbench run``), so its age is
        the run's; not where a run is started from a process that did other things first (a test)."""
        self.parts: dict[str, float] = {}
        age = process_age() if own_process else None
        if age is not None:
            self.parts["imports"] = age
        self._t = time.monotonic()

    def mark(self, part: str) -> None:
        now = time.monotonic()
        self.parts[part] = round(self.parts.get(part, 0.0) + now - self._t, 3)
        self._t = now


def start_text(start: dict[str, float] | None) -> str:
    """A session's start: "13.8 (imports 2.1, probe 6.0, plan 1.3, record 4.4)"; "-" where none
    was recorded (an older mkbench)."""
    if not start:
        return "-"
    order = [k for k in StartClock.PARTS if k in start] + [k for k in start if k not in StartClock.PARTS]
    parts = ", ".join(f"{k} {start[k]:.1f}" for k in order)  # a store keeps the keys sorted
    return f"{sum(start.values()):.1f} ({parts})"


def host_cpu(start: dict | None, end: dict | None) -> dict[str, Any] | None:
    """Between two :func:`cpu_sample`\\ s: the share of the host's cores that were busy, and how many
    cores' worth the orchestrator itself used (near 1: its threads, which share one interpreter, are
    what everything waits on)."""
    if not start or not end or end["total"] <= start["total"] or end["at"] <= start["at"]:
        return None
    return {"cores": os.cpu_count(), "busy": round((end["busy"] - start["busy"]) / (end["total"] - start["total"]), 3),
            "orchestrator_cores": round((end["own_s"] - start["own_s"]) / (end["at"] - start["at"]), 3)}


def engine_line(clocks: list[UnitClock], wall_s: float | None, lanes: int | None,
                host: dict[str, Any] | None = None, gpu: dict[str, Any] | None = None) -> str:
    """``engine: 40 units in 95 s (2.4 s/unit), lanes 12 busy 61%, lock waits 18% (the memory budget 6%),
    trace 7% of unit time, host CPU busy 80% of 16 cores (the orchestrator 0.7 of one), GPU busy 74%``:
    the memory budget's part of the waits said apart where there is one (on an H200 main job it was most
    of them); the GPUs' busy share where the driver was sampled (:mod:`.gpu_busy`)."""
    t = totals(clocks)
    if not t["units"]:
        return "engine: no unit evaluated"
    parts = [f"engine: {t['units']} units"]
    if wall_s:
        parts[0] += f" in {wall_s:.0f} s ({wall_s / t['units']:.2f} s/unit)"
    busy = _share(t["lane_seconds"], (wall_s or 0) * (lanes or 0))
    if lanes:
        parts.append(f"lanes {lanes}" + (f" busy {busy:.0%}" if busy is not None else ""))
    wait, trace = _share(t["wait_seconds"], t["unit_seconds"]), _share(t["trace_seconds"], t["unit_seconds"])
    memory = _share(t["memory_wait_seconds"], t["unit_seconds"]) if t["memory_wait_seconds"] else None
    parts.append((f"lock waits {wait:.0%}" if wait is not None else "lock waits -")
                 + (f" (the memory budget {memory:.0%})" if memory is not None else ""))
    overhead = _share(t["trace_overhead_seconds"], t["unit_seconds"]) if t["trace_overhead_seconds"] else None
    parts.append((f"trace {trace:.0%}" if trace is not None else "trace -") + " of unit time" +
                 (f" (the profiler itself {overhead:.0%})" if overhead is not None else ""))
    if host:
        judges = f"the judges {host['judge_cores']:.1f} cores, " if host.get("judge_cores") is not None else ""
        parts.append(f"host CPU busy {host['busy']:.0%} of {host['cores']} cores "
                     f"({judges}the orchestrator {host['orchestrator_cores']:.1f} of one)")
    busy_gpu = busy_text(gpu)
    if busy_gpu:
        parts.append(busy_gpu)
    return ", ".join(parts)


def step_table(clocks: list[UnitClock]) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows): mean seconds per unit of each step, for candidate and baseline units."""
    groups = {"candidates": [c for c in clocks if not c.baseline], "baselines": [c for c in clocks if c.baseline]}
    groups = {k: v for k, v in groups.items() if v}
    names = sorted({s for c in clocks for s in c.steps},
                   key=lambda s: (s in CPU_STEPS, s not in WAIT_STEPS + TRACE_STEPS, s))
    headers = ["step", *(f"s/unit, {g} ({len(v)})" for g, v in groups.items())]
    rows = [["unit total", *(round(sum(c.total for c in v) / len(v), 3) for v in groups.values())]]
    for s in names:
        rows.append([s, *(round(sum(c.steps.get(s, 0.0) for c in v) / len(v), 3) for v in groups.values())])
    return headers, rows


def device_table(clocks: list[UnitClock]) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows): per device its units ran on (a ``--gpus all`` run), the units and candidates, the
    mean seconds per unit, and the share of unit time spent waiting (:data:`WAIT_STEPS`), timing held
    (``time_step``) and traced; no rows where fewer than two devices are known (older rows said none)."""
    devices = sorted({c.device for c in clocks if c.device})
    if len(devices) < 2:
        return [], []
    headers = ["device", "units", "candidates", "s/unit", "lock waits", "away for timing", "timed steps s"]
    rows = []
    for d in devices:
        mine = [c for c in clocks if c.device == d]
        t = totals(mine)
        away = sum(c.steps.get(WITHOUT_LANE, 0.0) for c in mine)
        rows.append([d, len(mine), sum(not c.baseline for c in mine), round(t["unit_seconds"] / len(mine), 3),
                     f"{_share(t['wait_seconds'], t['unit_seconds']) or 0:.0%}",
                     f"{_share(away, t['unit_seconds']) or 0:.0%}",
                     round(sum(c.steps.get("time_step", 0.0) for c in mine), 1)])
    return headers, rows


def run_host(env: dict[str, Any]) -> dict[str, Any] | None:
    """The host's CPU over the run's sessions that recorded it, weighted by their wall time."""
    sessions = [s for s in (env.get("engine_clock") or {}).get("sessions") or []
                if s.get("host_cpu") and s.get("wall_s")]
    wall = sum(s["wall_s"] for s in sessions)
    if not wall:
        return None
    def mean(key: str) -> float | None:
        if any(s["host_cpu"].get(key) is None for s in sessions):
            return None  # a session of an older mkbench did not record it
        return round(sum(s["host_cpu"][key] * s["wall_s"] for s in sessions) / wall, 3)

    host = {"cores": sessions[-1]["host_cpu"]["cores"], "busy": mean("busy"),
            "orchestrator_cores": mean("orchestrator_cores")}
    if mean("judge_cores") is not None:
        host["judge_cores"] = mean("judge_cores")
    return host


def run_gpu(env: dict[str, Any]) -> dict[str, Any] | None:
    """The GPUs' busy share over the run's sessions that sampled it (:mod:`.gpu_busy`), each GPU's mean
    weighted by the sessions' wall time; None where none did."""
    sessions = [s for s in (env.get("engine_clock") or {}).get("sessions") or []
                if (s.get("gpu_busy") or {}).get("gpus") and s.get("wall_s")]
    if not sessions:
        return None
    weights: dict[str, float] = {}
    sums: dict[str, float] = {}
    for sess in sessions:
        for index, g in sess["gpu_busy"]["gpus"].items():
            weights[index] = weights.get(index, 0.0) + sess["wall_s"]
            sums[index] = sums.get(index, 0.0) + g["busy_mean"] * sess["wall_s"]
    return {"gpus": {i: {"busy_mean": round(sums[i] / weights[i], 1)} for i in sorted(weights)}}


def session_table(env: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows): each recorded session of a run, with where its start went before the engine's clock
    (:class:`StartClock`), its wall time and units, its timing phases
    (how many, seconds the device was held for timing and spent draining the checks in flight: every
    other lane waits through both; seconds phases ready to open deferred for long checks, while checks
    went on), the compile-ahead pool it ran (floor-ceiling, the most at once, workers started for units), the
    baseline workers it started for the units they served and its judges' CPU seconds. "-" where a session did
    not record it (an older mkbench, Ray)."""
    headers = ["session", "start s", "wall s", "units", "timing phases", "held s", "draining s", "deferred s",
               "compile-ahead pool", "baseline workers", "judges' CPU s", "GPU busy", "GPU memory GiB (median / p90)",
               "SM MHz while busy (slowed)"]
    rows = []
    for k, sess in enumerate((env.get("engine_clock") or {}).get("sessions") or [], 1):
        timing, pool = sess.get("timing") or {}, sess.get("compile_pool")
        gpus = (sess.get("gpu_busy") or {}).get("gpus") or {}
        busy = busy_text(sess.get("gpu_busy"))
        rows.append([k, start_text(sess.get("start_s")), sess.get("wall_s", "-"), sess.get("units", "-"),
                     timing.get("phases", "-"),
                     timing.get("held_s", "-"), timing.get("drain_s", "-"), timing.get("deferred_s", "-"),
                     pool_text(pool), kept_text(sess.get("baseline_workers")),
                     sess.get("judge_cpu_s", "-"), busy.split("busy ", 1)[1] if busy else "-",
                     "; ".join(f"{g['memory_gib_median']:.1f} / {g['memory_gib_p90']:.1f}" for g in gpus.values())
                     or "-", clock_text(gpus)])
    return headers, rows


def pool_text(pool: dict | None) -> str:
    """A session's compile-ahead pool: "16-32 (peak 21)", and "; 9 workers for 128 units" where it
    recorded them (kept workers serve several units)."""
    if not pool:
        return "-"
    kept = f"; {pool['started']} workers for {pool['units']} units" if "started" in pool else ""
    return f"{pool['floor']}-{pool['ceiling']} (peak {pool['peak']}{kept})"


def kept_text(kept: dict | None) -> str:
    """A session's baseline workers (:mod:`.kept`): "5 for 67 units", with "; 2 stopped holding memory" where
    some were not kept because their reset left memory reserved; "-" where it recorded none."""
    if not kept or not kept.get("units"):
        return "-"
    holding = f"; {kept['holding']} stopped holding memory" if kept.get("holding") else ""
    return f"{kept['started']} for {kept['units']} units{holding}"


def clock_text(gpus: dict[str, dict]) -> str:
    """Each sampled GPU's median SM clock while busy and the share of its busy samples slowed by a power
    or thermal cap (:func:`.gpu_busy.summarize`), ``1980 (0%); 1755 (40%)``; "-" where none was sampled."""
    parts = []
    for g in gpus.values():
        mhz, slowed = g.get("sm_mhz_busy_median"), g.get("slowdown_share")
        if mhz is None and slowed is None:
            continue
        parts.append(f"{'-' if mhz is None else f'{mhz:.0f}'} ({'-' if slowed is None else f'{100 * slowed:.0f}%'})")
    return "; ".join(parts) or "-"


def run_wall(env: dict[str, Any]) -> tuple[float | None, int | None, int]:
    """(wall seconds over the run's recorded sessions, lanes of its last session, units those sessions
    evaluated) from its environment. A session of an older mkbench recorded no clock: compare the
    units with the run's own before dividing by the wall time."""
    sessions = (env.get("engine_clock") or {}).get("sessions") or []
    if not sessions:
        return None, None, 0
    return (sum(s.get("wall_s") or 0.0 for s in sessions), sessions[-1].get("lanes"),
            sum(s.get("units") or 0 for s in sessions))
