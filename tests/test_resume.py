"""Interrupt a run (Ctrl-C, or kill -9) and resume it: finished units are kept, nothing is
duplicated, the rest is evaluated under the same run id and seed."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from mkbench.store import Store

# small shapes only: what is resumed is units, and three tasks with their baselines make six of them
ARGS = ["run", "--task", "gelu", "--task", "quantize_int8_rowwise", "--task", "dropout", "--baselines", "eager",
        "--seeds", "1", "--shape-role", "small", "--no-progress"]


def _units(path) -> int:
    if not path.exists():
        return 0
    try:
        db = sqlite3.connect(path, timeout=5)
        try:
            return db.execute("SELECT COUNT(*) FROM units").fetchone()[0]
        finally:
            db.close()
    except sqlite3.OperationalError:
        return 0


def _start(store_path):
    return subprocess.Popen([sys.executable, "-m", "mkbench", *ARGS, "--store", str(store_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _wait_for_units(proc, path, n, limit=240):
    t0 = time.time()
    while _units(path) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.time() - t0 < limit, "run made no progress"
        time.sleep(0.2)


@pytest.mark.parametrize("how", ["ctrl-c", "kill-9"])
def test_interrupt_then_resume(tmp_path, how, cli):
    path = tmp_path / "r.sqlite"
    proc = _start(path)
    _wait_for_units(proc, path, 2)
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends to the whole process group
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "--resume" in err
        status = "interrupted"
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        status = "running"  # nobody could mark it
    store = Store(path)
    (run,) = store.runs()
    assert run.status == status
    kept = {(r["task"], r["method"], r["shape"], r["dtype"]): r["created"] for r in store.results()}
    n_units = _units(path)
    assert 2 <= n_units < 6
    store.close()

    code, out, err = cli(*ARGS, "--store", path, "--resume")
    assert code == 0, err
    assert f"resuming run {run.id}" in out
    store = Store(path)
    (after,) = store.runs()
    assert after.id == run.id and after.seed == run.seed and after.status == "finished"
    rows = store.results()
    keys = [(r["task"], r["method"], r["shape"], r["dtype"]) for r in rows]
    assert len(keys) == len(set(keys))  # nothing duplicated
    assert _units(path) == 6
    for r in rows:  # finished results were kept as they were
        key = (r["task"], r["method"], r["shape"], r["dtype"])
        if key in kept:
            assert r["created"] == kept[key]
    assert {r["verdict"] for r in rows if r["verdict"] != "skipped"} == {"correct"}


def test_resume_without_interrupted_run_starts_fresh(cli, store_path):
    code, out, err = cli("run", "--task", "gelu", "--baselines", "none", "--seeds", "1", "--store", store_path,
                         "--no-progress", "--resume")
    assert code == 0, err
    assert "nothing to resume" in out
    code, out, err = cli("run", "--task", "gelu", "--baselines", "none", "--seeds", "1", "--store", store_path,
                         "--no-progress")
    assert code == 0
    assert [r.status for r in Store(store_path).runs()] == ["finished", "finished"]
    # Resuming once the latest run of this configuration has finished repeats nothing.
    code, out, err = cli("run", "--task", "gelu", "--baselines", "none", "--seeds", "1", "--store", store_path,
                         "--no-progress", "--resume")
    assert code == 0, err
    assert "run 2 with this configuration already finished; nothing to resume" in out
    assert "run 2 on" in out  # its summary is printed
    assert [r.status for r in Store(store_path).runs()] == ["finished", "finished"]


def test_comma_and_repeated_task_options_are_one_configuration(cli, store_path):
    common = ("--baselines", "none", "--seeds", "1", "--shape-role", "small", "--store", store_path, "--no-progress")
    code, out, err = cli("run", "--task", "gelu,elu", *common)
    assert code == 0, err
    code, out, err = cli("run", "--task", "elu", "--task", "gelu", *common, "--resume")
    assert code == 0, err
    assert "already finished; nothing to resume" in out
    assert len(Store(store_path).runs()) == 1
