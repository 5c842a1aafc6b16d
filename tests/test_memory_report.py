"""The device-memory plan against what units held (mkbench analyze engine): CPU tests of the
bookkeeping. On the CPU no allocator peak exists, so the real run checks the plan's record and the
table is checked on rows written as a GPU run writes them."""

from __future__ import annotations

from mkbench.engine import device as device_mod
from mkbench.engine import memory as memory_mod
from mkbench.engine.memory import CONTEXT_BYTES
from mkbench.engine.memory_report import extremes, memory_table, unit_memory
from mkbench.engine.observation import Recorder
from mkbench.judge import peak_reserved
from mkbench.store import Store

GIB = 1 << 30


def _row(task, method, baseline, planned, judge=None, worker=None, run_id=1):
    mem = {"planned": planned}
    if judge is not None:
        mem["judge_peak"] = judge
    if worker is not None:
        mem["worker_peak"] = worker
    return {"run_id": run_id, "task": task, "backend": "triton" if not baseline else method, "method": method,
            "is_baseline": int(baseline), "extra": {"unit_memory": mem}}


def test_the_table_sets_allocator_peaks_against_the_plan_less_contexts():
    rows = [
        _row("a", "m", False, CONTEXT_BYTES + 10 * GIB, judge=4 * GIB, worker=1 * GIB),   # 0.5 of its plan
        _row("a", "m", False, CONTEXT_BYTES + 10 * GIB, judge=9 * GIB, worker=9 * GIB),   # the same unit again: once
        _row("b", "m", False, CONTEXT_BYTES + 2 * GIB, judge=2 * GIB, worker=1 * GIB),    # 1.5: over its plan
        _row("c", "eager", True, CONTEXT_BYTES + 4 * GIB, judge=1 * GIB),                 # 0.25, worker unknown
        _row("d", "eager", True, CONTEXT_BYTES + 4 * GIB),                                # no peak: left out
    ]
    units = unit_memory(rows)
    assert sorted(u["task"] for u in units) == ["a", "b", "c"]
    headers, table = memory_table(units)
    by = {r[0]: dict(zip(headers, r)) for r in table}
    assert by["candidates"]["count"] == 2 and by["candidates"]["over plan"] == 1
    assert by["candidates"]["max"] == 1.5 and by["candidates"]["peak / plan: median"] == 1.0  # of 0.5 and 1.5
    assert by["baselines"]["count"] == 1 and by["baselines"]["max"] == 0.25
    lines = extremes(units)
    assert lines[0].startswith("over plan: b m: planned 3.0 GiB, judge 2.0 + worker 1.0 GiB (1.50x")
    assert any(line.startswith("most unused: a m") for line in lines)
    assert not any("b m" in line for line in lines if line.startswith("most unused"))


def test_units_whose_tasks_count_no_bytes_are_a_group_without_ratios():
    """An imported task with no byte count is planned on the contexts alone: set against a plan of
    nothing, a CUDA-L1 level-3 model read 1.8e9x over plan and took every over-plan line."""
    rows = [_row("kb_l3_30", "cuda-l1", False, CONTEXT_BYTES, judge=GIB + GIB // 5, worker=GIB // 2),
            _row("kb_l3_29", "eager", True, CONTEXT_BYTES, judge=GIB, worker=GIB // 2),
            _row("b", "m", False, CONTEXT_BYTES + 2 * GIB, judge=2 * GIB, worker=1 * GIB)]
    headers, table = memory_table(unit_memory(rows))
    by = {r[0]: dict(zip(headers, r)) for r in table}
    assert by["candidates"]["count"] == 1 and by["candidates"]["max"] == 1.5 and "baselines" not in by
    none = by["no byte count (contexts only)"]
    assert none["count"] == 2 and none["allocators' peak GiB"] == 3.2 and none["max"] == "-"
    lines = extremes(unit_memory(rows))
    assert [x.split(":")[0] for x in lines] == ["over plan", "no byte count, the largest"]
    assert "kb_l3_30 cuda-l1: judge 1.2 + worker 0.5 GiB" in lines[-1]


def test_a_units_judge_peak_is_the_largest_of_its_releases():
    rec = Recorder()
    rec.peak("judge_peak", None)
    rec.peak("judge_peak", 5)
    rec.peak("judge_peak", 3)  # the lane it took back after timing held less
    assert rec.freeze().memory == {"judge_peak": 5}
    assert Recorder().freeze().memory is None


def test_no_allocator_peak_without_a_cuda_context():
    assert peak_reserved(reset=True) is None


def test_a_run_with_a_memory_budget_records_each_units_plan(tmp_path, cli, monkeypatch):
    """A CPU run given a budget, as a GPU's lanes have one: every unit's rows carry its planned share
    (the footprint the budget held), and the worker answered its memory question (None here)."""
    real = device_mod.Device.__init__

    def with_budget(self, *args, **kwargs):
        real(self, *args, **kwargs)
        self.memory = memory_mod.MemoryBudget(64 * GIB)
    monkeypatch.setattr(device_mod.Device, "__init__", with_budget)
    store = tmp_path / "s.sqlite"
    code, out, err = cli("run", "--task", "gelu", "--baselines", "eager", "--seeds", "1", "--shape-role", "small",
                         "--dtype", "float32", "--time-budget-ms", "5", "--store", store, "--no-progress")
    assert code == 0, err
    rows = [r for r in Store(store).results() if r["verdict"] != "skipped"]
    assert {r["method"] for r in rows} == {"reference", "eager"}
    for r in rows:
        mem = r["extra"]["unit_memory"]
        assert mem["planned"] > CONTEXT_BYTES and "judge_peak" not in mem and "worker_peak" not in mem
    assert unit_memory(rows) == []  # no peak on the CPU: nothing to set against the plan
    code, out, err = cli("analyze", "engine", "--store", store)
    assert code == 0 and "Device memory" not in out


def test_out_of_memory_is_read_from_the_candidate_the_timing_and_the_judge():
    from mkbench.engine import observation as ob
    AbnormalEnd, AfterTiming, Check, CheckStatus = ob.AbnormalEnd, ob.AfterTiming, ob.Check, ob.CheckStatus
    ComboObservation, Observation, Timing = ob.ComboObservation, ob.Observation, ob.Timing
    oom = "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert Observation().out_of_memory is None
    assert Observation(combos={("large", "float32"): ComboObservation(check=Check(CheckStatus.ERROR, oom))}
                       ).out_of_memory == oom
    assert Observation(combos={("large", "float32"): ComboObservation(timing=Timing(error="x: " + oom))}
                       ).out_of_memory == "x: " + oom
    # after the timed calls: a timing input, or a fresh seed, failing for want of memory is no evidence of
    # a cache (an H100 main job called two references hack so, "answered correctly before ... and wrongly
    # after them ... out of memory")
    stale = "timing input 0 was answered correctly before the timed calls and wrongly after them: " + oom
    assert Observation(combos={("large", "float32"): ComboObservation(after=AfterTiming(stale=stale))}
                       ).out_of_memory == stale
    assert Observation(combos={("large", "float32"): ComboObservation(after=AfterTiming(fresh="x: " + oom))}
                       ).out_of_memory == "x: " + oom
    assert Observation(combos={("large", "float32"): ComboObservation(timing=Timing(before="y: " + oom))}
                       ).out_of_memory == "y: " + oom
    opencl = "MemoryError: clEnqueueWriteBuffer failed: MEM_OBJECT_ALLOCATION_FAILURE (at pyopencl/__init__.py:1346)"
    assert Observation(combos={("large", "float32"): ComboObservation(check=Check(CheckStatus.ERROR, opencl))}
                       ).out_of_memory == opencl
    triton = "OutOfResources: out of resource: shared memory, Required: 262144, Hardware limit: 232448"
    assert Observation(combos={("large", "float32"): ComboObservation(check=Check(CheckStatus.ERROR, triton))}
                       ).out_of_memory is None  # a kernel that cannot fit any card's shared memory: its verdict
    judge = "the judge failed: CUDA out of memory. Tried to allocate 18.0 GiB"
    assert Observation(abnormal=AbnormalEnd("error", "correctness", None, judge)).out_of_memory == judge
    # the judge's fallback to the task's precision has its verdict: no retry
    fallback = "reference computed at float32: at float64 it raised OutOfMemoryError: CUDA out of memory"
    assert Observation(combos={("large", "float32"): ComboObservation(check=Check(CheckStatus.CORRECT),
                                                                      judge_note=fallback)}).out_of_memory is None
    # Triton's shared-memory limit is the kernel's, not the device's: no retry
    assert Observation(combos={("large", "float32"): ComboObservation(check=Check(
        CheckStatus.COMPILE_ERROR, "out of resource: shared memory, Required: 262144"))}).out_of_memory is None


def test_a_unit_that_ran_out_of_memory_beside_others_is_run_again_alone(tmp_path, cli, monkeypatch):
    """On a budget, a unit whose first attempt ran out of device memory (here: its judge, made to say so)
    is evaluated again with the whole budget to itself; its rows are the second attempt's and say why."""
    from dataclasses import replace

    from mkbench.engine import lane as lane_mod
    from mkbench.engine.observation import AbnormalEnd
    real_init, real_eval, real_hold = device_mod.Device.__init__, lane_mod.Lane.evaluate, memory_mod.MemoryBudget.hold
    budgets, attempts, holds = [], [], []

    def with_budget(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        self.memory = memory_mod.MemoryBudget(64 * GIB)
        budgets.append(self.memory)

    def evaluate(self, unit, *args, **kwargs):
        obs = real_eval(self, unit, *args, **kwargs)
        attempts.append(unit.method)
        if unit.method == "reference" and attempts.count("reference") == 1:
            obs = replace(obs, abnormal=AbnormalEnd("error", "correctness", None,
                                                    "the judge failed: CUDA out of memory. Tried to allocate 9 GiB"))
        return obs

    def hold(self, need, *args, **kwargs):
        holds.append(need)
        events.append(("hold", need))
        return real_hold(self, need, *args, **kwargs)

    from mkbench.engine import session as session_mod
    real_expect, events = session_mod.WorkerSession.expect, []

    def expect(self, cmd, *args, **kwargs):
        if cmd.get("op") == "setup" and not cmd["job"]["backend"].is_baseline:
            events.append(("setup", None))
        return real_expect(self, cmd, *args, **kwargs)
    monkeypatch.setattr(session_mod.WorkerSession, "expect", expect)
    monkeypatch.setattr(device_mod.Device, "__init__", with_budget)
    monkeypatch.setattr(lane_mod.Lane, "evaluate", evaluate)
    monkeypatch.setattr(memory_mod.MemoryBudget, "hold", hold)
    store = tmp_path / "s.sqlite"
    code, out, err = cli("run", "--task", "gelu", "--baselines", "eager", "--seeds", "1", "--shape-role", "small",
                         "--dtype", "float32", "--time-budget-ms", "5", "--store", store, "--no-progress")
    assert code == 0, err
    assert sorted(attempts) == ["eager", "reference", "reference"]
    assert holds.count(64 * GIB) == 1 and len(holds) == 3  # the second attempt held the whole budget
    # ...before its worker set up (created its CUDA context: where an attempt beside others may run out),
    # where the first attempt took its share after its compile
    whole = events.index(("hold", 64 * GIB))
    assert [e for e in events if e[0] == "setup"] == [("setup", None)] * 2
    first, second = [k for k, e in enumerate(events) if e[0] == "setup"]
    assert first < whole < second, events
    rows = [r for r in Store(store).results() if r["verdict"] != "skipped"]
    assert {r["verdict"] for r in rows} == {"correct"}
    retried = {r["method"]: r["extra"].get("memory_retry") for r in rows}
    assert retried["eager"] is None and retried["reference"].startswith("the judge failed: CUDA out of memory")
    assert [b.used for b in budgets] == [0]
