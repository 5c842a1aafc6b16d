"""The example third-party plugin (examples/mkbench-numpy-accelerator), installed for real.

The package is pip-installed (editable, offline: --no-deps --no-build-isolation) into the running
environment for this module and uninstalled afterwards, whatever happens. Every mkbench command
runs in a fresh interpreter, because entry points are read once per process.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from mkbench.store import Store

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "mkbench-numpy-accelerator"
DIST = "mkbench-numpy-accelerator"
PLUGIN = "numpy_accelerator"
BF16_REASON = "backend numpy: numpy has no bfloat16 type"


def _why_pip_cannot_install() -> str | None:
    if os.environ.get("MKBENCH_SKIP_PIP_TESTS"):
        return "MKBENCH_SKIP_PIP_TESTS is set"
    if importlib.util.find_spec("pip") is None:
        return "pip is not available to this interpreter"
    if importlib.util.find_spec("setuptools") is None:
        return "setuptools is not installed (needed by --no-build-isolation)"
    purelib = sysconfig.get_paths()["purelib"]
    if not os.access(purelib, os.W_OK):
        return f"{purelib} is not writable"
    if sys.prefix == sys.base_prefix and Path(sysconfig.get_paths()["stdlib"], "EXTERNALLY-MANAGED").exists():
        return "this Python is externally managed (PEP 668)"
    return None


_WHY = _why_pip_cannot_install()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(_WHY is not None, reason=f"cannot pip-install the example plugin here: {_WHY}"),
]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("MKBENCH_LOAD_PLUGINS", "MKBENCH_TRACE_PLUGINS", "MKBENCH_STORE", "MKBENCH_TASK_DIRS")}
    env.update(extra)
    return env


def _run(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env or _env(), capture_output=True, text=True,
                          timeout=timeout)


def mkbench(*args, **env: str) -> subprocess.CompletedProcess:
    return _run("-m", "mkbench", *map(str, args), env=_env(**env))


def _plugin_line(out: str) -> str | None:
    return next((line for line in out.splitlines() if line.split()[:1] == [PLUGIN]), None)


@pytest.fixture(scope="module")
def installed():
    proc = _run("-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-input", "-q", "-e", str(EXAMPLE))
    try:
        assert proc.returncode == 0, f"pip install failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        yield
    finally:
        proc = _run("-m", "pip", "uninstall", "-y", DIST)
        assert proc.returncode == 0, f"pip uninstall failed:\n{proc.stderr[-2000:]}"
        out = mkbench("plugins")
        assert out.returncode == 0, out.stderr
        assert _plugin_line(out.stdout) is None, f"{PLUGIN} still listed after uninstalling:\n{out.stdout}"


def test_plugins_lists_it_from_its_entry_point(installed):
    proc = mkbench("plugins")
    assert proc.returncode == 0, proc.stderr
    line = _plugin_line(proc.stdout)
    assert line is not None, proc.stdout
    assert f"entry point ({DIST} " in line
    assert "register_backends" in line and "register_hardware_profiles" in line
    assert "FAILED" not in line and "problem:" not in proc.stdout


def test_list_shows_backend_and_profile(installed):
    proc = mkbench("list", "backends")
    assert proc.returncode == 0, proc.stderr
    row = next((l.split() for l in proc.stdout.splitlines() if l.split()[:1] == ["numpy"]), None)
    assert row is not None, proc.stdout
    assert row[1:3] == ["numpy", "kernel"] and row[-1] == PLUGIN
    proc = mkbench("list", "hw")
    assert proc.returncode == 0, proc.stderr
    assert any(l.split()[:1] == ["numpy-host"] for l in proc.stdout.splitlines()), proc.stdout


def test_run_numpy_backend_on_numpy_host(installed, tmp_path):
    store = tmp_path / "results.sqlite"
    proc = mkbench("run", "--backend", "numpy", "--hw", "numpy-host", "--task", "gelu", "--task", "sum_lastdim",
                   "--baselines", "eager", "--seeds", "1", "--time-budget-ms", "50", "--store", store, "--no-progress")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "profile numpy-host" in proc.stdout
    rows = Store(store).results()
    numpy_rows = [r for r in rows if r["backend"] == "numpy"]
    assert {r["task"] for r in numpy_rows} == {"gelu", "sum_lastdim"}
    assert all(r["method"] == "reference" for r in numpy_rows)
    evaluated = []
    for r in numpy_rows:
        where = f"{r['task']} {r['shape']} {r['dtype']}"
        if r["dtype"] == "bfloat16":
            assert (r["verdict"], r["error"]) == ("skipped", BF16_REASON), where
        elif r["shape_role"] == "large":
            assert r["verdict"] == "skipped" and "numpy-host skips large shapes" in r["error"], where
        else:
            assert r["verdict"] == "correct", f"{where}: {r['error']}"
            assert r["perf_status"] == "timed" and r["time_median_us"] > 0, where
            evaluated.append((r["task"], r["dtype"]))
    # gelu runs at float32 and float16 (numpy has both), sum_lastdim at float32 only
    assert sorted(set(evaluated)) == [("gelu", "float16"), ("gelu", "float32"), ("sum_lastdim", "float32")]
    eager = [r for r in rows if r["backend"] == "eager"]
    assert eager and all(r["verdict"] in ("correct", "skipped") for r in eager)
    assert {r["error"] for r in eager if r["dtype"] == "bfloat16"} == {BF16_REASON}


def test_load_plugins_empty_hides_it(installed):
    proc = mkbench("plugins", MKBENCH_LOAD_PLUGINS="")
    assert proc.returncode == 0, proc.stderr
    assert _plugin_line(proc.stdout) is None, proc.stdout
    assert "builtin_hardware" in proc.stdout  # built-ins always load
    proc = mkbench("list", "backends", MKBENCH_LOAD_PLUGINS=PLUGIN)
    assert any(l.split()[:1] == ["numpy"] for l in proc.stdout.splitlines()), proc.stdout


def test_trace_plugins_prints_hook_calls(installed):
    traced = mkbench("list", "backends", MKBENCH_TRACE_PLUGINS="1")
    assert traced.returncode == 0, traced.stderr
    assert "register_backends [hook]" in traced.stderr
    assert "register_hardware_profiles [hook]" in traced.stderr
    assert "register_backends" not in traced.stdout  # the trace goes to stderr only
    without = mkbench("list", "backends", MKBENCH_TRACE_PLUGINS="1", MKBENCH_LOAD_PLUGINS="")
    assert without.returncode == 0, without.stderr
    assert not any(l.split()[:1] == ["numpy"] for l in without.stdout.splitlines()), without.stdout
    # one register_backends call per plugin implementing it: the example adds exactly one
    calls = traced.stderr.count("register_backends [hook]")
    assert calls == without.stderr.count("register_backends [hook]") + 1, traced.stderr
