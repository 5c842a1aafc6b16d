"""``--start-ahead``: a unit's worker is forked and set up (confinement, CUDA context) while the unit waits for
a lane; the lane that takes the unit reads the worker's answer and goes on as with a worker it forked itself."""

import json
import sqlite3

import pytest

from mkbench import plugins

CANDIDATE = '''
import torch

def kernel_function(x):
    return torch.nn.functional.{op}(x)
'''


@pytest.fixture
def prewarm_backend():
    import prewarm_backend as module
    plugins.register_plugin(module, name="prewarm_test")
    yield module
    plugins.unregister_plugin("prewarm_test")


def _run(tmp_path, cli, *options) -> tuple[dict, list[dict], dict]:
    sol = tmp_path / "sol" / "activation"
    sol.mkdir(parents=True, exist_ok=True)
    for op in ("silu", "elu", "gelu"):
        (sol / f"{op}.py").write_text(CANDIDATE.format(op=op))
    store = tmp_path / f"r{len(options)}.sqlite"
    code, out, err = cli("run", "--backend", "prewarm_test", "--hw", "cpu", "--solutions", tmp_path / "sol",
                         "--task", "silu,elu,gelu", "--shape-role", "small", "--dtype", "float32", "--seeds", "1",
                         "--baselines", "none", "--no-timing", "--store", store, "--json", tmp_path / "r.json",
                         "--no-progress", "--lanes", "1", "--compile-ahead", "off", *options)
    assert code == 0, err
    rows = [r for r in json.loads((tmp_path / "r.json").read_text())["results"] if r["verdict"] != "skipped"]
    (env,) = sqlite3.connect(store).execute("select env from runs").fetchone()
    verdicts = {(r["task"], r["shape"]): r["verdict"] for r in rows}
    return verdicts, rows, json.loads(env)["engine"]


def test_a_worker_started_ahead_of_its_lane_gives_the_same_verdicts(tmp_path, cli, prewarm_backend):
    verdicts, _, engine = _run(tmp_path, cli)
    assert engine["start_ahead"] is False
    ahead, rows, engine = _run(tmp_path, cli, "--start-ahead")
    assert engine["start_ahead"] is True
    assert ahead == verdicts and set(verdicts.values()) == {"correct"}, (ahead, verdicts)
    for r in rows:
        seconds = r["extra"]["unit_seconds"]
        # the wait for the lane is a stage of its own, after the fork and before the worker's answer is read;
        # it is a wait for another lane (on the unit's clock as a step, not on its limit)
        assert seconds["wait_lane"] >= 0 and seconds["steps"]["wait_lane"] >= 0, seconds
        assert seconds["steps"]["wait_lane"] <= seconds["wait_lane"] + 0.01, seconds
        # ...and the unit had no lane from its fork to then: not lane time
        assert seconds["steps"].get("without_lane", 0) >= seconds["steps"]["wait_lane"], seconds
        # the worker's start parts are read from its answer as before (confinement timed where attempted)
        assert "fork" in seconds["steps"], seconds


@pytest.mark.parametrize("ahead", [False, True])
def test_a_device_takes_one_more_unit_per_lane_when_workers_start_ahead(ahead):
    """The units waiting for a lane with a worker started are in flight too: one per lane, on top of the
    lanes and the timing queue (the executor sizes its threads by ``slots``)."""
    from mkbench.engine.device import Device
    from mkbench.engine.settings import Sharing
    device = Device("cpu", None, 3, {}, sharing=Sharing(timing_queue=2, start_ahead=ahead))
    try:
        assert device.slots == 3 + 2 + (3 if ahead else 0)
    finally:
        device.close()
