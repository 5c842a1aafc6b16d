"""Compile-only mode: a backend that can build candidates but not run them on this machine
(CUDA or HIP without their GPU) records compile verdicts, never correctness or times, and its
side compile checks (HIP for AMD targets) are stored apart from the gating verdict."""

import json

import pytest

from mkbench import plugins

GOOD = "def kernel_function(x):\n    return x\n"


@pytest.fixture
def compile_only_backend():
    import compile_only_backend as module
    plugins.register_plugin(module, name="compile_only_test")
    yield module
    plugins.unregister_plugin("compile_only_test")


def _solutions(tmp_path, files):
    for rel, text in files.items():
        path = tmp_path / "sol" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "sol"


def test_compile_only_records_compile_verdicts(tmp_path, cli, compile_only_backend):
    sol = _solutions(tmp_path, {
        "activation/gelu.py": GOOD,
        "activation/silu.py": GOOD + "SIDE_FAILS = 1\n",
        "activation/hardswish.py": "def kernel_function(x):\n    return x +\n",  # syntax error
        "activation/softplus.py": "raise RuntimeError('nvcc: error: identifier undefined')\n",
    })
    store = tmp_path / "r.sqlite"
    code, out, err = cli("run", "--backend", "compile_only_test", "--hw", "cpu", "--solutions", sol,
                         "--category", "activation", "--shape-role", "small", "--store", store, "--json",
                         tmp_path / "r.json", "--no-progress")
    rows = json.loads((tmp_path / "r.json").read_text())["results"]
    by_task = {}
    for r in rows:
        if r["verdict"] == "skipped":  # shapes not selected
            continue
        by_task.setdefault(r["task"], set()).add((r["verdict"], r["correct_status"], r["perf_status"]))
    assert by_task["gelu"] == {("compiled", "not_run", "not_run")}
    assert by_task["silu"] == {("compiled", "not_run", "not_run")}
    assert {v for v, _, _ in by_task["hardswish"]} == {"compile_error"}
    assert {v for v, _, _ in by_task["softplus"]} == {"compile_error"}
    assert all(r["backend"] == "compile_only_test" for r in rows), "no baselines are timed in compile-only mode"
    gelu = next(r for r in rows if r["task"] == "gelu" and r["verdict"] != "skipped")
    assert "compile only: test backend" in gelu["error"]
    silu = next(r for r in rows if r["task"] == "silu" and r["verdict"] != "skipped")
    extra = silu["extra"] if isinstance(silu["extra"], dict) else json.loads(silu["extra"])
    assert extra["compile_checks"]["side-target"] == {"ok": False, "message": "side target rejected it"}
    assert "compiled only" in out
    code, out, err = cli("report", "--store", store, "--no-run-detail")
    assert code == 0, err
    assert "Side compile checks" in out and "| side-target" in out and "side target rejected it" in out


def test_every_combination_skipped_records_skips(tmp_path, cli):
    # The cpu profile skips large shapes; asking only for them leaves nothing to run, which is
    # recorded (not a crash).
    code, out, err = cli("run", "--backend", "triton", "--hw", "cpu", "--task", "gelu", "--shape-role", "large",
                         "--baselines", "none", "--store", tmp_path / "r.sqlite", "--json", tmp_path / "r.json",
                         "--no-progress")
    assert code == 0, err
    rows = json.loads((tmp_path / "r.json").read_text())["results"]
    assert rows and {r["verdict"] for r in rows} == {"skipped"}
    assert any("skips large shapes" in r["error"] for r in rows)
