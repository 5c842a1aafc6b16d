"""A staged hold on the memory budget (``--memory-hold staged``): a unit checks its small combinations on
a small share, gives it back, then waits for its whole share before the first combination that needs it."""

import dataclasses
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from mkbench.engine import device as device_mod
from mkbench.engine import lane as lane_mod
from mkbench.engine import memory as memory_mod
from mkbench.engine.memory import CONTEXT_BYTES, first_stage, footprint
from mkbench.task import load_task_file

ROOT = Path(__file__).resolve().parent.parent


class Unit:
    def __init__(self, task, combos):
        self.task, self.combos = task, combos


def _unit(task_file, shapes=("small", "awkward", "large"), dtypes=("float32", "bfloat16")):
    task = load_task_file(str(ROOT / "tasks" / task_file))
    return Unit(task, [(s, d) for s in shapes for d in dtypes])


def test_the_first_stage_is_the_small_combinations_ahead_of_the_large_ones():
    unit = _unit("fusion/add_layernorm.py")
    first = first_stage(unit)
    assert first == [("small", "float32"), ("small", "bfloat16"), ("awkward", "float32"), ("awkward", "bfloat16")]
    # the first stage's share is a small part of the whole
    assert footprint(unit, "area", first) - CONTEXT_BYTES <= memory_mod.FIRST_STAGE_SHARE * (
        footprint(unit) - CONTEXT_BYTES)
    assert footprint(unit, "area", first) - CONTEXT_BYTES < (footprint(unit) - CONTEXT_BYTES) // 50


@pytest.mark.parametrize("shapes", [("large",), ("small",), ("large", "small")])
def test_no_stage_where_it_saves_nothing(shapes):
    # every combination large, every one small, or the large one first: one hold, as without staging
    assert first_stage(_unit("fusion/add_layernorm.py", shapes)) is None


def test_a_stateful_task_is_not_staged():
    unit = _unit("fusion/add_layernorm.py")
    unit.task = dataclasses.replace(unit.task, stateful_reference="a running statistic")
    assert first_stage(unit) is None


class _Worker:
    def __init__(self):
        self.clock, self.waits = {}, []

    def waited_for(self, key, seconds):
        self.waits.append(key)


class _Run:
    def __init__(self):
        self.worker, self.judge, self.states = _Worker(), "judge of lane 0", []
        self.unit = Unit(type("T", (), {"name": "t"})(), [])

    def say(self, state):
        self.states.append(state)


def test_growing_gives_the_first_share_back_before_it_asks_for_the_whole_one():
    events = []

    @contextmanager
    def share(name):
        events.append(f"take {name}")
        yield
        events.append(f"give {name}")

    run = _Run()
    with ExitStack() as hold:
        hold.enter_context(share("stage"))
        room_for = lane_mod._grow(run, {("small", "float32")}, hold, lambda: share("whole"),
                                  lambda: "judge of lane 3")
        room_for(("small", "float32"))  # in the first stage: nothing
        assert events == ["take stage"]
        room_for(("large", "float32"))
        room_for(("large", "bfloat16"))  # grown once
        events.append("checks of the large shape")
    assert events == ["take stage", "give stage", "take whole", "checks of the large shape", "give whole"]
    assert run.judge == "judge of lane 3"  # it may have come back on another lane
    assert run.worker.waits == ["wait_memory"] and run.states == ["wait for memory t"]


def test_a_staged_run_takes_its_shares_in_order_and_keeps_its_verdicts(tmp_path, cli, monkeypatch):
    """On the CPU there is no budget: one is made here, and the first stage is the first combination."""
    from mkbench.store import Store
    events = []
    real_hold = memory_mod.MemoryBudget.hold

    @contextmanager
    def hold(self, need, *args, **kwargs):
        with real_hold(self, need, *args, **kwargs):
            events.append(("take", need))
            yield
            events.append(("give", need))

    real_init = memory_mod.MemoryBudget.__init__
    monkeypatch.setattr(memory_mod.MemoryBudget, "__init__", lambda self, capacity: real_init(self, 1 << 40))
    monkeypatch.setattr(memory_mod.MemoryBudget, "hold", hold)
    monkeypatch.setattr(device_mod, "first_stage", lambda unit, transfer="area": unit.combos[:1])
    store = tmp_path / "r.sqlite"
    code, out, err = cli("run", "--backend", "triton", "--hw", "cpu", "--task", "silu", "--shape-role", "small",
                         "--dtype", "float32", "--dtype", "bfloat16", "--seeds", "1", "--baselines", "none",
                         "--no-timing", "--lanes", "1", "--memory-hold", "staged", "--store", store, "--no-progress")
    assert code == 0, err
    assert [e for e, _ in events] == ["take", "give", "take", "give"]
    (_, stage), (_, whole) = events[0], events[2]
    assert stage <= whole and events[1][1] == stage and events[3][1] == whole
    rows = [r for r in Store(store).results() if r["verdict"] != "skipped"]
    assert {r["verdict"] for r in rows} == {"correct"} and len(rows) == 2
    assert Store(store).runs()[-1].env["engine"]["memory_hold"] == "staged"



