"""A unit's judge share of the memory budget set aside while it is away to be timed (``Held.set_aside``):
given to other units meanwhile, and taken back by a candidate, before any unit admitted later, for the
checks after timing."""

from __future__ import annotations

import threading
import time

import pytest

from mkbench.engine import device as device_mod
from mkbench.engine import memory as memory_mod
from mkbench.engine.memory import MemoryBudget, footprint, judge_share
from mkbench.store import Store

GIB = 1 << 30


def _admitted(budget: MemoryBudget, need: int, out: list, name: str, release: threading.Event):
    def unit():
        with budget.hold(need):
            out.append(name)
            release.wait(10)
    t = threading.Thread(target=unit, daemon=True)  # a daemon: a deadlock fails the test, not the session
    t.start()
    return t


def test_a_share_set_aside_admits_others_and_comes_back_first():
    budget, admitted, release = MemoryBudget(100), [], threading.Event()
    with budget.hold(60) as held:
        waits = []
        with held.set_aside(30, waited=waits.append):
            assert budget.used == 30 and held.bytes == 30
            b = _admitted(budget, 40, admitted, "b", release)  # fits beside A's 30 and the 30 kept for A's return
            c = _admitted(budget, 10, admitted, "c", release)  # would eat into the room kept for A
            time.sleep(0.3)
            assert admitted == ["b"] and budget.used == 70
        # A took its 30 back without waiting on B, which still runs; C still waits
        assert held.bytes == 60 and budget.used == 100 and len(waits) == 1
        time.sleep(0.1)
        assert admitted == ["b"]
    release.set()
    b.join(5)
    c.join(5)
    assert admitted == ["b", "c"] and budget.used == 0


def test_a_share_set_aside_for_good_leaves_the_hold_smaller():
    budget = MemoryBudget(100)
    with budget.hold(60) as held:
        with held.set_aside(45, back=False):
            pass
        assert held.bytes == 15 and budget.used == 15 and budget._reserve() == 0  # no room kept: nothing comes back
    assert budget.used == 0


def test_a_unit_that_ends_while_its_share_is_aside_takes_nothing_back():
    budget = MemoryBudget(100)
    with pytest.raises(RuntimeError):
        with budget.hold(60) as held:
            with held.set_aside(100):  # at most the share it holds
                assert budget.used == 0
                raise RuntimeError("stopped")
    assert budget.used == 0 and budget._reserve() == 0


def test_without_a_budget_nothing_is_counted():
    budget = MemoryBudget(None)
    with budget.hold(60) as held:
        with held.set_aside(30):
            assert budget.used == 0


def test_the_judge_share_is_the_footprint_less_the_workers_share(tmp_path):
    from pathlib import Path

    from mkbench.task import load_task_file
    task = load_task_file(str(Path(__file__).resolve().parent.parent / "tasks" / "fusion" / "add_layernorm.py"))

    class Unit:
        combos = [("large", "bfloat16")]
    Unit.task = task
    judge = judge_share(Unit)
    assert 0 < judge < footprint(Unit) - memory_mod.CONTEXT_BYTES
    # the judge's share is at the reference's precision: a bfloat16 task's judge needs more than its worker
    assert judge > footprint(Unit) - memory_mod.CONTEXT_BYTES - judge


def test_a_timed_run_sets_each_units_judge_share_aside_and_keeps_its_verdicts(tmp_path, cli, monkeypatch):
    """A CPU run given a budget, as a GPU's lanes have one: the candidate sets its judge share aside while it
    is away to be timed and takes it back for its checks after timing; the eager baseline, not judged after
    timing, gives it back for good. The verdicts are those of a run without a budget."""
    real_init, real_aside, asides, budgets = device_mod.Device.__init__, memory_mod.Held.set_aside, [], []

    def with_budget(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        self.memory = MemoryBudget(64 * GIB)
        budgets.append(self.memory)

    def set_aside(self, nbytes, back=True, waited=lambda s: None):
        asides.append((nbytes, back))
        return real_aside(self, nbytes, back, waited)
    monkeypatch.setattr(device_mod.Device, "__init__", with_budget)
    monkeypatch.setattr(memory_mod.Held, "set_aside", set_aside)
    verdicts = {}
    for name in ("budget", "none"):
        if name == "none":
            monkeypatch.setattr(device_mod.Device, "__init__", real_init)
        store = tmp_path / f"{name}.sqlite"
        code, out, err = cli("run", "--task", "gelu", "--baselines", "eager", "--seeds", "1", "--shape-role", "small",
                             "--dtype", "float32", "--time-budget-ms", "5", "--store", store, "--no-progress")
        assert code == 0, err
        rows = [r for r in Store(store).results() if r["verdict"] != "skipped"]
        verdicts[name] = sorted((r["method"], r["verdict"]) for r in rows)
        if name == "budget":
            assert all(r["time_median_us"] for r in rows)  # both units were timed
            budgeted = list(asides)
    assert verdicts["budget"] == verdicts["none"] == [("eager", "correct"), ("reference", "correct")]
    assert sorted(back for _, back in budgeted) == [False, True] and all(n > 0 for n, _ in budgeted)
    assert [b.used for b in budgets] == [0] and budgets[0]._reserve() == 0
