"""The execution engine on the CPU: lanes (exclusive timing, memory budget), the prepare pool, the
baseline cache, run ownership, the Ray executor on a local Ray instance, and the same verdicts
whatever the parallelism."""

import threading
import time
from pathlib import Path

import pytest

from mkbench.engine import phases as phases_mod
from mkbench.engine.device import Device, LanePool, Lease
from mkbench.engine.memory import MemoryBudget
from mkbench.engine.phases import PhasedLock
from mkbench.store import RunOwned, Store

ROOT = Path(__file__).resolve().parent.parent
TASKS = "gelu,sum_lastdim,layer_norm"


def _run(cli, store, *extra, tasks=TASKS):
    code, out, err = cli("run", "--task", tasks, "--baselines", "eager", "--seeds", "1", "--shape-role", "small",
                         "--dtype", "float32", "--time-budget-ms", "5", "--store", store, "--no-progress", *extra)
    assert code == 0, err
    return out


def _verdicts(store, run_id=None):
    s = Store(store)
    runs = [run_id] if run_id else None
    return sorted((r["task"], r["method"], r["shape"], r["dtype"], r["verdict"]) for r in s.results(runs)
                  if r["verdict"] != "skipped")


def test_timing_waits_for_every_check_and_checks_wait_for_a_waiting_timer():
    lock, events = PhasedLock(batch=1), []

    def check(name, hold):
        with lock.shared():
            events.append(("start", name))
            time.sleep(hold)
            events.append(("end", name))

    def timer():
        with lock.exclusive():
            events.append(("start", "timer"))
            time.sleep(0.05)
            events.append(("end", "timer"))

    a = threading.Thread(target=check, args=("a", 0.2))
    a.start()
    time.sleep(0.05)
    t = threading.Thread(target=timer)
    t.start()
    time.sleep(0.05)
    b = threading.Thread(target=check, args=("b", 0.01))  # arrives while the timer waits: goes after it
    b.start()
    for th in (a, t, b):
        th.join(5)
    order = [f"{k} {n}" for k, n in events]
    assert order == ["start a", "end a", "start timer", "end timer", "start b", "end b"], order


def _long_check_and_timer(lock, short_at=(0.35, 0.45), timer_at=0.3):
    """A check holding the device 0.6 s, a timer asking at ``timer_at`` (0.3 s: the check is long by
    then), short checks arriving after the timer asked: the order things started and ended in."""
    events = []

    def check(name, hold, at):
        time.sleep(at)
        with lock.shared():
            events.append(f"start {name}")
            time.sleep(hold)
            events.append(f"end {name}")

    def timer():
        time.sleep(timer_at)
        with lock.exclusive():
            events.append("start timer")
            events.append("end timer")

    threads = [threading.Thread(target=check, args=("long", 0.6, 0)), threading.Thread(target=timer)]
    threads += [threading.Thread(target=check, args=(f"s{i}", 0.02, at)) for i, at in enumerate(short_at)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    return events


def test_a_ready_phase_waits_for_a_long_check_while_other_checks_go_on(monkeypatch):
    """--timing-defer: a drain would idle every lane while one long check (a first call's autotuning)
    ends; the phase waits for it instead, short checks starting meanwhile, and opens when it ends."""
    monkeypatch.setattr(phases_mod, "LONG_HOLD_S", 0.1)
    lock = PhasedLock(batch=1, defer_s=5)
    events = _long_check_and_timer(lock)
    assert events == ["start long", "start s0", "end s0", "start s1", "end s1", "end long", "start timer",
                      "end timer"], events
    assert lock.phases == 1 and 0.2 < lock.deferred_s < 1.0, lock.deferred_s


def test_a_draining_phase_is_given_back_when_a_check_it_waits_for_turns_long(monkeypatch):
    """The check was young when the phase opened (a first call that goes on to autotune for seconds):
    once it turns long the phase, still draining, is given back, short checks start again, and it
    opens when the long check ends."""
    monkeypatch.setattr(phases_mod, "LONG_HOLD_S", 0.1)
    lock = PhasedLock(batch=1, defer_s=5)
    events = _long_check_and_timer(lock, short_at=(0.2, 0.3), timer_at=0.03)
    assert events == ["start long", "start s0", "end s0", "start s1", "end s1", "end long", "start timer",
                      "end timer"], events
    assert lock.withdrawn == 1 and lock.phases == 1, (lock.withdrawn, lock.phases)


def test_two_timers_of_a_phase_given_back_both_time_after_the_long_check(monkeypatch):
    monkeypatch.setattr(phases_mod, "LONG_HOLD_S", 0.1)
    lock, events = PhasedLock(batch=2, defer_s=5), []

    def timer(name, at):
        time.sleep(at)
        with lock.exclusive():
            events.append(name)

    def check(name, hold, at):
        time.sleep(at)
        with lock.shared():
            time.sleep(hold)
            events.append(name)

    threads = [threading.Thread(target=check, args=("long", 0.5, 0)),
               threading.Thread(target=timer, args=("t0", 0.02)), threading.Thread(target=timer, args=("t1", 0.04)),
               threading.Thread(target=check, args=("short", 0.02, 0.25))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    assert events[:2] == ["short", "long"] and sorted(events[2:]) == ["t0", "t1"], events
    assert lock.phases == 1, lock.phases


def test_without_deferring_the_phase_drains_at_once(monkeypatch):
    monkeypatch.setattr(phases_mod, "LONG_HOLD_S", 0.1)
    lock = PhasedLock(batch=1, defer_s=0)
    events = _long_check_and_timer(lock)
    assert events[:4] == ["start long", "end long", "start timer", "end timer"], events
    assert lock.deferred_s == 0


def test_a_phase_defers_for_long_checks_at_most_defer_s(monkeypatch):
    """Timers never starve: past defer_s the phase opens and drains, and checks arriving then wait."""
    monkeypatch.setattr(phases_mod, "LONG_HOLD_S", 0.1)
    lock = PhasedLock(batch=1, defer_s=0.1)
    events = _long_check_and_timer(lock, short_at=(0.33, 0.5))
    # s0 came while the phase still deferred, s1 after it had opened: s1 waits for the timer
    assert events.index("end s0") < events.index("end long") < events.index("start timer") < events.index("start s1")
    assert 0.08 < lock.deferred_s < 0.3, lock.deferred_s


def test_a_check_that_steps_out_for_a_build_lets_a_timer_through_and_comes_back_after_it():
    """--build-hold release: a check building (nvcc) inside its call lets go of the device; a timer that
    asks meanwhile holds it at once, and the check takes it again only after the timer's phase."""
    lock, events = PhasedLock(batch=1), []

    def check():
        with lock.shared():
            events.append("check calls")
            with lock.stepped_out():
                events.append("build starts")
                time.sleep(0.3)
                events.append("build ends")
            events.append("check goes on")

    def timer():
        with lock.exclusive():
            events.append("timer starts")
            time.sleep(0.5)
            events.append("timer ends")

    c = threading.Thread(target=check)
    c.start()
    time.sleep(0.1)
    t = threading.Thread(target=timer)
    t.start()
    for th in (c, t):
        th.join(5)
    assert events == ["check calls", "build starts", "timer starts", "build ends", "timer ends", "check goes on"]
    assert lock.phases == 1 and lock.drain_s < 0.2  # nothing to drain: the check was out


def test_a_check_stepped_out_is_frozen_while_a_timing_phase_is_open():
    """--build-hold release does not trust the worker's word that its build launches nothing: a check
    stepped out when a phase opens is stopped until the phase closes; one that steps out while a phase
    is open is stopped at once, and let go of when its block ends."""
    lock, calls = PhasedLock(batch=1), []
    out, back = threading.Event(), threading.Event()

    def check(name, hold):
        with lock.shared():
            with lock.stepped_out(lambda stop: calls.append((name, stop))):
                out.set()
                hold.wait(5)

    def timer():
        """A timer holding the device from when it returns until ``go`` is set."""
        held, go = threading.Event(), threading.Event()

        def hold():
            with lock.exclusive():
                held.set()
                go.wait(5)

        th = threading.Thread(target=hold)
        th.start()
        assert held.wait(5)
        return th, go

    first_done = threading.Event()
    a = threading.Thread(target=check, args=("a", first_done))
    a.start()
    assert out.wait(5)
    t, timer_go = timer()
    assert calls == [("a", True)]  # the phase opened: a frozen
    out.clear()
    b = threading.Thread(target=check, args=("b", back))
    b.start()  # b takes the device only after the phase, so it steps out later
    timer_go.set()
    t.join(5)
    assert calls[:2] == [("a", True), ("a", False)], calls  # the phase closed: a continues
    assert out.wait(5)
    first_done.set()
    a.join(5)
    t2, t2_go = timer()
    assert calls[-1] == ("b", True), calls
    back.set()  # b's block ends while the phase is still open: it is let go of, then waits for the device
    time.sleep(0.1)
    assert calls[-1] == ("b", False), calls
    t2_go.set()
    for th in (t2, b):
        th.join(5)
    assert calls == [("a", True), ("a", False), ("b", True), ("b", False)], calls


def test_freeze_stops_and_continues_a_process_and_what_it_started(tmp_path):
    import subprocess

    from mkbench.procguard import freeze
    p = subprocess.Popen(["bash", "-c", "sleep 30 & wait"], start_new_session=True)
    try:
        time.sleep(0.3)

        def states():
            from mkbench.procguard import descendants
            return [open(f"/proc/{q}/stat").read().rsplit(")", 1)[1].split()[0] for q in [p.pid] + descendants(p.pid)]

        assert len(states()) == 2 and "T" not in states()
        freeze(p.pid, True)
        time.sleep(0.1)
        assert states() == ["T", "T"], states()
        freeze(p.pid, False)
        time.sleep(0.1)
        assert "T" not in states(), states()
    finally:
        import os
        import signal
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def _checks_and_timers(lock, timers_at, until):
    """Checks one after another (a lane's steps) until ``until`` seconds; timers ask at ``timers_at``.
    The order in which they held the device."""
    events, guard = [], threading.Lock()

    def log(what):
        with guard:
            events.append(what)

    def checks():
        t0 = time.monotonic()
        while time.monotonic() - t0 < until:
            with lock.shared():
                log("check")
                time.sleep(0.01)

    def timer(name, at):
        time.sleep(at)
        with lock.exclusive():
            log(f"start {name}")
            time.sleep(0.02)
            log(f"end {name}")

    threads = [threading.Thread(target=checks)]
    threads += [threading.Thread(target=timer, args=(f"t{i}", at)) for i, at in enumerate(timers_at)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(10)
    return events


def test_timers_gather_into_one_phase_while_checks_go_on():
    lock = PhasedLock(batch=3, gather_s=30)
    events = _checks_and_timers(lock, timers_at=(0.05, 0.15, 0.3), until=0.6)
    timed = [i for i, e in enumerate(events) if e != "check"]
    # the first two timers waited without draining the device: checks ran between their asking and the third's
    assert events[:timed[0]].count("check") > 10, events
    # one phase: the three units timed back to back, no check between them
    held = [events[i] for i in timed]
    assert all(a.replace("start", "end") == b for a, b in zip(held[::2], held[1::2])), events  # one at a time
    assert sorted(held[::2]) == ["start t0", "start t1", "start t2"], events
    assert timed == list(range(timed[0], timed[0] + 6)), events
    assert lock.phases == 1
    assert events[-1] == "check"  # checks resumed after the phase


def test_a_timing_phase_opens_after_the_gathering_time_or_when_the_device_is_idle():
    lock = PhasedLock(batch=5, gather_s=0.1)
    events = _checks_and_timers(lock, timers_at=(0.05,), until=0.5)
    start = events.index("start t0")
    assert 0 < start < len(events) - 2 and events[start + 1] == "end t0", events  # not held back until the checks end
    idle = PhasedLock(batch=5, gather_s=30)
    with idle.exclusive():  # nothing else wants the device: no gathering
        pass
    assert idle.phases == 1


class _Lane:
    def __init__(self, name):
        self.name, self.current, self.state = name, None, "idle"
        self.judge = self
        self.released = 0

    def release(self, timeout):  # the lane's judge lets go of the unit's memory
        self.released += 1


class _Worker:
    def __init__(self):
        self.child, self.clock = object(), {}

    def add(self, key, seconds):
        self.clock[key] = self.clock.get(key, 0.0) + seconds

    waited_for = add


def test_a_unit_waiting_to_be_timed_gives_its_lane_to_another_unit():
    a = _Lane("a")
    pool, parked = LanePool([a]), set()
    lease, worker = Lease(pool, parked), _Worker()
    assert lease.lane is a
    a.current = worker.child
    other = []
    with lease.away(worker, 1.0):
        assert lease.lane is None and worker.child in parked and a.current is None
        assert a.released == 1  # its judge holds nothing of the unit that left
        t = threading.Thread(target=lambda: other.append(Lease(pool, set())))
        t.start()
        t.join(5)
        assert other and other[0].lane is a  # one lane: the next unit starts on it meanwhile
        threading.Timer(0.2, other[0].release).start()
    assert lease.lane is a and a.current is worker.child and worker.child not in parked
    assert worker.clock["wait_lane"] >= 0.15 and worker.clock["without_lane"] >= worker.clock["wait_lane"]


def test_a_unit_coming_back_from_timing_takes_a_lane_before_a_new_unit():
    pool = LanePool([_Lane("a")])
    first = pool.take()
    order = []
    new = threading.Thread(target=lambda: order.append(("new", pool.take())))
    new.start()
    time.sleep(0.1)  # the new unit asks first
    back = threading.Thread(target=lambda: order.append(("back", pool.take(returning=True))))
    back.start()
    time.sleep(0.1)
    pool.give(first)
    back.join(5)
    assert [k for k, _ in order] == ["back"]
    pool.give(order[0][1])
    new.join(5)
    assert [k for k, _ in order] == ["back", "new"]


def test_units_not_started_take_a_lane_in_the_order_they_were_handed_over():
    pool = LanePool([_Lane("a")])
    tickets = [pool.ticket() for _ in range(3)]  # handed to the device in plan order
    first = pool.take()
    served = []

    def start(k):
        lane = pool.take(ticket=tickets[k])
        served.append(k)
        pool.give(lane)

    threads = [threading.Thread(target=start, args=(k,)) for k in (2, 0, 1)]  # their threads ask out of order
    for t in threads:
        t.start()
        time.sleep(0.05)
    pool.give(first)
    for t in threads:
        t.join(5)
    assert served == [0, 1, 2]


def test_a_unit_waiting_for_memory_gives_its_lane_to_a_unit_back_from_timing():
    """One lane, memory for one unit. A holds the memory and left its lane to be timed; B took the lane
    and asks for memory. B waits on the lane while nobody needs it, and gives it up once A is back
    from timing: had B kept it, A could never finish and free the memory (a resumed main job on an
    H200 sat six minutes at 0% so)."""
    pool, budget, done = LanePool([_Lane("a")]), MemoryBudget(100), []
    lease_a, worker_a = Lease(pool, set()), _Worker()
    room_a = budget.hold(100)
    room_a.__enter__()  # free at once: A keeps its lane until it leaves to be timed
    b_asks = threading.Event()
    leases_b = []

    def unit_a():
        with lease_a.away(worker_a, 1.0):  # timing, without a lane: B starts on it
            assert b_asks.wait(5)
            time.sleep(0.6)  # B is waiting for A's memory, on the lane: nobody else needs it
            done.append(("b waits on its lane", leases_b[0].lane is not None))
        done.append(("a", lease_a.lane is not None))  # A took a lane back: B let it go
        room_a.__exit__(None, None, None)
        lease_a.release()

    def unit_b():
        lease_b, worker_b = Lease(pool, set()), _Worker()
        leases_b.append(lease_b)
        b_asks.set()
        with budget.hold(100, lambda: lease_b.away(worker_b, 1.0), pool.wanted):
            done.append(("b", lease_b.lane is not None, "wait_lane" in worker_b.clock))
        lease_b.release()

    a = threading.Thread(target=unit_a, daemon=True)
    a.start()
    time.sleep(0.1)
    b = threading.Thread(target=unit_b, daemon=True)  # daemons: a deadlock fails the test, not the session
    b.start()
    a.join(10)
    b.join(10)
    assert done == [("b waits on its lane", True), ("a", True), ("b", True, True)], \
        "deadlock: a lane waited on memory a laneless unit held"


def test_units_timed_without_holding_a_lane_keep_their_verdicts(tmp_path, cli):
    kept, queued = tmp_path / "kept.sqlite", tmp_path / "queued.sqlite"
    _run(cli, kept, "--lanes", "1", "--timing-queue", "0", "--seed", "7")
    _run(cli, queued, "--lanes", "1", "--timing-queue", "2", "--seed", "7")
    assert _verdicts(kept) == _verdicts(queued)
    rows = [r for r in Store(queued).results() if r["verdict"] == "correct"]
    steps = [(r["extra"].get("unit_seconds") or {}).get("steps", {}) for r in rows]
    assert rows and all("without_lane" in st and "wait_lane" in st for st in steps)  # every unit timed left its lane


def test_a_phase_counts_its_drain_and_its_hold():
    lock = PhasedLock(batch=1, gather_s=30)
    entered = threading.Event()

    def check():
        with lock.shared():
            entered.set()
            time.sleep(0.2)

    t = threading.Thread(target=check)
    t.start()
    entered.wait(5)
    with lock.exclusive():  # waits for the check in flight: the phase's drain
        time.sleep(0.1)
    t.join()
    assert lock.phases == 1 and 0.1 <= lock.drain_s < 5 and 0.1 <= lock.held_s < 5


def test_memory_budget_admits_what_fits_and_runs_an_oversized_unit_alone():
    budget, inside, seen = MemoryBudget(100), [], []
    guard = threading.Lock()

    def unit(need):
        with budget.hold(need):
            with guard:
                inside.append(need)
                seen.append(list(inside))
            time.sleep(0.05)
            with guard:
                inside.remove(need)

    threads = [threading.Thread(target=unit, args=(n,)) for n in (60, 60, 30, 500)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(5)
    for admitted in seen:
        assert admitted == [500] or (500 not in admitted and sum(admitted) <= 100), seen
    assert budget.used == 0


def test_parallel_lanes_give_the_same_verdicts_as_one(tmp_path, cli):
    one, four = tmp_path / "one.sqlite", tmp_path / "four.sqlite"
    _run(cli, one, "--lanes", "1", "--workers", "1", "--seed", "7")
    _run(cli, four, "--lanes", "4", "--workers", "2", "--seed", "7")
    assert _verdicts(one) == _verdicts(four)
    assert {v for *_, v in _verdicts(four)} == {"correct"}


def test_baselines_are_measured_once_per_environment(tmp_path, cli):
    store = tmp_path / "s.sqlite"
    _run(cli, store, "--seed", "1", tasks="gelu")
    sol = tmp_path / "sol" / "activation"
    sol.mkdir(parents=True)
    (sol / "gelu.py").write_text((ROOT / "backends" / "triton" / "kernels" / "activation" / "gelu.py").read_text())
    _run(cli, store, "--solutions", tmp_path / "sol", "--method", "second", tasks="gelu")
    rows = [r for r in Store(store).results() if r["backend"] == "eager" and r["verdict"] != "skipped"]
    first, second = [r for r in rows if r["run_id"] == 1], [r for r in rows if r["run_id"] == 2]
    assert first and second
    assert all("baseline_cache" not in r["extra"] for r in first)
    assert all(r["extra"]["baseline_cache"]["measured_in_run"] == 1 for r in second)
    assert [r["time_median_us"] for r in first] == [r["time_median_us"] for r in second]
    # the candidate of the second run has its speedup from the cached baseline
    cand = [r for r in Store(store).results([2]) if r["method"] == "second" and r["verdict"] == "correct"]
    assert cand and all(r["speedup_eager"] is None for r in cand)  # interpreted: times recorded, never speed
    _run(cli, store, "--no-baseline-cache", "--solutions", tmp_path / "sol", "--method", "third", tasks="gelu")
    third = [r for r in Store(store).results([3]) if r["backend"] == "eager" and r["verdict"] != "skipped"]
    assert third and all("baseline_cache" not in r["extra"] for r in third)


def test_a_live_owner_keeps_its_run_and_a_dead_one_loses_it(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    run = store.start_run("k", {}, "cpu", "triton", "m", {"host": "x"}, {}, 1, owner="otherhost:1")
    with pytest.raises(RunOwned, match="is being run by otherhost:1"):
        store.claim_run(run, "me:2")
    store.db.execute("UPDATE runs SET heartbeat=0 WHERE id=?", (run,))  # its heartbeat went stale
    store.db.commit()
    store.claim_run(run, "me:2")
    assert store.run(run).owner == "me:2"
    with pytest.raises(RunOwned, match="taken over by me:2"):
        store.record_unit(run, "t", "b", "m", [], owner="otherhost:1")  # the old owner may write no more


def test_prepare_pool_marks_unreadable_candidates_invalid(tmp_path, cli):
    import os
    sol = tmp_path / "sol" / "activation"
    sol.mkdir(parents=True)
    os.symlink(sol / "gelu.py", sol / "gelu.py.tmp")
    os.replace(sol / "gelu.py.tmp", sol / "gelu.py")  # gelu.py -> itself: a symlink loop
    (sol / "elu.py").write_text("def kernel_function(x)\n    return x\n")  # a syntax error
    code, _, err = cli("run", "--solutions", tmp_path / "sol", "--task", "gelu,elu", "--baselines", "none",
                       "--seeds", "1", "--shape-role", "small", "--store", tmp_path / "s.sqlite", "--no-progress")
    assert code == 3, err
    rows = {r["task"]: r for r in Store(tmp_path / "s.sqlite").results() if r["verdict"] != "skipped"}
    assert rows["gelu"]["verdict"] == "compile_error" and "symlink loop" in rows["gelu"]["error"]
    assert rows["elu"]["verdict"] == "compile_error" and "syntax error" in rows["elu"]["error"]


@pytest.mark.slow
def test_ray_executor_on_a_local_instance(tmp_path, cli):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        local, distributed = tmp_path / "local.sqlite", tmp_path / "ray.sqlite"
        _run(cli, local, "--seed", "3", "--lanes", "2")
        _run(cli, distributed, "--seed", "3", "--lanes", "2", "--executor", "ray", "--timing-defer", "3",
             "--timing-queue", "1")
        assert _verdicts(local) == _verdicts(distributed)
        run = Store(distributed).runs()[0]
        assert run.env["engine"]["executor"] == "ray" and run.status == "finished"
        assert run.env["engine"]["timing_defer_s"] == 3 and run.env["engine"]["timing_queue"] == 1
    finally:
        ray.shutdown()


def test_a_device_takes_its_sharing_settings_or_its_defaults():
    from mkbench.engine.phases import DEFAULT_DEFER_S, DEFAULT_GATHER_S, default_timing_batch
    from mkbench.engine.settings import Sharing
    given = Device("cpu", None, 4, {}, sharing=Sharing(timing_batch=3, timing_queue=-2, timing_gather_s=0.5,
                                                      timing_defer_s=7.0))
    assert (given._lock.batch, given._lock.gather_s, given._lock.defer_s) == (3, 0.5, 7.0)
    assert given.timing_queue == 0 and given.slots == 4  # a negative queue is none
    default = Device("cpu", None, 4, {})
    # a phase defers for long checks on a GPU (measured there); on the CPU it drains at once
    assert (default._lock.batch, default._lock.gather_s, default._lock.defer_s) == \
        (default_timing_batch(4), DEFAULT_GATHER_S, 0.0)
    assert default.timing_queue == 4 and default.slots == 8
    gpu = Device("cuda", None, 4, {})
    assert gpu._lock.defer_s == DEFAULT_DEFER_S == 30.0
    assert Device("cuda", None, 4, {}, sharing=Sharing(timing_defer_s=0.0))._lock.defer_s == 0.0
    for d in (given, default, gpu):
        d.close(kill=True)


def test_memory_budget_serves_a_large_unit_before_smaller_ones_that_asked_later():
    """First come, first served: 60 is held, 50 waits; 30s asking after it would fit beside the 60
    and, admitted whenever room came free, kept the 50 waiting for as long as they kept coming (an
    H200 main job's linear_cross_entropy waited 298 s so). They wait until the 50 is in, or fits
    beside them."""
    budget, order, guard = MemoryBudget(100), [], threading.Lock()
    first = budget.hold(60)
    first.__enter__()

    def unit(need, hold_s):
        with budget.hold(need):
            with guard:
                order.append(need)
            time.sleep(hold_s)

    large = threading.Thread(target=unit, args=(50, 0.05), daemon=True)
    large.start()
    time.sleep(0.1)  # the 50 is in line
    small = [threading.Thread(target=unit, args=(30, 0.2), daemon=True) for _ in range(3)]
    for th in small:
        th.start()
    time.sleep(0.2)
    assert order == [], "a later unit took the room the 50 waits for"
    first.__exit__(None, None, None)
    for th in [large, *small]:
        th.join(5)
    assert 50 in order[:2] and sorted(order) == [30, 30, 30, 50]  # one 30 fits beside it, not two
    assert budget.used == 0 and not budget._waiting


def test_a_unit_that_stops_waiting_for_memory_leaves_the_line():
    budget = MemoryBudget(100)
    held = budget.hold(100)
    held.__enter__()

    class Stop(Exception):
        pass

    def give_up():
        raise Stop

    with pytest.raises(Stop):
        with budget.hold(80, while_waiting=give_up, give_way=lambda: True):
            pass
    held.__exit__(None, None, None)
    assert not budget._waiting
    with budget.hold(30):  # nobody is in line before it
        assert budget.used == 30



def test_a_multi_gpu_host_shares_its_lanes_among_its_gpus(tmp_path, monkeypatch):
    """`--gpus all` on a 64-core host with 4 GPUs: one Device per GPU, 4 lanes each (the host's 16), where
    12 per GPU made every CUDA start and driver allocation queue; `--lanes` still says it outright."""
    from types import SimpleNamespace

    from mkbench.engine import runner as runner_mod
    from mkbench.plugins import build_registry

    monkeypatch.setattr(runner_mod.os, "cpu_count", lambda: 64)
    hw = SimpleNamespace(device="cuda")
    said_lines = []
    progress = runner_mod.Progress()
    progress.log = said_lines.append
    r = runner_mod.Runner(build_registry(), Store(tmp_path / "s.sqlite"), runner_mod.RunOptions(gpus="all"), progress)
    devices = r._devices(hw, {"device_count": 4, "memory_bytes": 80 << 30}, ())
    assert [d.name for d in devices] == ["cuda:0", "cuda:1", "cuda:2", "cuda:3"]
    assert [len(d.lanes) for d in devices] == [4, 4, 4, 4]
    assert said_lines == ["4 GPUs, 4 lanes each: the host's 16 lanes shared (CUDA starts queue host-wide; "
                          "--lanes N per GPU to change)"]
    one = runner_mod.Runner(build_registry(), Store(tmp_path / "t.sqlite"), runner_mod.RunOptions(gpus="1"))
    assert [len(d.lanes) for d in one._devices(hw, {"device_count": 4}, ())] == [12]
    said = runner_mod.Runner(build_registry(), Store(tmp_path / "u.sqlite"), runner_mod.RunOptions(gpus="all", lanes=9))
    assert [len(d.lanes) for d in said._devices(hw, {"device_count": 2}, ())] == [9, 9]


def test_a_slow_stop_says_where_each_thread_is(capsys):
    import threading

    from mkbench.engine.runner import report_slow_stop
    release = threading.Event()

    def waiting_for_a_lane_that_never_comes():
        release.wait(10)

    t = threading.Thread(target=waiting_for_a_lane_that_never_comes, name="lane-3")
    t.start()
    try:
        report_slow_stop(0.01).join(5)
    finally:
        release.set()
        t.join()
    err = capsys.readouterr().err
    assert "still stopping" in err and "-- thread lane-3" in err and "waiting_for_a_lane_that_never_comes" in err


def test_closing_a_device_tells_every_process_before_it_waits_for_any(monkeypatch):
    """Each judge's exit (its CUDA context torn down) and each killed worker's took seconds on a GPU:
    waited for one at a time, runs stopped on an H100 took 50-60 s to end."""
    from mkbench.engine.device import Device
    events = []

    class FakeChild:
        def __init__(self, name):
            self.name = name

        def send_kill(self):
            events.append(f"kill {self.name}")

        def kill(self):
            events.append(f"wait {self.name}")

    class FakeJudge:
        def __init__(self, name):
            self.name = name

        def ask_stop(self):
            events.append(f"stop {self.name}")

        def close(self):
            events.append(f"wait {self.name}")

    d = Device("cpu", None, 3, {})
    for k, lane in enumerate(d.lanes):
        lane.judge = FakeJudge(f"judge{k}")
        lane.current = FakeChild(f"worker{k}") if k != 1 else None
    d._parked.add(FakeChild("parked"))
    d.close(kill=True)
    told = [e for e in events if not e.startswith("wait")]
    waited = [e for e in events if e.startswith("wait")]
    assert events == told + waited  # every process told before any is waited for
    assert sorted(told) == ["kill parked", "kill worker0", "kill worker2", "stop judge0", "stop judge1", "stop judge2"]
    assert sorted(waited) == ["wait judge0", "wait judge1", "wait judge2", "wait parked", "wait worker0",
                              "wait worker2"]
    assert all(lane.closing for lane in d.lanes)


def test_a_worker_starts_under_the_shared_hold_and_waits_for_an_open_timing_phase():
    """A worker's setup makes its CUDA context, which takes the host's driver: it waits for a timing
    phase that is open, like a check, and its wait is booked as ``wait_shared``."""
    from mkbench.engine.lane import start_worker

    lock, seen = PhasedLock(batch=1, defer_s=0), []

    class Device:
        def shared(self):
            return lock.shared()

    class Session:
        clock: dict = {}

        def expect(self, request, timeout, answer, sent=False):
            seen.append((request["op"], lock._writer, lock._readers))
            return {"ok": True}

        def waited_for(self, step, seconds):
            self.clock[step] = self.clock.get(step, 0.0) + seconds

    timed = threading.Event()

    def timer():
        with lock.exclusive():
            timed.set()
            time.sleep(0.3)

    t = threading.Thread(target=timer, daemon=True)
    t.start()
    assert timed.wait(5)
    w = Session()
    assert start_worker(Device(), w, {"op": "setup"}, 5.0) == {"ok": True}
    t.join(5)
    assert seen == [("setup", False, 1)]  # after the timer, inside a shared hold
    assert w.clock["wait_shared"] >= 0.2
