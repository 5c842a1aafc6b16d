"""The compile-ahead call (``Backend.prewarm``): made in a throwaway worker on shape-only inputs,
before the unit holds the device, and never seen by the evaluation."""

import json
import os
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from mkbench import plugins

# Records what the compile-ahead call saw; in the evaluated worker that record must be empty, or the
# call ran in the process being evaluated (a buffer it kept would then reach the verdict).
CANDIDATE = '''
import builtins
import torch
_SEEN = []

def kernel_function(x):
    if getattr(builtins, "_mkbench_test_prewarming", False):
        _SEEN.append(x.device.type)
        print("compile-ahead call on", x.device.type, tuple(x.shape), flush=True)
        return x
    assert not _SEEN, f"the compile-ahead call ran in the evaluated worker: {_SEEN}"
    return torch.nn.functional.silu(x)
'''


@pytest.fixture
def prewarm_backend():
    import prewarm_backend as module
    plugins.register_plugin(module, name="prewarm_test")
    yield module
    plugins.unregister_plugin("prewarm_test")


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_prewarm_runs_on_meta_inputs_in_a_throwaway_worker(tmp_path, cli, prewarm_backend, executor, monkeypatch):
    """Locally the compile ahead is a stage of its own, before a lane takes the unit (its seconds are
    not lane time); a Ray actor has no such stage, and its lane compiles ahead itself."""
    if executor == "ray":
        pytest.importorskip("ray")
        # the local Ray instance's processes must import this test's backend plugin, as workers do
        path = [str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))
    sol = tmp_path / "sol" / "activation"
    sol.mkdir(parents=True)
    (sol / "silu.py").write_text(CANDIDATE)
    store = tmp_path / "r.sqlite"
    code, out, err = cli("run", "--backend", "prewarm_test", "--hw", "cpu", "--solutions", tmp_path / "sol",
                         "--task", "silu", "--shape-role", "small", "--dtype", "float32", "--seeds", "1",
                         "--baselines", "none", "--no-timing", "--store", store, "--json", tmp_path / "r.json",
                         "--no-progress", "--executor", executor, "--compile-workers", "2")
    assert code == 0, err
    rows = [r for r in json.loads((tmp_path / "r.json").read_text())["results"] if r["verdict"] != "skipped"]
    assert rows
    for r in rows:
        assert r["correct_status"] == "correct", r["error"]
        extra = r["extra"] if isinstance(r["extra"], dict) else json.loads(r["extra"])
        step = "compile_ahead" if executor == "local" else "prewarm"
        assert extra["unit_seconds"]["steps"][step] > 0, extra["unit_seconds"]
        # the throwaway worker's CPU seconds beside its wall seconds, read from /proc
        if os.path.exists("/proc/self/stat"):
            assert 0 < extra["unit_seconds"]["steps"]["cpu_compile_ahead"], extra["unit_seconds"]
        # its parts (the worker's start, the candidate's import, the compile-only calls): each within
        # the whole, together no more than it
        from mkbench.engine.clock import COMPILE_AHEAD_PARTS
        parts = [extra["unit_seconds"]["steps"][p] for p in COMPILE_AHEAD_PARTS]
        assert all(p > 0 for p in parts), extra["unit_seconds"]
        assert sum(parts) <= extra["unit_seconds"]["steps"][step] + 0.01, extra["unit_seconds"]
        if executor == "local":  # the wait for a compile-ahead worker, apart from the work
            assert extra["unit_seconds"]["steps"]["compile_queue"] >= 0, extra["unit_seconds"]
    (env,) = sqlite3.connect(store).execute("select env from runs").fetchone()
    assert json.loads(env)["engine"]["compile_workers"] == 2  # recorded with the run, whichever executor
    logs = list(tmp_path.glob("r-logs/**/silu__*.log"))
    assert logs, list(tmp_path.rglob("*.log"))
    text = logs[0].read_text()
    assert "compile-ahead call on meta" in text
    assert f"prewarm: {len(rows)} combination(s) compiled ahead; 0 skipped" in text


def test_meta_inputs_have_the_shapes_dtypes_and_strides_of_inputs_drawn_for_real():
    """generate_meta draws on the meta device (computing nothing: a float64 QR per batch once took a
    compile-ahead worker to its limit); for every task the result matches the draws made on the CPU
    and moved to meta, which is what it did before, where those could be made at all."""
    import torch

    from mkbench import inputs as io
    from mkbench.plugins import build_registry
    from mkbench.task import DTYPES

    def signature(values):
        return [(tuple(v.shape), v.dtype, v.stride(), v.device.type) if isinstance(v, torch.Tensor) else v
                for v in values]

    reg = build_registry()
    drawn_on_meta = 0
    for name in sorted(reg.tasks):
        task = reg.task(name)
        shape = next(s for s in task.shapes if s.role == "small")
        for dtype in task.dtypes:
            with torch.device("meta"):
                try:
                    on_cpu = task.make_inputs(shape, DTYPES[dtype], torch.Generator().manual_seed(0))
                except (RuntimeError, NotImplementedError):
                    continue  # meta tensors mixed with CPU values: nothing to compare with
            expected = signature(tuple(v.to("meta") if isinstance(v, torch.Tensor) else v for v in on_cpu))
            assert signature(io.generate_meta(task, shape, dtype)) == expected, (name, dtype)
        with torch.device("meta"):
            try:
                task.make_inputs(shape, DTYPES[task.dtypes[0]], io._MetaGenerator().manual_seed(0))
                drawn_on_meta += 1
            except (RuntimeError, NotImplementedError):  # .item(), bincount: the CPU fallback
                pass
    assert drawn_on_meta >= 150, drawn_on_meta  # most tasks compute nothing to be shaped


class _Load:
    def __init__(self, busy):
        self.value = busy

    def busy(self):
        return self.value


def test_compile_pool_runs_its_floor_always_and_more_only_on_a_host_with_cores_to_spare():
    from mkbench.engine.compile_ahead import BUSY_LIMIT, Gate
    now = [100.0]
    load = _Load(0.95)
    gate = Gate(2, 4, load, ramp_s=2.0, clock=lambda: now[0])
    held = [gate.slot(), gate.slot()]
    for s in held:
        s.__enter__()  # the floor: whatever the host's load
    assert gate.running == 2 and not gate.may_start()  # busy host: no third
    load.value = None
    assert not gate.may_start()  # unknown load: the floor only
    load.value = BUSY_LIMIT - 0.1
    assert gate.may_start()
    third = gate.slot()
    third.__enter__()
    assert gate.running == 3 and not gate.may_start()  # one more at most every ramp_s
    now[0] += 2.5
    assert gate.may_start()
    fourth = gate.slot()
    fourth.__enter__()
    now[0] += 10
    assert gate.running == gate.peak == 4 and not gate.may_start()  # the ceiling
    for s in (fourth, third, *held):
        s.__exit__(None, None, None)
    assert gate.running == 0 and gate.peak == 4


def test_compile_pool_of_a_fixed_size_never_reads_the_host():
    from mkbench.engine.compile_ahead import Gate
    gate = Gate(3, 3)
    assert gate.load is None and gate.ceiling == 3


def test_host_load_is_the_busy_share_between_samples_a_window_apart():
    from mkbench.engine.compile_ahead import HostLoad
    samples = iter([{"busy": 0, "total": 0, "at": 0.0}, {"busy": 50, "total": 100, "at": 0.5},
                    {"busy": 180, "total": 200, "at": 1.2}, {"busy": 181, "total": 210, "at": 1.5}])
    load = HostLoad(lambda: next(samples), window=1.0)
    assert load.busy() is None  # under a window since the first sample: nothing measured yet
    assert load.busy() == 0.9  # 180 of 200 jiffies busy, over 1.2 s
    assert load.busy() == 0.9  # the next window has not passed: the last share



def _run_silu(tmp_path, cli, source: str, *options) -> tuple[dict, dict]:
    """``source`` as the prewarm_test backend's silu candidate, checked on the CPU (small shapes, float32,
    no timing, no baseline) with ``options``, every row correct: the first row's unit steps and the run's
    engine configuration."""
    sol = tmp_path / "sol" / "activation"
    sol.mkdir(parents=True)
    (sol / "silu.py").write_text(source)
    code, out, err = cli("run", "--backend", "prewarm_test", "--hw", "cpu", "--solutions", tmp_path / "sol",
                         "--task", "silu", "--shape-role", "small", "--dtype", "float32",
                         "--baselines", "none", "--no-timing", "--store", tmp_path / "r.sqlite",
                         "--json", tmp_path / "r.json", "--no-progress", *options)
    assert code == 0, err
    rows = [r for r in json.loads((tmp_path / "r.json").read_text())["results"] if r["verdict"] != "skipped"]
    assert rows and all(r["correct_status"] == "correct" for r in rows), rows
    extra = rows[0]["extra"] if isinstance(rows[0]["extra"], dict) else json.loads(rows[0]["extra"])
    (env,) = sqlite3.connect(tmp_path / "r.sqlite").execute("select env from runs").fetchone()
    return extra["unit_seconds"]["steps"], json.loads(env)["engine"]


@pytest.mark.parametrize("mode, backend_default, step", [
    ("lane", "pool", "prewarm"),       # --compile-ahead lane: in the unit's own lane (lane time)
    ("backend", "lane", "prewarm"),    # the backend's choice (the cuda backend's)
    ("pool", "lane", "compile_ahead"),  # the option overrides the backend
    ("off", "pool", None),             # nowhere: the first call compiles
])
def test_compile_ahead_runs_where_the_option_or_the_backend_says(tmp_path, cli, prewarm_backend, monkeypatch,
                                                                 mode, backend_default, step):
    monkeypatch.setattr(prewarm_backend.PrewarmBackend, "compile_ahead", backend_default)
    steps, engine = _run_silu(tmp_path, cli, CANDIDATE, "--seeds", "1", "--compile-ahead", mode)
    for name in ("prewarm", "compile_ahead"):
        assert (name in steps) == (name == step), steps
    text = next(tmp_path.glob("r-logs/**/silu__*.log")).read_text()
    assert ("compile-ahead call on meta" in text) == (step is not None), text[-2000:]
    assert engine["compile_ahead"] == mode


# A candidate that builds inside its first call, as a CUDA-L1 kernel builds its load_inline extension in
# its first forward: the build is host work (mkbench.worker.host_work, which load_inline's wrapper uses)
BUILDS_IN_ITS_CALL = '''
import time
import torch
from mkbench.worker import host_work
_BUILT = []

def kernel_function(x):
    if not _BUILT:
        with host_work("test build"):
            time.sleep(0.3)
            _BUILT.append(1)
    return torch.nn.functional.silu(x)
'''


@pytest.mark.parametrize("hold", ["keep", "release"])
def test_a_build_inside_a_call_steps_out_of_the_device_hold_only_when_asked(tmp_path, cli, prewarm_backend, hold):
    steps, engine = _run_silu(tmp_path, cli, BUILDS_IN_ITS_CALL, "--seeds", "2", "--compile-ahead", "off",
                              "--build-hold", hold)
    if hold == "release":
        # the build, timed apart from the call's own seconds (the time it held the device), which it is not in
        assert steps["host_work"] >= 0.3 > steps["run_traced"], steps
    else:
        assert "host_work" not in steps and steps["run_traced"] >= 0.3, steps
    assert engine["build_hold"] == hold


@pytest.mark.parametrize("harness_in_call, where", [(False, "pool"), (True, None)])
def test_a_harness_run_inside_the_call_is_not_compiled_ahead(harness_in_call, where):
    """A KernelBench-X harness reads its seed from the inputs (``seed.item()``): on shape-only inputs the
    compile-ahead call can only fail, so its unit is not queued for one."""
    from mkbench.engine import compile_ahead
    from mkbench.plugins import build_registry
    reg = build_registry()
    unit = SimpleNamespace(backend=reg.backend("triton"), source="x.py", compile_only=None, hw=reg.hardware["h100"],
                           task=SimpleNamespace(harness_in_call=harness_in_call))
    assert compile_ahead.where(unit) == where



def _candidate(op: str) -> str:
    """CANDIDATE's shape for another activation: it prints on the compile-ahead call and checks that the
    call never ran in the evaluated worker."""
    return CANDIDATE.replace("torch.nn.functional.silu(x)", f"torch.nn.functional.{op}(x)")


def test_the_pool_keeps_its_worker_for_the_next_unit_and_each_log_gets_its_own_part(tmp_path, cli, prewarm_backend):
    """One compile-ahead worker at a time, two candidates of one method: the second is compiled in the
    worker the first was (its start is not paid twice), and each unit's log still holds what the worker
    printed while compiling it, never the other's."""
    sol = tmp_path / "sol" / "activation"
    sol.mkdir(parents=True)
    (sol / "silu.py").write_text(CANDIDATE)
    (sol / "elu.py").write_text(_candidate("elu"))
    code, out, err = cli("run", "--backend", "prewarm_test", "--hw", "cpu", "--solutions", tmp_path / "sol",
                         "--task", "silu,elu", "--shape-role", "small", "--dtype", "float32", "--seeds", "1",
                         "--baselines", "none", "--no-timing", "--store", tmp_path / "r.sqlite",
                         "--json", tmp_path / "r.json", "--no-progress", "--compile-workers", "1",
                         "--compile-ahead", "pool")
    assert code == 0, err
    rows = [r for r in json.loads((tmp_path / "r.json").read_text())["results"] if r["verdict"] != "skipped"]
    assert {r["task"] for r in rows} == {"silu", "elu"}
    assert all(r["correct_status"] == "correct" for r in rows), rows
    (env,) = sqlite3.connect(tmp_path / "r.sqlite").execute("select env from runs").fetchone()
    (session,) = json.loads(env)["engine_clock"]["sessions"]
    assert session["compile_pool"]["started"] == 1 and session["compile_pool"]["units"] == 2, session
    served = set()
    for task in ("silu", "elu"):
        text = next(tmp_path.glob(f"r-logs/**/{task}__*.log")).read_text()
        head = text.index("--- compile ahead: worker")
        served.add(text[head:].split("its unit ", 1)[1].split(" ", 1)[0])
        part = text[head:]
        assert "compile-ahead call on meta" in part, text[-2000:]
        other = "elu" if task == "silu" else "silu"
        assert f"activation/{other}" not in part and f"{other}.py" not in part, part
    assert served == {"1", "2"}, served


class _FakeChild:
    def __init__(self, session):
        self.pid, self.session = 1000 + len(session.started), session

    def kill(self):
        self.session.killed = True


class _FakeSession:
    """Stands in for a compile-ahead worker: what it was started with, whether it was stopped or killed."""
    started: list = []

    def __init__(self, env, log, memory_mb, modules, confine):
        self.env, self.stopped, self.killed = env, False, False
        self.child = _FakeChild(self)
        self.started.append(self)

    def cpu(self):
        return 1.0

    def alive(self):
        return not self.killed

    def stop(self):
        self.stopped = True


def test_the_pool_reuses_a_worker_only_for_its_environment_and_replaces_it_after_a_bad_unit(monkeypatch):
    from mkbench.engine import compile_ahead
    _FakeSession.started = []
    outcome = {}  # unit name -> whether compile_in says the worker may serve another unit
    monkeypatch.setattr(compile_ahead, "WorkerSession", _FakeSession)
    monkeypatch.setattr(compile_ahead, "compile_in",
                        lambda w, unit, settings, since, cpu_before=0.0: ({"compile_ahead": 0.1}, outcome[unit.name]))
    monkeypatch.setattr(compile_ahead, "WORKER_UNITS", 3)
    pool = compile_ahead.CompileAhead([{"CUDA_VISIBLE_DEVICES": "0"}, {"CUDA_VISIBLE_DEVICES": "1"}],
                                      SimpleNamespace(worker_memory_mb=None, confine=None), (),
                                      compile_ahead.Gate(1, 1))
    pool._queued = 1  # one more unit waits for the pool throughout (until said otherwise): workers are kept

    def compile_one(name, ok=True, where="pool", **env):
        outcome[name] = ok
        unit = SimpleNamespace(name=name, backend=SimpleNamespace(compile_ahead=where), compile_queued=None)
        env = {"TRITON_CACHE_DIR": "/c/triton/m", "TORCH_EXTENSIONS_DIR": f"/c/ext/{name}", **env}
        assert pool.submit(unit, None, env).result() == {"compile_ahead": 0.1}
        return _FakeSession.started[-1]

    first = compile_one("a")
    assert compile_one("b") is first and len(_FakeSession.started) == 1  # one method's units: one worker
    # the unit's own build folder is never a kept worker's: it gets one of its own, which no unit reads
    assert first.env["TORCH_EXTENSIONS_DIR"] == "/c/ext/compile-ahead-worker-1"
    assert first.env["CUDA_VISIBLE_DEVICES"] == "0"
    assert compile_one("c", ok=False) is first and first.stopped  # a unit that did not end cleanly: replaced
    second = compile_one("d")
    assert second is not first and second.env["CUDA_VISIBLE_DEVICES"] == "1"  # started on the devices in turn
    compile_one("e"), compile_one("f")
    assert second.stopped and len(_FakeSession.started) == 2  # its WORKER_UNITS units served: replaced
    third = compile_one("g")
    assert compile_one("h", TRITON_CACHE_DIR="/c/triton/other") is not third  # another method's cache
    assert third.stopped  # idle, of another environment: stopped so that no more are alive than run at once
    # a backend that did not choose the pool (a CUDA extension built ahead): its folder is its unit's, and
    # a worker serves that unit alone
    kept = _FakeSession.started[-1]
    kept.killed = True  # died while idle: replaced, not handed the next unit
    assert compile_one("h2", TRITON_CACHE_DIR="/c/triton/other") is not kept and kept.stopped
    cuda = compile_one("i", where="off")
    assert cuda.env["TORCH_EXTENSIONS_DIR"] == "/c/ext/i"
    assert compile_one("j", where="off") is not cuda
    assert (pool.started, pool.units) == (len(_FakeSession.started), 11)
    last = compile_one("k")
    assert not last.stopped  # kept idle while units wait for the pool...
    pool._queued = 0
    assert compile_one("l") is last and last.stopped  # ...and stopped after its unit once none waits
    kept = compile_one("m")
    pool._queued = 1
    assert compile_one("n") is not kept
    pool.close()
    assert _FakeSession.started[-1].killed  # kept idle until the run ends, then killed with those in flight
