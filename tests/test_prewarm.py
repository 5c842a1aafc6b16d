"""The compile-ahead call (``Backend.prewarm``): made in a throwaway worker on shape-only inputs,
before the unit holds the device, and never seen by the evaluation."""

import json
import os
import sqlite3
from pathlib import Path

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
