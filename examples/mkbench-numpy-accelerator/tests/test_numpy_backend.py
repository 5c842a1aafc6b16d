import numpy as np
import pytest
import torch

from mkbench import Unavailable
from mkbench.cli import main
from mkbench.hardware import resolve_profile
from mkbench.plugins import build_registry
from mkbench.store import Store
from mkbench_numpy_accelerator import NumpyBackend


def test_registers_backend_and_profile(numpy_plugin):
    reg = build_registry()
    assert reg.problems == []
    assert reg.origin[("backend", "numpy")] == "numpy_accelerator"
    assert reg.origin[("hardware profile", "numpy-host")] == "numpy_accelerator"
    # The built-in `cpu` profile keeps winning --hw auto; numpy-host is chosen by name.
    assert resolve_profile("auto", reg.hardware, {"accelerator": None}).name == "cpu"
    assert resolve_profile("numpy-host", reg.hardware, {"accelerator": None}).name == "numpy-host"


def test_availability(numpy_plugin):
    reg = build_registry()
    NumpyBackend().availability(reg.hardware["numpy-host"])
    with pytest.raises(Unavailable, match="runs on the host CPU"):
        NumpyBackend().availability(reg.hardware["h100"])


def test_bfloat16_is_unsupported(numpy_plugin):
    task = build_registry().task("gelu")
    assert NumpyBackend().unsupported(task, "bfloat16") == "numpy has no bfloat16 type"
    assert NumpyBackend().unsupported(task, "float32") is None


def test_worker_env_pins_threads(monkeypatch):
    monkeypatch.delenv("MKBENCH_NUMPY_THREADS", raising=False)
    assert NumpyBackend().worker_env(None) == {}
    monkeypatch.setenv("MKBENCH_NUMPY_THREADS", "2")
    assert NumpyBackend().worker_env(None)["OPENBLAS_NUM_THREADS"] == "2"


def test_run_converts_without_copying():
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    seen = {}

    def kernel(a, s):
        seen["a"] = a
        return a * np.float32(s), a.sum(axis=1)

    out = NumpyBackend().run(kernel, (x, 2.0))
    assert seen["a"].ctypes.data == x.data_ptr()  # the input array is a view of the tensor
    assert all(type(o) is torch.Tensor and o.dtype == torch.float32 for o in out)
    assert torch.equal(out[0], x * 2) and torch.equal(out[1], x.sum(dim=1))


def test_non_array_output_is_an_error():
    with pytest.raises(TypeError, match="must return numpy arrays"):
        NumpyBackend().run(lambda a: a.tolist(), (torch.zeros(3),))


def test_reference_kernels_pass_their_contracts(numpy_plugin, tmp_path, capsys):
    kernels = sorted(NumpyBackend().reference_dir().glob("*/*.py"))
    assert len(kernels) >= 5
    store = tmp_path / "results.sqlite"
    args = ["run", "--backend", "numpy", "--hw", "numpy-host", "--baselines", "none", "--seeds", "1",
            "--time-budget-ms", "20", "--store", str(store), "--no-progress"]
    for path in kernels:
        args += ["--task", path.stem]
    assert main(args) == 0, capsys.readouterr().err
    rows = Store(store).results()
    assert {r["task"] for r in rows} == {p.stem for p in kernels}
    for r in rows:
        where = f"{r['task']} {r['shape']} {r['dtype']}"
        if r["dtype"] == "bfloat16":
            assert r["verdict"] == "skipped" and r["error"] == "backend numpy: numpy has no bfloat16 type", where
        elif r["shape_role"] == "large":
            assert r["verdict"] == "skipped" and "skips large shapes" in r["error"], where
        else:
            assert r["verdict"] == "correct", f"{where}: {r['error']}"
            assert r["perf_status"] == "timed", where
