"""The sycl backend. On a CPU the kernels really run, on both execution paths: through pyopencl on
PoCL or Intel's OpenCL CPU runtime (whichever builds kernels on this host), and through a SYCL
queue (dpctl, Intel's SYCL runtime) behind the pyopencl facade. On each path the 60 reference
kernels are judged by the worker's own evaluation code in this process, two of them end to end
through `mkbench run` with the path's timer; a broken source gives a compile_error carrying the
OpenCL compiler's message; decoys and forbidden host work are caught; unavailability and the
choice of path have a reason. The GPU tests run the references on NVIDIA's OpenCL driver."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyopencl")

from mkbench.backends.sycl import EXECUTION_PATH, SyclBackend, sycl_cpp_reason  # noqa: E402
from mkbench.backends.sycl import device as sycl_device  # noqa: E402
from mkbench.backends.sycl.checks import scan_opencl_host  # noqa: E402
from mkbench.backends.sycl.device import DESCRIPTION_ENV, DEVICE_ENV, PATH_ENV, choose, execution_path  # noqa: E402
from mkbench.engine import inprocess  # noqa: E402
from mkbench.errors import CompileError, Unavailable  # noqa: E402
from mkbench.inputs import generate  # noqa: E402
from mkbench.plugins import build_registry  # noqa: E402
from mkbench.timing import TimingSettings  # noqa: E402

REG = build_registry()
CPU = REG.hardware["cpu"]
SYCL = REG.backends["sycl"]
REFS = SYCL.reference_dir()
REF_FILES = sorted(REFS.rglob("*.py"))
# The portability matrix: the 60 tasks that the five backends all have reference kernels for.
MATRIX_TASKS = ["activation/elu", "activation/gelu", "activation/logsigmoid", "activation/prelu_channel",
                "convolution/conv1d", "convolution/conv2d_3x3", "convolution/conv2d_pointwise",
                "convolution/depthwise_conv2d", "fusion/add_layernorm", "fusion/bias_gelu_residual",
                "fusion/rope_apply", "fusion/swiglu", "index/embedding", "index/embedding_bag_sum",
                "index/index_select_rows", "index/one_hot", "linear_algebra/gemv", "linear_algebra/ger_rank1_update",
                "linear_algebra/tridiagonal_solve", "linear_algebra/trsv", "loss/bce_with_logits",
                "loss/cross_entropy", "loss/margin_ranking_loss", "loss/mse_loss", "math/cumsum", "math/hypot",
                "math/logaddexp", "math/logsumexp", "matmul/bmm", "matmul/int8_matmul_int32", "matmul/matmul",
                "matmul/matmul_nt", "normalization/batch_norm_inference", "normalization/l2_normalize",
                "normalization/layer_norm", "normalization/rms_norm", "optimizer/adam_step", "optimizer/adamw",
                "optimizer/lion", "optimizer/sgd_nesterov", "pooling/avg_pool2d", "pooling/global_avg_pool",
                "pooling/max_pool1d", "pooling/max_pool2d", "quantization/dequantize_int8_per_channel",
                "quantization/quantize_int8_per_channel_sym", "quantization/quantize_int8_per_tensor_asym",
                "quantization/quantize_int8_rowwise", "random/bernoulli_mask", "random/dropout",
                "random/normal_fill", "random/uniform_fill", "reduce/amax_middle_dim", "reduce/argmax_lastdim",
                "reduce/l2_norm_rows", "reduce/sum_lastdim", "spatial/nchw_to_nhwc", "spatial/pixel_shuffle",
                "spatial/upsample_bilinear2d", "spatial/upsample_nearest2d"]


# The two execution paths on the cpu profile, as MKBENCH_SYCL_CPU_PATH names them, and their timers.
PATHS = ("opencl", "sycl")
TIMERS = {"opencl": "opencl-profiling-events", "sycl": "sycl-profiling-events"}


def _use_path(monkeypatch, name: str) -> None:
    """Run the cpu profile on one path (the workers of `mkbench run` inherit it), or skip with why
    that path cannot run here."""
    monkeypatch.setenv(PATH_ENV, name)
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    monkeypatch.delenv(DESCRIPTION_ENV, raising=False)
    try:
        SYCL.availability(CPU)
    except Unavailable as exc:
        pytest.skip(f"the {name} path cannot run here: {exc.reason}")


@pytest.fixture(params=PATHS)
def path(request, monkeypatch):
    _use_path(monkeypatch, request.param)
    return request.param


@pytest.fixture
def sycl_path(monkeypatch):
    _use_path(monkeypatch, "sycl")


class _evaluation:
    """The lane's correctness steps in this process (mkbench.engine.inprocess)."""

    def __init__(self, task, seeds=1):
        self.task, self.seeds = task, seeds

    def check_combo(self, fn, shape, dtype):
        return inprocess.check_combo(SYCL, self.task, fn, shape, dtype, CPU, self.seeds)


def _write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _rows(json_path: Path) -> list[dict]:
    rows = json.loads(json_path.read_text())["results"]
    for r in rows:
        if isinstance(r["extra"], str):
            r["extra"] = json.loads(r["extra"])
    return [r for r in rows if r["verdict"] != "skipped"]


# --- the reference kernels -------------------------------------------------------------------

def test_references_cover_the_matrix_tasks():
    assert sorted(p.relative_to(REFS).with_suffix("").as_posix() for p in REF_FILES) == MATRIX_TASKS
    triton = REG.backends["triton"].reference_dir()
    assert all((triton / f"{t}.py").exists() for t in MATRIX_TASKS)


@pytest.mark.parametrize("ref", REF_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_reference_is_clean_and_correct_on_the_cpu(path, ref):
    task = REG.tasks[ref.stem]
    assert SYCL.static_problem(task, ref) is None
    assert SYCL.static_findings(task, ref) == []
    fn = SYCL.compile(task, ref, CPU)
    assert getattr(fn, "on_sycl_queue", False) == (path == "sycl")
    ev = _evaluation(task)
    for shape in task.shapes:
        if shape.role == "large":  # the cpu profile skips them too
            continue
        for dtype in task.dtypes:
            assert SYCL.unsupported(task, dtype) is None
            status, message, _ = ev.check_combo(fn, shape, dtype)
            assert status == "correct", f"{shape.name} {dtype}: {message}"


def test_references_through_the_pipeline(tmp_path, cli, path):
    """Compile, correctness and timing of real OpenCL kernels on each CPU path, in spawned workers:
    three storage types (gelu) and a tuple of int8 and float32 outputs (quantize). Every row says
    which path ran it: the timer's name and extra.compile_checks."""
    out = tmp_path / "r.json"
    code, stdout, _ = cli("run", "--backend", "sycl", "--hw", "cpu", "--shape-role", "small", "--shape-role", "awkward",
                          "--baselines", "none", "--seeds", "1", "--time-budget-ms", "20", "--task", "gelu",
                          "--task", "quantize_int8_rowwise", "--store", tmp_path / "r.sqlite", "--json", out,
                          "--no-progress")
    assert code == 0, stdout
    rows = _rows(out)
    assert {r["task"] for r in rows} == {"gelu", "quantize_int8_rowwise"}
    assert {r["dtype"] for r in rows if r["task"] == "gelu"} == {"float32", "float16", "bfloat16"}
    for r in rows:
        assert r["verdict"] == "correct", (r["task"], r["shape"], r["dtype"], r["error"])
        assert r["perf_status"] == "timed" and r["timer"] == TIMERS[path] and not r["interpreted"]
        assert r["time_median_us"] > 0 and r["extra"]["l2_flush_bytes"] >= 2 * 2**20
        recorded = r["extra"]["compile_checks"][EXECUTION_PATH]
        assert recorded["ok"] == (path == "sycl")
        assert recorded["message"].startswith("SYCL queue (dpctl" if path == "sycl"
                                              else f"pyopencl, not a SYCL queue: {PATH_ENV}=opencl")
    assert "OPENCL_SOURCE" in json.loads(out.read_text())["runs"][0]["environment"]["candidate_contract"]


def test_the_documented_minimal_candidate_is_correct(tmp_path, path):
    doc = (Path(__file__).resolve().parent.parent / "docs" / "backends" / "sycl.md").read_text()
    example = doc.split("### A minimal candidate", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    task = REG.tasks["gelu"]
    path = _write(tmp_path, "activation/gelu.py", example)
    assert SYCL.static_problem(task, path) is None and SYCL.static_findings(task, path) == []
    fn = SYCL.compile(task, path, CPU)
    for dtype in task.dtypes:
        status, message, _ = _evaluation(task).check_combo(fn, task.shape("awkward"), dtype)
        assert status == "correct", f"{dtype}: {message}"


# --- compile errors, decoys, forbidden host work ------------------------------------------------

BROKEN_GELU = '''import numpy as np
import pyopencl.array as cla

OPENCL_SOURCE = r"""
__kernel void gelu(__global const float *x, __global float *y, const int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = 0.5f * x[i] * (1.0f + erf(x[i] * 0.70710678f)) + undefined_thing;
}
"""


def kernel_function(prog, queue, x):
    y = cla.empty_like(x)
    prog.gelu(queue, (x.size,), None, x.data, y.data, np.int32(x.size))
    return y
'''

NUMPY_DECOY = '''import numpy as np
import pyopencl.array as cla

OPENCL_SOURCE = "__kernel void unused(__global float *x) { }"


def kernel_function(prog, queue, x):
    host = x.get()
    return cla.to_device(queue, host.astype(np.float64).sum(axis=-1).astype(x.dtype))
'''


def test_broken_source_is_a_compile_error_with_the_build_log(tmp_path, path):
    path = _write(tmp_path, "activation/gelu.py", BROKEN_GELU)
    with pytest.raises(CompileError) as err:
        SYCL.compile(REG.tasks["gelu"], path, CPU)
    # Line 7 of the .py file is line 4 of OPENCL_SOURCE: the log's location is rewritten to the file.
    first = str(err.value).splitlines()[0]
    assert first.startswith(f"{path}:7:") and "undeclared identifier 'undefined_thing'" in first, str(err.value)


def test_compile_error_and_decoy_verdicts_in_the_store(tmp_path, cli, path):
    sol = tmp_path / "sol"
    _write(sol, "activation/gelu.py", BROKEN_GELU)
    _write(sol, "reduce/sum_lastdim.py", NUMPY_DECOY)
    _write(sol, "math/cumsum.py", "def kernel_function(prog, queue, x):\n    return x\n")  # no OPENCL_SOURCE
    out = tmp_path / "r.json"
    code, stdout, stderr = cli("run", "--backend", "sycl", "--hw", "cpu", "--solutions", sol, "--shape-role", "small",
                               "--baselines", "none", "--seeds", "1", "--time-budget-ms", "10", "--task", "gelu",
                               "--task", "sum_lastdim", "--task", "cumsum", "--store", tmp_path / "r.sqlite",
                               "--json", out, "--no-progress")
    assert code == 3, stdout + stderr  # the candidate without OPENCL_SOURCE is invalid
    by_task = {}
    for r in _rows(out):
        by_task.setdefault(r["task"], []).append(r)
    assert {r["verdict"] for r in by_task["gelu"]} == {"compile_error"}
    assert all("undeclared identifier 'undefined_thing'" in r["error"] and "gelu.py:7:" in r["error"]
               for r in by_task["gelu"])
    assert {r["verdict"] for r in by_task["cumsum"]} == {"compile_error"}
    assert "defines no top-level `OPENCL_SOURCE`" in by_task["cumsum"][0]["error"]
    decoy = by_task["sum_lastdim"]
    # the static scan's readback finding is a warning; the verdict rests on what ran
    assert all(any("host_readback" in w for w in r["extra"]["static_warnings"]) for r in decoy)
    # float32: right answer, no launch of its own kernel (bfloat16 arrives as uint16 bits: the numpy sum is wrong there)
    f32 = next(r for r in decoy if r["dtype"] == "float32")
    assert f32["verdict"] == "framework" and "no sycl kernel of the candidate ran" in f32["error"]


def _compiled(tmp_path, task_name, text):
    task = REG.tasks[task_name]
    return task, SYCL.compile(task, _write(tmp_path, f"{task.category}/{task.name}.py", text), CPU)


def test_decoy_without_own_kernel_launch_is_not_the_backends_work(tmp_path, path):
    task, fn = _compiled(tmp_path, "sum_lastdim", NUMPY_DECOY)
    status, message, _ = _evaluation(task).check_combo(fn, task.shape("small"), "float32")
    assert status == "framework" and "no sycl kernel of the candidate ran" in message


def test_pyopencl_library_kernels_do_not_count_as_launches(tmp_path, path):
    """pyopencl: its library kernels run but are not the candidate's (a decoy); the facade refuses
    them outright."""
    text = ('import pyopencl.clmath as clmath\n\nOPENCL_SOURCE = "__kernel void unused(__global float *x) { }"\n\n\n'
            "def kernel_function(prog, queue, x):\n    return 0.5 * x * (1 + clmath.erf(x * 0.7071067811865476))\n")
    task, fn = _compiled(tmp_path, "gelu", text)
    status, message, _ = _evaluation(task).check_combo(fn, task.shape("small"), "float32")
    if path == "opencl":
        assert status == "framework" and "no sycl kernel of the candidate ran" in message, message
    else:
        assert status == "hack" and "computation runs pyopencl's own kernels" in message, message


DUMMY_KERNEL = 'OPENCL_SOURCE = "__kernel void touch(__global float *x) { }"\n'
RUNTIME_CHEATS = {
    "readback_beside_own_kernel": (
        "sum_lastdim", "import numpy as np\nimport pyopencl.array as cla\n" + DUMMY_KERNEL +
        "def kernel_function(prog, queue, x):\n    prog.touch(queue, (1,), None, x.data)\n"
        "    return cla.to_device(queue, x.get().sum(axis=-1))\n", "read of a buffer into host memory"),
    "array_arithmetic_beside_own_kernel": (
        "gelu", "import pyopencl.clmath as clmath\n" + DUMMY_KERNEL +
        "def kernel_function(prog, queue, x):\n    prog.touch(queue, (1,), None, x.data)\n"
        "    return 0.5 * x * (1 + clmath.erf(x * 0.7071067811865476))\n",
        {"opencl": "pyopencl's own kernel 'erf_kernel'", "sycl": "computation runs pyopencl's own kernels"}),
    "own_queue": (
        "gelu", "import numpy as np\nimport pyopencl as cl\nimport pyopencl.array as cla\n"
        'OPENCL_SOURCE = "__kernel void g(__global const float *x, __global float *y) { size_t i = get_global_id(0); '
        'y[i] = 0.5f * x[i] * (1.0f + erf(x[i] * 0.70710678f)); }"\n'
        "def kernel_function(prog, queue, x):\n    q = cl.CommandQueue(queue.context)\n    y = cla.empty_like(x)\n"
        "    prog.g(q, (x.size,), None, x.data, y.data)\n    q.finish()\n    return y\n",
        {"opencl": "queue other than the one passed in",
         "sycl": "pyopencl.CommandQueue: creates its own command queue"}),
    "modifies_input": (
        "gelu", "import numpy as np\n"
        'OPENCL_SOURCE = "__kernel void g(__global float *x) { size_t i = get_global_id(0); '
        'x[i] = 0.5f * x[i] * (1.0f + erf(x[i] * 0.70710678f)); }"\n'
        "def kernel_function(prog, queue, x):\n    prog.g(queue, (x.size,), None, x.data)\n    return x\n",
        "modified input[0]"),
    "output_subclass": (
        "gelu", "import pyopencl.array as cla\n" + DUMMY_KERNEL +
        "class Lazy(cla.Array):\n    pass\n"
        "def kernel_function(prog, queue, x):\n    prog.touch(queue, (1,), None, x.data)\n"
        "    return Lazy(queue, x.shape, x.dtype)\n", "expected a pyopencl.array.Array"),
}


# Cheats that hide work from the profiling events or the launch count are hacks; breaking the
# output rules (an input modified on the device, a lazy Array subclass) is an error.
EXPECTED_STATUS = {"readback_beside_own_kernel": "hack", "array_arithmetic_beside_own_kernel": "hack",
                   "own_queue": "hack", "modifies_input": "error", "output_subclass": "error"}


@pytest.mark.parametrize("name", sorted(RUNTIME_CHEATS))
def test_forbidden_runtime_behaviour_is_caught(tmp_path, name, path):
    task_name, text, needle = RUNTIME_CHEATS[name]
    needle = needle[path] if isinstance(needle, dict) else needle
    task, fn = _compiled(tmp_path, task_name, text)
    status, message, _ = _evaluation(task).check_combo(fn, task.shape("small"), "float32")
    assert status == EXPECTED_STATUS[name] and needle in message, (status, message)


def test_reference_timing_with_markers_and_with_the_kernel_fallback(monkeypatch):
    _use_path(monkeypatch, "opencl")
    from mkbench.backends.sycl.common import KernelBracket, MarkerBracket, flush_bytes
    from mkbench.backends.sycl.opencl.timing import time_opencl
    task = REG.tasks["sum_lastdim"]
    fn = SYCL.compile(task, REFS / "reduce" / "sum_lastdim.py", CPU)
    arg_sets = [generate(task, task.shape("small"), "float32", k, "cpu") for k in range(2)]
    # min_samples is what is asserted: a budget wide enough that a loaded CI host (each sample fills a
    # flush buffer twice the CPU's cache) still reaches it; 20 ms gave 4 samples once, under load
    settings = TimingSettings(budget_ms=2000, warmup_ms=2, min_samples=5, max_samples=5)
    for bracket in (MarkerBracket(fn.rt), KernelBracket(fn.rt)):
        t = time_opencl(fn, arg_sets, CPU, settings, bracket=bracket)
        assert t.n >= 5 and t.median_us > 0 and t.timer == "opencl-profiling-events" and not t.interpreted
        assert t.l2_flush_bytes == flush_bytes(fn.rt, CPU) >= 2 * fn.rt.device.global_mem_cache_size
        assert t.host_median_us is None  # no wall-clock cross-check on a CPU device (see opencl/timing.py)


def test_sycl_timing_with_barriers_and_with_the_kernel_fallback(sycl_path):
    from mkbench.backends.sycl.common import KernelBracket, flush_bytes, make_bracket
    from mkbench.backends.sycl.common import MarkerBracket as BarrierBracket  # a SYCL marker is a barrier
    from mkbench.backends.sycl.dpctl.timing import time_sycl
    task = REG.tasks["sum_lastdim"]
    fn = SYCL.compile(task, REFS / "reduce" / "sum_lastdim.py", CPU)
    assert isinstance(make_bracket(fn.rt), BarrierBracket)  # this runtime times barriers
    arg_sets = [generate(task, task.shape("small"), "float32", k, "cpu") for k in range(2)]
    settings = TimingSettings(budget_ms=2000, warmup_ms=2, min_samples=5, max_samples=5)  # as above
    for bracket in (BarrierBracket(fn.rt), KernelBracket(fn.rt)):
        t = time_sycl(fn, arg_sets, CPU, settings, bracket=bracket)
        assert t.n >= 5 and t.median_us > 0 and t.timer == "sycl-profiling-events" and not t.interpreted
        assert t.l2_flush_bytes == flush_bytes(fn.rt, CPU) >= 2 * fn.rt.device.global_mem_cache_size
        assert t.host_median_us is None


def test_sycl_barriers_bracket_the_candidates_kernels(sycl_path):
    """What the SYCL timer rests on: on the queue's profiling clock the start barrier ends before
    the candidate's kernel starts, and the end barrier ends after the kernel ends."""
    from mkbench.backends.sycl.common import MarkerBracket as BarrierBracket  # a SYCL marker is a barrier
    from mkbench.backends.sycl.dpctl import facade
    task = REG.tasks["sum_lastdim"]
    fn = SYCL.compile(task, REFS / "reduce" / "sum_lastdim.py", CPU)
    args, _ = fn.upload(generate(task, task.shape("small"), "float32", 0, "cpu"))
    bracket = BarrierBracket(fn.rt)
    launches = []
    real_submit = fn.rt.submit

    def submit(*a, **k):
        launches.append(real_submit(*a, **k))
        return launches[-1]
    fn.rt.submit = submit
    try:
        with facade.installed():
            start = bracket.mark()
            fn.launch(args)
            end = bracket.mark()
        fn.rt.wait()
    finally:
        del fn.rt.submit
    assert launches
    assert start.profiling_info_end <= launches[0].profiling_info_start
    assert launches[-1].profiling_info_end <= end.profiling_info_end
    assert bracket.elapsed_us(start, end) >= sum(e.profiling_info_end - e.profiling_info_start for e in launches) / 1e3


# --- static checks ------------------------------------------------------------------------------

HOST = "import numpy as np\nimport pyopencl as cl\nimport pyopencl.array as cla\nimport pyopencl.clmath as clmath\n"
STATIC_CHEATS = {
    "readback": ("def kernel_function(prog, queue, x):\n    h = x.get()\n    return cla.to_device(queue, h)\n",
                 "host_readback"),
    "enqueue_copy_to_numpy": ("def kernel_function(prog, queue, x):\n    cl.enqueue_copy(queue, np.empty(x.shape, "
                              "x.dtype), x.data)\n"
                              "    return x\n", "host_readback"),
    "numpy_compute": ("def kernel_function(prog, queue, x):\n    return np.tanh(x)\n", "framework_op"),
    "array_library": ("def kernel_function(prog, queue, x):\n    return cla.sum(x)\n", "framework_op"),
    "clmath": ("def kernel_function(prog, queue, x):\n    return clmath.erf(x)\n", "framework_op"),
    "astype": ("def kernel_function(prog, queue, x):\n    return x.astype(np.float32)\n", "framework_op"),
    "own_queue": ("def kernel_function(prog, queue, x):\n    q = cl.CommandQueue(queue.context)\n    return x\n",
                  "queue"),
    "own_program": ("def kernel_function(prog, queue, x):\n    p = cl.Program(queue.context, 'src').build()\n    "
                    "return x\n", "program"),
    "patch_pyopencl": ("cl.enqueue_nd_range_kernel = None\ndef kernel_function(prog, queue, x):\n    return x\n",
                       "patching"),
    "thread": ("import threading\ndef kernel_function(prog, queue, x):\n    threading.Thread(target=print).start()\n   "
               " return x\n", "threads"),
    "dpctl": ("import dpctl\ndef kernel_function(prog, queue, x):\n    return x\n", "harness_access"),
    "facade_internals": ("def kernel_function(prog, queue, x):\n    x.data._mkb_memory.copy_to_host()\n    return x\n",
                         "harness_access"),
}


@pytest.mark.parametrize("name", sorted(STATIC_CHEATS))
def test_static_cheat_is_caught(name):
    body, expected = STATIC_CHEATS[name]
    findings = scan_opencl_host(HOST + 'OPENCL_SOURCE = ""\n' + body)
    assert expected in {f.check for f in findings}, findings


def test_kernels_named_like_framework_ops_are_launches_not_findings():
    body = ("def kernel_function(prog, queue, x):\n    y = cla.empty_like(x)\n"
            "    prog.gelu(queue, (x.size,), None, x.data, y.data)\n    prog.cumsum(queue, (1,), None, y.data)\n"
            "    prog.sum(queue, (1,), None, y.data)\n    y.fill(0)\n    return y\n")
    assert scan_opencl_host(HOST + 'OPENCL_SOURCE = ""\n' + body) == []
    # ... but the same call on anything else is still a framework op.
    cumsum = HOST + "def kernel_function(prog, queue, x):\n    return x.cumsum()\n"
    assert {f.check for f in scan_opencl_host(cumsum)} == {"framework_op"}


# --- availability and unsupported forms -----------------------------------------------------------

POCL_ONLY = [{"name": "Portable Computing Language", "vendor": "The pocl project", "version": "OpenCL 3.0 PoCL",
              "devices": [{"name": "pthread-cpu", "cpu": True, "gpu": False}]}]
NVIDIA = {"name": "NVIDIA CUDA", "vendor": "NVIDIA Corporation", "version": "OpenCL 3.0 CUDA",
          "devices": [{"name": "NVIDIA H100 80GB HBM3", "cpu": False, "gpu": True}]}


def test_device_choice_and_reasons():
    assert choose(POCL_ONLY, "cpu", "generic") == (0, 0)
    assert choose(POCL_ONLY + [NVIDIA], "cuda", "nvidia") == (1, 0)
    with pytest.raises(Unavailable,
                       match="no nvidia OpenCL GPU platform.*ICD is not registered.*Portable Computing Language"):
        choose(POCL_ONLY, "cuda", "nvidia")
    with pytest.raises(Unavailable, match="no amd OpenCL GPU platform"):
        choose(POCL_ONLY + [NVIDIA], "cuda", "amd")
    with pytest.raises(Unavailable, match="no OpenCL CPU device.*pocl"):
        choose([NVIDIA], "cpu", "generic")
    with pytest.raises(Unavailable, match="no tpu devices"):
        choose(POCL_ONLY, "tpu", "google")


def test_cpu_device_that_cannot_build_is_passed_over():
    """PoCL 3.0 lists a newer AMD EPYC but cannot build for it; Intel's CPU runtime then serves."""
    broken = [{**POCL_ONLY[0],
               "devices": [{**POCL_ONLY[0]["devices"][0], "build_error": "error: unknown target CPU 'generic'"}]}]
    intel = {"name": "Intel(R) OpenCL", "vendor": "Intel(R) Corporation", "version": "OpenCL 3.0 LINUX",
             "devices": [{"name": "AMD EPYC", "cpu": True, "gpu": False, "build_error": None}]}
    assert choose(broken + [intel], "cpu", "generic") == (1, 0)
    assert choose(POCL_ONLY + [intel], "cpu", "generic") == (0, 0)  # PoCL first where it works
    with pytest.raises(Unavailable, match="no OpenCL CPU device that builds kernels.*unknown target CPU 'generic'"):
        choose(broken, "cpu", "generic")


def test_unavailable_on_a_gpu_profile_without_its_opencl_platform(monkeypatch):
    _use_path(monkeypatch, "opencl")
    from mkbench.backends.sycl.device import probe_listing
    if any("NVIDIA" in p["name"] for p in probe_listing()):
        pytest.skip("this machine has NVIDIA's OpenCL platform")
    with pytest.raises(Unavailable, match="no nvidia OpenCL GPU platform"):
        SyclBackend().availability(REG.hardware["h100"])


def _hide(monkeypatch, package: str) -> None:
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == package else real(name, *a))


def test_unavailable_without_pyopencl(monkeypatch):
    monkeypatch.setenv(PATH_ENV, "opencl")
    _hide(monkeypatch, "pyopencl")
    with pytest.raises(Unavailable, match=f"pyopencl package is not installed.*and no SYCL queue: .*{PATH_ENV}=opencl"):
        SyclBackend().availability(CPU)
    with pytest.raises(Unavailable, match="pyopencl package is not installed"):
        SyclBackend().availability(REG.hardware["h100"])


def test_the_sycl_path_needs_no_pyopencl(sycl_path, monkeypatch):
    _hide(monkeypatch, "pyopencl")
    SyclBackend().availability(CPU)


def test_cpu_profile_prefers_a_working_sycl_queue(sycl_path, monkeypatch):
    monkeypatch.delenv(PATH_ENV)
    chosen = execution_path(CPU)
    assert (chosen.sycl and chosen.description.startswith("SYCL queue (dpctl")
            and chosen.sycl_device in chosen.description)
    checks = SYCL.compile_checks(REG.tasks["gelu"], None, CPU)
    assert checks == {EXECUTION_PATH: {"ok": True, "message": chosen.description}}


def test_without_dpctl_the_cpu_runs_pyopencl_and_says_why(monkeypatch):
    monkeypatch.delenv(PATH_ENV, raising=False)
    monkeypatch.setattr(sycl_device, "_probe_cache", {})
    _hide(monkeypatch, "dpctl")
    chosen = execution_path(CPU)
    assert not chosen.sycl and chosen.description.startswith("pyopencl, not a SYCL queue: dpctl is not installed")
    assert SYCL.compile_checks(REG.tasks["gelu"], None,
                               CPU) == {EXECUTION_PATH: {"ok": False, "message": chosen.description}}
    assert SYCL.worker_env(CPU) == {PATH_ENV: "opencl", DESCRIPTION_ENV: chosen.description}
    monkeypatch.setenv(PATH_ENV, "sycl")  # asked for SYCL: no quiet fallback
    with pytest.raises(Unavailable, match=f"{PATH_ENV}=sycl, but no SYCL CPU queue works here: dpctl is not installed"):
        SyclBackend().availability(CPU)


def test_workers_take_the_parents_path_without_probing(monkeypatch):
    monkeypatch.setattr(sycl_device, "_probe_cache", {"sycl": {"error": "probed again"}})
    monkeypatch.setenv(PATH_ENV, "sycl")
    monkeypatch.setenv(DEVICE_ENV, "opencl:cpu:0")
    monkeypatch.setenv(DESCRIPTION_ENV, "SYCL queue (dpctl 0.22.1) on opencl:cpu:0: the parent's words")
    assert execution_path(CPU) == sycl_device.ExecutionPath("opencl:cpu:0",
                                                            "SYCL queue (dpctl 0.22.1) on opencl:cpu:0: the parent's "
                                                            "words")
    gpu = execution_path(REG.hardware["h100"])  # GPUs keep NVIDIA's OpenCL, whatever the variable says
    assert not gpu.sycl and gpu.description.startswith("pyopencl on the nvidia OpenCL GPU platform")
    assert SYCL.compile_checks(REG.tasks["gelu"], None, REG.hardware["h100"])[EXECUTION_PATH]["ok"]
    assert SYCL.worker_env(REG.hardware["h100"]) == {}
    monkeypatch.setenv(PATH_ENV, "cuda")
    with pytest.raises(Unavailable, match="expected 'sycl' or 'opencl'"):
        execution_path(CPU)


# --- the SYCL path's pyopencl facade ------------------------------------------------------------

FACADE_KERNELS = r"""
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void scalars(__global double *o, const half h, const uchar b, const double d) { o[0] = h; o[1] = b; o[2] = d; }
__kernel void dims(__global long *o) {
    if (get_global_id(0) == 0 && get_global_id(1) == 0) {
        o[0] = get_global_size(0); o[1] = get_global_size(1); o[2] = get_local_size(0); o[3] = get_local_size(1);
    }
}
__kernel void scale(__global float *x, const float a, const long n, __local float *tmp) {
    size_t i = get_global_id(0), l = get_local_id(0);
    tmp[l] = i < n ? x[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < n) x[i] = a * tmp[l];
}
"""


def test_facade_launches_arrays_and_refusals(sycl_path):
    import sys

    from mkbench.backends.sycl.common import Cheat
    from mkbench.backends.sycl.dpctl import facade
    from mkbench.backends.sycl.paths import build, runtime_for
    real = sys.modules["pyopencl"]
    rt = runtime_for(CPU)  # the SYCL path's runtime (the fixture chose it)
    q = rt.facade_queue
    prog = build(rt, FACADE_KERNELS, None, None)
    with facade.installed():
        import pyopencl as cl
        import pyopencl.array as cla
        assert cl is facade.cl_module and cla is facade.array_module
        dims = cla.zeros(q, (4,), np.int64)
        prog.dims(q, (64, 8), (16, 2), dims.data)  # OpenCL's order: dimension 0 is the fastest-varying
        assert dims.get().tolist() == [64, 8, 16, 2]
        got = cla.empty(q, (3,), np.float64)
        prog.scalars(q, (1,), None, got, np.float16(2.5), np.uint8(7), np.float64(1e300))  # each at its own width
        assert got.get().tolist() == [2.5, 7.0, 1e300]
        x = cla.to_device(q, np.arange(300, dtype=np.float32))
        prog.scale(q, (512,), (256,), x, np.float32(2), np.int64(300), cl.LocalMemory(256 * 4))
        assert rt.in_flight  # the launch's buffers stay referenced until the queue is waited for
        assert np.array_equal(x.get(), 2 * np.arange(300, dtype=np.float32))
        assert (x.reshape(3, -1).shape == (3, 100) and x.reshape(3, -1).data is x.data
                and x.view(np.int32).dtype == np.int32)
        assert cla.empty(q, (5,), np.float16).fill(1.5).get().tolist() == [1.5] * 5
        for cheat in (lambda: x + 1, lambda: 2 * x, lambda: x.sum(), lambda: x.astype(np.float64),
                      lambda: cla.arange(q, 0, 4, 1),
                      lambda: cl.CommandQueue(q.context), lambda: cl.Program(q.context, "").build(),
                      lambda: __import__("pyopencl.clmath").clmath.erf(x)):
            with pytest.raises(Cheat):
                cheat()
        with pytest.raises(AttributeError, match="not part of the pyopencl API on the sycl backend's SYCL path"):
            cl.enqueue_copy(q, np.empty(3), x.data)
        with pytest.raises(ImportError, match="pyopencl.tools is not available on the sycl backend's SYCL path"):
            import pyopencl.tools  # noqa: F401
        with pytest.raises(TypeError, match="numpy scalars of the parameter's type"):
            prog.scale(q, (512,), (256,), x, 2.0, np.int64(300), cl.LocalMemory(1024))
        with pytest.raises(TypeError, match="takes 4 kernel arguments, got 2"):
            prog.scale(q, (512,), (256,), x, np.float32(2))
        with pytest.raises(ValueError, match="must be a multiple of the local size"):
            prog.scale(q, (300,), (256,), x, np.float32(2), np.int64(300), cl.LocalMemory(1024))
        with pytest.raises(RuntimeError, match="refused the launch"):  # an int where the kernel takes a long
            prog.scale(q, (512,), (256,), x, np.float32(2), np.int32(300), cl.LocalMemory(1024))
        with pytest.raises(AttributeError, match="defines no kernel 'missing' \\(it defines: scalars, dims, scale\\)"):
            prog.missing
    rt.wait()
    assert not rt.in_flight and sys.modules["pyopencl"] is real  # pyopencl itself is back outside


def test_replacing_the_facades_launch_counting_is_caught(monkeypatch):
    pytest.importorskip("dpctl")
    from mkbench.backends.sycl.dpctl import facade
    assert facade.watch_intact() is None
    monkeypatch.setattr(facade.Kernel, "__call__", lambda *a, **k: None)
    assert "Kernel.__call__ was replaced" in facade.watch_intact()


def test_sycl_cpp_form_is_reported_unavailable(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert "icpx -fsycl or acpp" in sycl_cpp_reason() and "none is on PATH" in sycl_cpp_reason()
    path = _write(tmp_path, "activation/gelu.py", 'SYCL_SOURCE = "..."\ndef kernel_function(x):\n    return x\n')
    assert "none is on PATH" in SyclBackend().static_problem(REG.tasks["gelu"], path)


def test_contract_is_listed(cli):
    code, out, _ = cli("list", "backends", "--verbose")
    assert code == 0 and "OPENCL_SOURCE" in out and "kernel_function(prog, queue, *inputs)" in out


# --- on the GPU ---------------------------------------------------------------------------------

def _gpu_opencl_or_skip(hw):
    try:
        SyclBackend().availability(hw)
    except Unavailable as exc:
        pytest.skip(f"sycl backend unavailable on the GPU ({exc.reason}); source .whl/gpu-env.sh first")


@pytest.mark.gpu
def test_references_on_the_gpu(tmp_path, cli):
    """Every reference on NVIDIA's OpenCL driver: small and awkward shapes, timed with events."""
    from mkbench.engine.lane import Limits
    from mkbench.engine.runner import probe_device
    from mkbench.hardware import resolve_profile
    hw = resolve_profile("auto", REG.hardware, probe_device(Limits()))
    _gpu_opencl_or_skip(hw)
    out = tmp_path / "r.json"
    code, stdout, _ = cli("run", "--backend", "sycl", "--shape-role", "small", "--shape-role", "awkward", "--baselines",
                          "none", "--time-budget-ms", "100", "--store", tmp_path / "r.sqlite", "--json", out,
                          "--no-progress",
                          *[a for t in MATRIX_TASKS for a in ("--task", t.split("/")[1])])
    assert code == 0, stdout
    rows = _rows(out)
    assert len({r["task"] for r in rows}) == len(MATRIX_TASKS)
    for r in rows:
        assert r["verdict"] == "correct", (r["task"], r["shape"], r["dtype"], r["error"])
        assert r["timer"] == "opencl-profiling-events" and not r["interpreted"]
        assert r["extra"]["host_median_us"] is not None  # the wall-clock cross-check is on for GPUs


@pytest.mark.gpu
def test_large_shapes_on_the_gpu(tmp_path, cli):
    """The timing shapes: 64-bit offsets, many work-groups, and the roofline floor check."""
    from mkbench.engine.lane import Limits
    from mkbench.engine.runner import probe_device
    from mkbench.hardware import resolve_profile
    hw = resolve_profile("auto", REG.hardware, probe_device(Limits()))
    _gpu_opencl_or_skip(hw)
    out = tmp_path / "r.json"
    code, stdout, _ = cli("run", "--backend", "sycl", "--shape-role", "large", "--baselines", "eager", "--seeds", "1",
                          "--time-budget-ms", "300", "--task", "matmul", "--task", "layer_norm", "--task", "trsv",
                          "--task", "dropout", "--store", tmp_path / "r.sqlite", "--json", out, "--no-progress")
    assert code == 0, stdout
    for r in _rows(out):
        if r["backend"] == "sycl":
            assert r["verdict"] == "correct", (r["task"], r["dtype"], r["error"])
