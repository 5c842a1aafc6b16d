"""Where a run's time went (mkbench.engine.clock), and the trace-duration rule that needs a trace
taken with the device to itself (mkbench.integrity)."""

import os
import re

import pytest

from mkbench.engine.clock import (
    cpu_sample,
    engine_line,
    host_cpu,
    longest_shared_calls,
    run_host,
    run_wall,
    step_table,
    unit_clock,
    unit_clocks,
)
from mkbench.engine.observation import ComboObservation
from mkbench.integrity import hack_evidence
from mkbench.store import Store
from mkbench.trace import MARKER, analyze


def _row(task, seconds, steps, baseline=False, run_id=1, **extra):
    return {"run_id": run_id, "task": task, "backend": "eager" if baseline else "triton", "method": "m",
            "is_baseline": int(baseline), "extra": dict(extra, unit_seconds=dict(seconds, steps=steps))}


def test_one_clock_per_unit_and_cached_baselines_left_out():
    rows = [
        _row("a", {"compile": 1.0, "correctness": 2.0}, {"fork": 0.5, "wait_shared": 1.0, "run_traced": 0.5}),
        _row("a", {"compile": 1.0, "correctness": 2.0}, {"fork": 0.5, "wait_shared": 1.0, "run_traced": 0.5}),
        _row("b", {"correctness": 1.0}, {"wait_exclusive": 0.25}, baseline=True),
        _row("c", {"correctness": 9.0}, {}, baseline=True, baseline_cache={"measured_in_run": 0}),
        {"run_id": 1, "task": "d", "backend": "triton", "method": "m", "extra": {}},  # skipped: no clock
    ]
    clocks = unit_clocks(rows)
    assert sorted((c.baseline, c.total) for c in clocks) == [(False, 3.5), (True, 1.0)]


def test_the_longest_calls_on_the_shared_device_are_named_longest_first():
    rows = [_row("lazy_build", {"correctness": 40.0}, {"run_traced": 37.9, "run": 0.1}),
            _row("quick", {"correctness": 2.0}, {"run_traced": 0.4, "run": 0.2}),
            _row("slow_run", {"correctness": 9.0}, {"run_traced": 0.5, "run": 6.0, "judge": 50.0}),
            _row("eager_one", {"timing": 3.0}, {"run": 1.5}, baseline=True)]
    lines = longest_shared_calls(unit_clocks(rows))
    assert lines == ["lazy_build [m]: run_traced 37.9 s, run 0.1 s", "slow_run [m]: run_traced 0.5 s, run 6.0 s",
                     "eager_one [m]: run 1.5 s"]  # the judge is not a call on the device; under 1 s is left out
    assert longest_shared_calls(unit_clocks(rows), n=1) == lines[:1]


def test_seconds_a_unit_spent_without_a_lane_are_not_lane_time():
    # 4 s of 6 waiting for and taking the timing hold without a lane (the lane ran other units)
    clocks = [unit_clock({"correctness": 2.0, "timing": 4.0,
                          "steps": {"wait_exclusive": 3.0, "wait_lane": 0.5, "without_lane": 4.0}}, False)]
    line = engine_line(clocks, wall_s=2.0, lanes=2)
    assert "lanes 2 busy 50%" in line  # 6 - 4 = 2 lane-seconds of 2 lanes x 2 s
    assert "lock waits 58%," in line  # 3.5 of the unit's 6 s: the timing wait and the lane taken back
    assert "memory budget" not in line  # no wait for it: not said


def test_engine_line_is_arithmetic_on_the_clocks():
    clocks = [unit_clock({"correctness": 3.0, "timing": 1.0, "steps": {"wait_shared": 1.0, "wait_exclusive": 1.0,
                                                                      "run_traced": 0.4, "trace_step": 0.4,
                                                                      "trace_overhead": 0.08}}, False),
              unit_clock({"correctness": 4.0, "steps": {"wait_memory": 2.0}}, True)]
    line = engine_line(clocks, wall_s=4.0, lanes=4)
    # 2 units of 4 s (steps happen inside the stages): 8 unit-seconds on 4 lanes x 4 s is 50% busy;
    # waits 4 of 8 s; traces 0.8 of 8 s
    assert line.startswith("engine: 2 units in 4 s (2.00 s/unit)")
    assert "lanes 4 busy 50%" in line and "lock waits 50% (the memory budget 25%)" in line
    assert "trace 10% of unit time" in line
    # the profiler's own part of the traced steps (0.08 of 8 s), said apart from the traced calls
    assert "(the profiler itself 1%)" in line
    assert engine_line([], 1.0, 1) == "engine: no unit evaluated"
    headers, rows = step_table(clocks)
    assert headers == ["step", "s/unit, candidates (1)", "s/unit, baselines (1)"]
    table = {r[0]: r[1:] for r in rows}
    assert table["unit total"] == [4.0, 4.0]
    assert table["wait_memory"] == [0.0, 2.0]
    two = {"engine_clock": {"sessions": [{"wall_s": 2.0, "lanes": 3, "units": 5},
                                         {"wall_s": 1.5, "lanes": 4, "units": 2}]}}
    assert run_wall(two) == (3.5, 4, 7)
    assert run_wall({}) == (None, None, 0)



def test_host_cpu_is_arithmetic_on_two_samples_and_weighted_over_sessions():
    start = {"busy": 1000.0, "total": 4000.0, "own_s": 10.0, "at": 100.0}
    end = {"busy": 2500.0, "total": 6000.0, "own_s": 19.0, "at": 110.0}
    host = host_cpu(start, end)
    # 1500 of 2000 jiffies busy; the orchestrator used 9 CPU seconds in 10 s
    assert host == {"cores": os.cpu_count(), "busy": 0.75, "orchestrator_cores": 0.9}
    assert host_cpu(start, None) is None and host_cpu(end, start) is None
    line = engine_line([unit_clock({"correctness": 1.0}, False)], 10.0, 2, host)
    assert line.endswith(f"host CPU busy 75% of {os.cpu_count()} cores (the orchestrator 0.9 of one)")
    sessions = {"engine_clock": {"sessions": [
        {"wall_s": 30.0, "host_cpu": {"cores": 16, "busy": 0.9, "orchestrator_cores": 1.0}},
        {"wall_s": 10.0, "host_cpu": {"cores": 16, "busy": 0.5, "orchestrator_cores": 0.2}},
        {"wall_s": 5.0}]}}  # a session of an older mkbench: no host figures
    assert run_host(sessions) == {"cores": 16, "busy": 0.8, "orchestrator_cores": 0.8}
    assert run_host({}) is None
    sample = cpu_sample()  # this machine's, where it has /proc/stat
    assert sample is None or (sample["total"] >= sample["busy"] >= 0 and sample["own_s"] > 0)


def test_run_prints_the_engine_line_and_analyze_engine_the_steps(tmp_path, cli):
    store = tmp_path / "r.sqlite"
    code, out, err = cli("run", "--backend", "triton", "--hw", "cpu", "--task", "silu", "--shape-role", "small",
                         "--dtype", "float32", "--seeds", "1", "--baselines", "eager", "--no-timing",
                         "--store", store, "--no-progress")
    assert code == 0, err
    line = next((x for x in out.strip().splitlines() if x.startswith("engine: ")), "")
    assert out.strip().splitlines()[-1].startswith("confinement: "), out  # the summary's last line
    # the memory budget's part of the waits is said where a unit waited for memory at all (timing-dependent)
    assert re.match(r"engine: 2 units in \d+ s \([\d.]+ s/unit\), lanes \d+ busy \d+%, lock waits \d+%"
                    r"(?: \(the memory budget \d+%\))?, trace", line), out
    if os.path.exists("/proc/stat"):  # the host's cores, measured over the session
        host = r", host CPU busy \d+% of \d+ cores \(the judges [\d.]+ cores, the orchestrator [\d.]+ of one\)$"
        assert re.search(host, line), line
    code, out, err = cli("analyze", "engine", "--store", store)
    assert code == 0, err
    assert "engine: 2 units in" in out
    assert re.search(r"\| unit total +\| +[\d.]+ +\| +[\d.]+ +\|", out), out
    assert "wait_shared" in out and "judge" in out
    # the sessions: timing phases (held, drained, deferred), the compile-ahead pool it ran (and the workers it
    # started for its units), the judges' CPU
    # where the start went before the session's clock (no process age: the CLI ran inside this test's process)
    session = (r"\| +1 \| [\d.]+ \(probe [\d.]+, plan [\d.]+, record [\d.]+\) +\| +[\d.]+ \| +2 \| +\d+ \| "
               r"+[\d.]+ \| +[\d.]+ \| +[\d.]+ \| "
               r"+\d+-\d+ \(peak \d+; \d+ workers for \d+ units\) +\| +(?:\d+ for \d+ units|-) +\| +[\d.]+ \|")
    assert re.search(session, out), out
    # where each unit ran: its device and lane (on a multi-GPU host, which GPU timed the row)
    lanes = [(r["extra"] or {}).get("lane") for r in Store(store).results() if r["verdict"] != "skipped"]
    assert lanes and all(re.fullmatch(r"cpu/lane\d+", lane or "") for lane in lanes), lanes
    # the worker's start by part: its confinement is timed wherever confinement was attempted
    confinement = out.strip().splitlines()[-1]
    if not confinement.startswith("confinement: none"):
        steps = [(r["extra"] or {}).get("unit_seconds", {}).get("steps", {})
                 for r in Store(store).results() if r["verdict"] != "skipped"]
        assert steps and all(s.get("start_confine", -1) >= 0 for s in steps if s), steps
        assert "start_confine" in out
    # CPU seconds, read from /proc by the orchestrator: every worker did some work (imports are warm
    # in the fork server, but the checks are not free), and the judges' are in the session's record
    if os.path.exists("/proc/self/stat"):
        steps = [(r["extra"] or {}).get("unit_seconds", {}).get("steps", {})
                 for r in Store(store).results() if r["verdict"] != "skipped"]
        assert all(s["cpu_worker"] > 0 for s in steps), steps
        assert "cpu_worker" in out
        run = Store(store).runs()[-1]
        session = run.env["engine_clock"]["sessions"][-1]
        # read in clock ticks (10 ms): a judge of one small silu unit can stay under one tick on a
        # loaded host (the whole suite on 2 cores read 0.0 once), so only its presence is certain
        assert session["judge_cpu_s"] >= 0 and session["host_cpu"]["judge_cores"] >= 0, session
        assert all(s.get("judge", 0) > 0 for s in steps), steps  # the judge did run, on the wall clock
    # the judge's seconds by part, inside its total: each part measured, none more than the whole
    steps = [(r["extra"] or {}).get("unit_seconds", {}).get("steps", {})
             for r in Store(store).results() if r["verdict"] != "skipped"]
    for s in steps:
        # on the CPU: no IPC handles to open, no allocator cache to empty
        parts = {p: s.get(f"judge_{p}") for p in ("import", "inputs", "structure", "reference", "mutation",
                                                  "compare")}
        assert all(v is not None and v >= 0 for v in parts.values()), s
        assert not any(k.startswith(("judge_import_", "judge_free")) for k in s), s
        # each part is rounded to the millisecond as it is added: a small reference can read 0
        assert s["judge"] > 0 and sum(parts.values()) <= s["judge"] * 1.05 + 0.05, s
    assert "judge_reference" in out


def _trace(busy_us: float, alone: bool | None) -> dict:
    """A device trace of one call: start marker, one own kernel of ``busy_us``, end marker."""
    ns = int(busy_us * 1000)
    events = [[MARKER, 7, 0, 1000, 1], ["my_kernel", 7, 2000, ns, 2], [MARKER, 7, 2000 + ns, 10, 3]]
    summary = {"basis": "device_time", "calls": 1, "events": events, "truncated": False}
    if alone is not None:
        summary["alone"] = alone
    return summary


@pytest.mark.parametrize("alone, accused", [(None, False), (False, False), (True, True)])
def test_trace_durations_count_against_the_timer_only_when_traced_alone(alone, accused):
    """Kernels traced while other lanes share the device run several times longer than the timer
    measured them alone: only a trace taken alone may call the timer's median too short."""
    findings = [analyze(_trace(400.0, alone), {"my_kernel"})]
    assert findings[0].busy_us_per_call == pytest.approx(400.0)
    reasons = hack_evidence(ComboObservation(), findings, {"median_us": 90.0, "interpreted": False}, None)
    assert bool([r for r in reasons if "under a quarter" in r]) == accused, reasons
    # a timer that agrees with the trace is never accused, alone or not
    assert not hack_evidence(ComboObservation(), findings, {"median_us": 380.0, "interpreted": False}, None)


@pytest.mark.parametrize("timer, accused", [("cuda_event", True), ("cuda_graph", True),
                                            ("opencl-profiling-events", False), ("device-sync-host-clock", False)])
def test_trace_durations_count_only_against_timers_that_span_the_same_kernels(timer, accused):
    """OpenCL profiling events and the CUDA trace of the same calls disagreed by two orders of
    magnitude on mkbench's own SYCL references (NVIDIA's OpenCL on an H200): only CUDA events (or
    a graph replay timed by them) span what the trace measures."""
    findings = [analyze(_trace(400.0, True), {"my_kernel"})]
    reasons = hack_evidence(ComboObservation(), findings, {"median_us": 90.0, "interpreted": False, "timer": timer},
                            None)
    assert bool([r for r in reasons if "under a quarter" in r]) == accused, reasons


def test_the_profilers_own_seconds_are_counted_apart_from_the_traced_calls():
    """A traced step's seconds are mostly the call itself; the worker says how long the profiler
    took (start, stop, reading back) and the session keeps that as ``trace_overhead``. What the
    worker says is bookkeeping only: nonsense is ignored, never a reason to fail the unit."""
    import types

    from mkbench.engine.session import WorkerSession
    added: dict[str, float] = {}
    fake = types.SimpleNamespace(add=lambda k, v: added.__setitem__(k, added.get(k, 0.0) + v))
    WorkerSession._trace_overhead(fake, {"kind": "ran", "trace": {"cost": {"start_s": 0.01, "stop_s": 0.5,
                                                                           "read_s": 0.2}}})
    WorkerSession._trace_overhead(fake, {"kind": "ran", "trace": {"cost": {"start_s": -5, "stop_s": "junk"}}})
    WorkerSession._trace_overhead(fake, {"kind": "ran", "trace": None})
    WorkerSession._trace_overhead(fake, {"kind": "failed"})
    assert added == {"trace_overhead": pytest.approx(0.71)}


def test_the_start_clock_adds_each_part_up_to_its_mark_and_the_process_age_only_for_its_own_process():
    from mkbench.engine.clock import StartClock, process_age, start_text
    clock = StartClock()
    assert clock.parts == {}  # not its own process: a test's age says nothing of a run
    clock.mark("probe")
    clock.mark("plan")
    clock.mark("probe")  # a part marked twice adds up
    assert list(clock.parts) == ["probe", "plan"] and all(v >= 0 for v in clock.parts.values())
    age = process_age()
    if os.path.exists("/proc/self/stat"):
        assert age is not None and age > 0
        own = StartClock(own_process=True)
        assert own.parts["imports"] >= age
    # in the order they happen, as a store gives them back (its JSON keys sorted)
    assert start_text({"plan": 1.3, "probe": 6.04, "imports": 2.1}) == "9.4 (imports 2.1, probe 6.0, plan 1.3)"
    assert start_text(None) == "-" and start_text({}) == "-"


def test_a_run_over_several_gpus_gets_a_table_per_device():
    from mkbench.engine.clock import device_table
    rows = [
        _row("a", {"correctness": 4.0}, {"wait_shared": 1.0, "time_step": 0.5}, lane="cuda:0/lane1"),
        _row("b", {"correctness": 2.0}, {"wait_exclusive": 1.0, "without_lane": 1.0}, baseline=True,
             lane="cuda:0/lane2"),
        _row("c", {"correctness": 3.0}, {"time_step": 0.25}, lane="cuda:1/lane0"),
    ]
    headers, table = device_table(unit_clocks(rows))
    assert headers[0] == "device" and [r[0] for r in table] == ["cuda:0", "cuda:1"]
    # cuda:0: 2 units (1 candidate), 6 s of unit time, 2 s of it waiting, 1 s away for timing, 0.5 s timed
    assert table[0][1:] == [2, 1, 3.0, "33%", "17%", 0.5]
    assert table[1][1:] == [1, 1, 3.0, "0%", "0%", 0.2]
    # one device (or rows that said none, from an older mkbench): no table
    assert device_table(unit_clocks(rows[:2])) == ([], [])
    assert device_table(unit_clocks([_row("d", {"correctness": 1.0}, {})])) == ([], [])
