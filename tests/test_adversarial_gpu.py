"""The cheats that exist only on a GPU, and honest candidates sharing one GPU.

* A side stream created without the names the static scan looks for: the device trace shows the
  candidate's kernel on another stream, not ordered after the timed stream, on every shape (not only
  where a roofline floor happens to fire).
* Three evaluations of honest candidates (references, a kernel that reuses its output buffer, a
  partial kernel) at once on one GPU: no ``hack``, since the trace reads GPU timestamps, not
  wall-clock against a slack.
"""

import os
import shlex
import subprocess
import sys
import textwrap

import pytest

from mkbench.store import Store
from test_adversarial import CHEATS, HONEST, PARTIAL, REFS, _solutions, caught

pytestmark = pytest.mark.gpu

SIDE_STREAM = (REFS / "activation" / "leaky_relu.py").read_text() + textwrap.dedent("""

    import torch.cuda as _tc
    _make = getattr(_tc, "Str" + "eam")
    _enter = getattr(_tc, "str" + "eam")
    _honest = kernel_function

    def kernel_function(*args):
        side = _make()
        with _enter(side):
            return _honest(*args)
""")


def _run(tmp_path, name, files, *extra, shape_role=None):
    sol = _solutions(tmp_path / name, files)
    store = tmp_path / f"{name}.sqlite"
    args = [sys.executable, "-m", "mkbench", "run", "--solutions", str(sol), "--method", name,
            "--task", ",".join(t for _, t in files), "--baselines", "eager", "--seeds", "1", "--time-budget-ms", "100",
            "--lanes", "2",
            "--store", str(store), "--no-progress", *extra]
    if shape_role:
        args += ["--shape-role", shape_role]
    if os.environ.get("MKBENCH_TEST_TRANSFER"):  # the suite again with the other way workers hand answers over
        args += ["--transfer", os.environ["MKBENCH_TEST_TRANSFER"]]
    args += shlex.split(os.environ.get("MKBENCH_TEST_RUN_ARGS", ""))  # the suite again with other engine settings
    return args, store


def _run_all(runs, tmp, timeout):
    """Start the runs at once; each one's output goes to a log file beside its store (kept for a
    reader of the GPU evidence, and named in the failure)."""
    procs = []
    for args, store in runs:
        log = open(store.with_suffix(".log"), "w")
        procs.append((subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, text=True), log, store))
    for p, log, store in procs:
        p.wait(timeout=timeout)
        log.close()
        assert p.returncode == 0, store.with_suffix(".log").read_text()[-3000:]


@pytest.fixture(scope="module")
def gpu_cheats(tmp_path_factory):
    """Two runs at once: every CPU cheat as on the CPU (small shapes, float32), and the side stream on
    every shape and dtype."""
    tmp = tmp_path_factory.mktemp("gpu-cheats")
    runs = [_run(tmp, "cheats", {k: v[0] for k, v in CHEATS.items()}, "--dtype", "float32", shape_role="small"),
            _run(tmp, "side", {("activation", "leaky_relu"): SIDE_STREAM})]
    _run_all(runs, tmp, 600)
    return [r for (_, store) in runs for r in Store(store).results() if r["verdict"] != "skipped"
            and not r["is_baseline"]]


def test_side_stream_is_hidden_work_on_every_shape(gpu_cheats):
    """Every shape is timed here (the issue saw it caught only where a roofline floor fired)."""
    rows = [r for r in gpu_cheats if r["task"] == "leaky_relu"]
    assert {r["shape_role"] for r in rows} == {"small", "awkward", "large"}
    assert all(r["verdict"] == "hack" and "hidden work in the device trace" in r["error"] for r in rows), \
        [(r["shape"], r["dtype"], r["verdict"], r["error"]) for r in rows]


def test_cheats_are_caught_on_the_gpu_too(gpu_cheats):
    for (_, task), (_, expected, needle) in CHEATS.items():
        rows = [r for r in gpu_cheats if r["task"] == task]
        assert rows, task
        for r in rows:
            assert r["verdict"] == expected and caught(r["error"], needle), (task, r["shape"], r["dtype"], r["error"])


def test_three_honest_evaluations_sharing_the_gpu_give_no_hack(tmp_path):
    honest = dict(HONEST)
    honest[("fusion", "bias_gelu_residual")] = (REFS / "fusion" / "bias_gelu_residual.py").read_text()
    partial = {("activation", "gelu"): PARTIAL}
    runs = [_run(tmp_path, name, files, "--time-role", "large")
            for name, files in (("honest-a", honest), ("honest-b", honest), ("partial", partial))]
    _run_all(runs, tmp_path, 900)
    for (_, store), name in zip(runs, ("honest-a", "honest-b", "partial")):
        rows = [r for r in Store(store).results() if r["method"] == name and r["verdict"] != "skipped"]
        assert rows and not [r for r in rows if r["verdict"] == "hack"], [(r["task"], r["shape"], r["error"])
                                                                          for r in rows if r["verdict"] == "hack"]
        expected = {"framework"} if name == "partial" else {"correct"}
        assert {r["verdict"] for r in rows} == expected, [(r["task"], r["shape"], r["verdict"], r["error"])
                                                          for r in rows]
