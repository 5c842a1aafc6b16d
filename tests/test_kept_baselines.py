"""Trusted baselines' workers kept between units (:mod:`mkbench.engine.kept`): an eager baseline's worker
serves the next baseline unit of its environment, after letting go of its unit; a candidate's never does."""

from __future__ import annotations

from types import SimpleNamespace

from mkbench.engine import device as device_mod
from mkbench.engine import kept as kept_mod
from mkbench.engine.kept import BaselineWorkers, keeps_worker
from mkbench.store import Store


class _Session:
    def __init__(self, pid: int, reset_ok: bool = True):
        self.child = SimpleNamespace(pid=pid)
        self.reset_ok, self.stopped, self.requests, self.renewals = reset_ok, False, [], 0
        self.reserved = 32 << 20  # what an eager worker keeps after its reset: cuBLAS's workspaces

    def alive(self):
        return not self.stopped

    def stop(self):
        self.stopped = True

    def request(self, cmd, timeout):
        self.requests.append(cmd["op"])
        return {"kind": "reset", "reserved_bytes": self.reserved} if self.reset_ok else {"kind": "failed"}

    def renewed(self, unit_limit):
        self.renewals += 1
        return self


def _starter(started: list):
    def start(env, log):
        session = _Session(len(started) + 1)
        started.append((env, log, session))
        return session
    return start


ENV = {"CUDA_VISIBLE_DEVICES": "0", "TRITON_CACHE_DIR": "/c/eager", "TORCH_EXTENSIONS_DIR": "/c/ext/gelu__eager-1"}


def test_a_clean_unit_leaves_its_worker_for_the_next_unit_of_its_environment(tmp_path):
    pool, started = BaselineWorkers(2), []
    first = pool.take(_starter(started), ENV, tmp_path / "gelu__eager.log", 900.0)
    # the worker's own build folder and log, not the unit's
    env, log, _ = started[0]
    assert env["TORCH_EXTENSIONS_DIR"] == "/c/ext/baseline-worker-1" and log.parent.name == "baseline-workers"
    pool.give(first, clean=True, unit_log=tmp_path / "gelu__eager.log")
    assert first.session.requests == ["reset"] and not first.session.stopped
    # another unit's build folder is not part of the key: the same worker, renewed for its unit
    second = pool.take(_starter(started), dict(ENV, TORCH_EXTENSIONS_DIR="/c/ext/silu__eager-2"), None, 900.0)
    assert second is first and first.session.renewals == 1 and len(started) == 1
    # another environment (another GPU) starts its own
    other = pool.take(_starter(started), dict(ENV, CUDA_VISIBLE_DEVICES="1"), None, 900.0)
    assert other is not first and len(started) == 2
    assert pool.counts() == {"started": 2, "units": 1, "holding": 0}


def test_a_worker_is_not_kept_after_an_unclean_unit_a_failed_reset_memory_left_or_its_last_unit(tmp_path, monkeypatch):
    pool, started = BaselineWorkers(4), []
    unclean = pool.take(_starter(started), ENV, None, None)
    pool.give(unclean, clean=False, unit_log=None)
    assert unclean.session.stopped and unclean.session.requests == []
    stuck = pool.take(_starter(started), ENV, None, None)
    stuck.session.reset_ok = False
    pool.give(stuck, clean=True, unit_log=None)
    assert stuck.session.stopped
    # a unit that left device memory allocated (a module-level tensor): its worker would hold it outside
    # the memory budget while idle
    holding = pool.take(_starter(started), ENV, None, None)
    holding.session.reserved = kept_mod.RESERVED_MAX + 1
    pool.give(holding, clean=True, unit_log=None)
    assert holding.session.requests == ["reset"] and holding.session.stopped
    assert pool.counts()["holding"] == 1  # said in the session table (clock.kept_text)
    monkeypatch.setattr(kept_mod, "WORKER_UNITS", 2)
    worn = pool.take(_starter(started), ENV, None, None)
    pool.give(worn, clean=True, unit_log=None)
    assert pool.take(_starter(started), ENV, None, None) is worn
    pool.give(worn, clean=True, unit_log=None)  # its second unit: the last
    assert worn.session.stopped and pool.idle_children() == []


def test_idle_workers_are_bounded_and_stopped_when_the_device_closes():
    pool, started = BaselineWorkers(1), []
    a = pool.take(_starter(started), ENV, None, None)
    b = pool.take(_starter(started), ENV, None, None)  # a is busy: a second worker
    pool.give(a, clean=True, unit_log=None)
    pool.give(b, clean=True, unit_log=None)
    assert a.session.stopped and not b.session.stopped  # one idle at most: the oldest goes
    pool.close()
    assert b.session.stopped and pool.idle_children() == []
    c = pool.take(_starter(started), ENV, None, None)
    pool.give(c, clean=True, unit_log=None)
    assert c.session.stopped  # none kept once closed


def test_only_a_baseline_that_says_so_keeps_its_worker():
    from mkbench.plugins import build_registry
    backends = build_registry().backends
    task, stateful = SimpleNamespace(stateful_reference=None), SimpleNamespace(stateful_reference="a running mean")
    assert keeps_worker(SimpleNamespace(backend=backends["eager"], task=task))
    assert not keeps_worker(SimpleNamespace(backend=backends["eager"], task=stateful))
    assert not keeps_worker(SimpleNamespace(backend=backends["torch_compile"], task=task))
    candidate = SimpleNamespace(is_baseline=False, reuse_worker=True)  # a candidate's backend cannot opt in
    assert not keeps_worker(SimpleNamespace(backend=candidate, task=task))


def test_the_worker_lets_go_of_its_unit_for_the_next():
    from mkbench.worker import Steps
    steps = Steps()
    steps.job, steps.fn, steps.held, steps.start_seconds = {"task": 1}, len, [object()], {"cuda_init": 0.3}
    assert steps.reset({"op": "reset"})["kind"] == "reset"
    assert steps.job is None and steps.fn is None and steps.held == [] and steps.start_seconds == {}


def test_a_run_serves_several_baseline_units_with_one_worker_and_keeps_its_verdicts(tmp_path, cli, monkeypatch):
    devices, real = [], device_mod.Device.__init__

    def init(self, *args, **kwargs):
        real(self, *args, **kwargs)
        devices.append(self)
    monkeypatch.setattr(device_mod.Device, "__init__", init)
    store = tmp_path / "s.sqlite"
    code, out, err = cli("run", "--task", "gelu", "--task", "silu", "--task", "add_layernorm", "--baselines", "eager",
                         "--seeds", "1", "--shape-role", "small", "--dtype", "float32", "--time-budget-ms", "5",
                         "--lanes", "1", "--store", store, "--no-progress")
    assert code == 0, err
    rows = [r for r in Store(store).results() if r["verdict"] != "skipped"]
    assert sorted((r["task"], r["method"], r["verdict"]) for r in rows) == [
        (t, m, "correct") for t in ("add_layernorm", "gelu", "silu") for m in ("eager", "reference")]
    counts = devices[0].baseline_workers.counts()
    assert counts["units"] == 3 and counts["started"] < 3, counts
    logs = tmp_path / "s-logs" / "run1"
    for task in ("add_layernorm", "gelu", "silu"):
        # each baseline unit's log has what its worker printed for it; a candidate's worker is its own
        assert "--- baseline worker: worker" in (logs / f"{task}__eager.log").read_text()
        assert "baseline worker" not in (logs / f"{task}__reference.log").read_text()


def test_the_session_table_says_how_many_workers_served_how_many_units_and_how_many_held_memory():
    from mkbench.engine.clock import kept_text
    assert kept_text({"started": 49, "units": 192, "holding": 0}) == "49 for 192 units"
    assert kept_text({"started": 5, "units": 67, "holding": 2}) == "5 for 67 units; 2 stopped holding memory"
    assert kept_text({"started": 3, "units": 9}) == "3 for 9 units"  # a session recorded before the count
    assert kept_text(None) == "-" and kept_text({"started": 0, "units": 0}) == "-"


def test_the_run_adds_up_every_devices_counts_the_memory_holders_among_them():
    from mkbench.engine.local import LocalExecutor
    devices = []
    for holding in (0, 2):
        pool = BaselineWorkers(1)
        pool.started, pool.units, pool.holding = 3, 9, holding
        devices.append(SimpleNamespace(baseline_workers=pool))
    assert LocalExecutor.baseline_workers(SimpleNamespace(devices=devices)) == {"started": 6, "units": 18, "holding": 2}
    assert LocalExecutor.baseline_workers(SimpleNamespace(devices=[])) == {}
