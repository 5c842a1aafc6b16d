"""The Pallas backend. On this CPU: real Pallas kernels run through the pipeline in the Pallas
interpreter (shipped references, and candidates that cheat or break), every shipped reference
also lowers to Triton IR for CUDA (the compile check the CPU run records), DLPack hand-over and
the launch counter are checked in-process. The GPU tests run the references on an NVIDIA GPU."""

import json
import textwrap
from pathlib import Path

import pytest
import torch

from mkbench.errors import Unavailable
from mkbench.plugins import build_registry

REG = build_registry()
PALLAS = REG.backends["pallas"]
REFS = Path(PALLAS.reference_dir())
TRITON_REFS = REFS.parent.parent / "triton" / "kernels"
HEADER = ("import functools\nimport jax\nimport jax.numpy as jnp\nfrom jax.experimental import pallas as pl\n"
          "from jax.experimental.pallas import triton as plt\n")


def _rows(path):
    return [r for r in json.loads(Path(path).read_text())["results"] if r["verdict"] != "skipped"]


def _extra(row):
    return row["extra"] if isinstance(row["extra"], dict) else json.loads(row["extra"])


# --- parent side: registration, contract, availability ------------------------------------------

def test_registered_with_a_contract(cli):
    assert REG.origin[("backend", "pallas")] == "pallas"
    assert PALLAS.suffix == ".py"
    assert "DLPack" in PALLAS.candidate_contract and "pallas_call" in PALLAS.candidate_contract
    code, out, _ = cli("list", "backends", "--verbose")
    assert code == 0 and "pallas_call" in out


# The portability matrix: 60 tasks, at least four per category, each with a reference on every backend
# (Triton, CUDA, HIP, Pallas, SYCL).
MATRIX = (
    "activation/elu", "activation/gelu", "activation/logsigmoid", "activation/prelu_channel",
    "convolution/conv1d", "convolution/conv2d_3x3", "convolution/conv2d_pointwise", "convolution/depthwise_conv2d",
    "fusion/add_layernorm", "fusion/bias_gelu_residual", "fusion/rope_apply", "fusion/swiglu",
    "index/embedding", "index/embedding_bag_sum", "index/index_select_rows", "index/one_hot",
    "linear_algebra/gemv", "linear_algebra/ger_rank1_update", "linear_algebra/tridiagonal_solve", "linear_algebra/trsv",
    "loss/bce_with_logits", "loss/cross_entropy", "loss/margin_ranking_loss", "loss/mse_loss",
    "math/cumsum", "math/hypot", "math/logaddexp", "math/logsumexp",
    "matmul/bmm", "matmul/int8_matmul_int32", "matmul/matmul", "matmul/matmul_nt",
    "normalization/batch_norm_inference", "normalization/l2_normalize", "normalization/layer_norm",
    "normalization/rms_norm",
    "optimizer/adam_step", "optimizer/adamw", "optimizer/lion", "optimizer/sgd_nesterov",
    "pooling/avg_pool2d", "pooling/global_avg_pool", "pooling/max_pool1d", "pooling/max_pool2d",
    "quantization/dequantize_int8_per_channel", "quantization/quantize_int8_per_channel_sym",
    "quantization/quantize_int8_per_tensor_asym", "quantization/quantize_int8_rowwise",
    "random/bernoulli_mask", "random/dropout", "random/normal_fill", "random/uniform_fill",
    "reduce/amax_middle_dim", "reduce/argmax_lastdim", "reduce/l2_norm_rows", "reduce/sum_lastdim",
    "spatial/nchw_to_nhwc", "spatial/pixel_shuffle", "spatial/upsample_bilinear2d", "spatial/upsample_nearest2d",
)
CATEGORIES = sorted({name.split("/")[0] for name in MATRIX})


def test_a_reference_for_every_task_of_the_matrix():
    ours = {str(p.relative_to(REFS).with_suffix("")) for p in REFS.glob("*/*.py")}
    assert ours == set(MATRIX) and len(MATRIX) == 60
    assert all((TRITON_REFS / f"{name}.py").exists() for name in MATRIX)
    per_category = {c: sum(name.startswith(c + "/") for name in MATRIX) for c in CATEGORIES}
    assert len(per_category) == 15 and min(per_category.values()) >= 4, per_category


def test_availability_reasons(monkeypatch):
    PALLAS.availability(REG.hardware["cpu"])  # jax is installed here: the interpreter runs
    with pytest.raises(Unavailable, match="TPU"):
        PALLAS.availability(REG.hardware["tpu-v5e"])
    with pytest.raises(Unavailable, match="not on xpu"):
        PALLAS.availability(REG.hardware["max1550"])
    import mkbench.backends.pallas as module
    monkeypatch.setattr(module, "_jax_gpu_plugin", lambda kind: False)
    with pytest.raises(Unavailable, match="without a CUDA runtime"):
        PALLAS.availability(REG.hardware["h100"])
    with pytest.raises(Unavailable, match="without a ROCM runtime"):
        PALLAS.availability(REG.hardware["mi300x"])
    monkeypatch.setattr(module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(Unavailable, match="jax package is not installed"):
        PALLAS.availability(REG.hardware["cpu"])


def test_worker_env():
    cpu, h100 = PALLAS.worker_env(REG.hardware["cpu"]), PALLAS.worker_env(REG.hardware["h100"])
    for env in (cpu, h100):
        assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false" and env["JAX_ENABLE_X64"] == "1"
    assert cpu["JAX_PLATFORMS"] == "cpu" and h100["JAX_PLATFORMS"] == "cuda,cpu"
    assert PALLAS.interpreted(REG.hardware["cpu"]) and not PALLAS.interpreted(REG.hardware["h100"])


# --- static findings --------------------------------------------------------------------------

def _scan(body):
    from mkbench.backends.pallas.static import scan_pallas
    return scan_pallas(HEADER + textwrap.dedent(body))


@pytest.mark.parametrize("path", sorted(REFS.glob("*/*.py")), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_references_have_no_findings(path):
    assert PALLAS.static_findings(REG.tasks[path.stem], path) == []


KERNEL = """
    def _k(x_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = jnp.sum(x * jnp.exp(x)) + _helper(x).sum() + (x @ x).max()
    def _helper(v):
        return jnp.tanh(v)
"""


def test_kernel_code_may_compute():
    for launch in ("pl.pallas_call(_k, out_shape=x)(x)",
                   "pl.pallas_call(functools.partial(_k), out_shape=x)(x)",
                   "pl.pallas_call(kernel, out_shape=x)(x)"):
        body = KERNEL + f"""
    def kernel_function(x):
        kernel = functools.partial(_k)
        return {launch}
"""
        assert _scan(body) == [], launch


@pytest.mark.parametrize("body, check", [
    ("@jax.jit\ndef kernel_function(x):\n    return jnp.tanh(x)\n", "framework_op"),
    ("def kernel_function(x):\n    return jax.nn.gelu(x)\n", "framework_op"),
    ("def kernel_function(x):\n    return x.sum(axis=1)\n", "framework_op"),
    ("@jax.jit\ndef kernel_function(a, b):\n    return a @ b\n", "framework_op"),
    ("def kernel_function(x):\n    return jax.lax.cumsum(x, 1)\n", "framework_op"),
    ("def kernel_function(x):\n    return jax.pure_callback(f, x, x)\n", "host_callback"),
    ("jax.config.update('jax_default_matmul_precision', 'tensorfloat32')\ndef kernel_function(x):\n    return x\n",
     "patching"),
    ("from jax._src.pallas import pallas_call as pc\ndef kernel_function(x):\n    return x\n", "introspection"),
    ("def kernel_function(x):\n    return x if isinstance(x, jax.core.Tracer) else x\n", "introspection"),
])
def test_host_compute_and_escapes_are_flagged(body, check):
    assert check in {f.check for f in _scan(body)}


def test_allocation_reshape_cast_pad_allowed():
    body = """
    def kernel_function(x):
        y = jnp.pad(x.reshape(-1).astype(jnp.float32), (0, 3))
        z = jnp.zeros_like(y)
        return jnp.asarray(y, dtype=jnp.bfloat16), z, jax.lax.slice(y, (0,), (4,))
"""
    assert _scan(body) == []


# --- in-process: DLPack, launch counting, failures ------------------------------------------------

@pytest.fixture
def jax_cpu():
    """JAX set up as the worker sets it up (x64, pallas_call interpreting), undone afterwards."""
    import jax
    import jax.experimental.pallas as pl

    from mkbench.backends.pallas import runtime
    x64, mosaic, original = jax.config.jax_enable_x64, jax.config.jax_pallas_use_mosaic_gpu, pl.pallas_call
    runtime.setup("cpu")
    yield runtime
    pl.pallas_call = getattr(pl.pallas_call, "__mkbench_original__", original)
    runtime.INTERPRET = False
    jax.config.update("jax_enable_x64", x64)
    jax.config.update("jax_pallas_use_mosaic_gpu", mosaic)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.int64])
def test_dlpack_handover_without_copies(jax_cpu, dtype):
    import jax.numpy as jnp
    t = (torch.arange(24).reshape(4, 6) - 5).to(dtype)
    a = jax_cpu.to_jax(t)
    assert a.unsafe_buffer_pointer() == t.data_ptr() and str(a.dtype) == str(dtype).removeprefix("torch.")
    out = jax_cpu.to_torch(a + jnp.ones((), a.dtype), 0)
    assert type(out) is torch.Tensor and out.dtype == dtype and torch.equal(out, t + 1)
    assert out.untyped_storage().data_ptr() != t.untyped_storage().data_ptr()
    with pytest.raises(TypeError, match="returns JAX arrays"):
        jax_cpu.to_torch(t, 0)


def _copy_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


def _count(runtime, fn, *args):
    from mkbench.backends.pallas import PallasLaunchCounter
    cand = runtime.Candidate(fn, None, interpret=True)
    with PallasLaunchCounter() as counter:
        out = runtime.call(cand, args)
    return counter.count, out


def test_launch_counter_counts_live_kernels_even_when_jit_cached(jax_cpu):
    import jax
    from jax.experimental import pallas as pl

    @jax.jit
    def real(x):
        return pl.pallas_call(_copy_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    @jax.jit
    def dead_kernel(x):  # a kernel runs, but the answer comes from XLA
        pl.pallas_call(_copy_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
        return x * 2

    x = torch.arange(8, dtype=torch.float32)
    for _ in range(2):  # the second call hits the jit cache: still counted
        n, out = _count(jax_cpu, real, x)
        assert n == 1 and torch.equal(out, x * 2)
    assert _count(jax_cpu, dead_kernel, x)[0] == 0
    assert _count(jax_cpu, lambda v: v * 2, x)[0] == 0
    assert _count(jax_cpu, lambda v, s: real(v) * s, x, 3.0)[0] == 1  # Python scalars stay static


def test_both_kernels_of_a_two_kernel_reference_count(jax_cpu):
    """quantize_int8_per_tensor_asym is a global reduction, then a pass that needs its result: two
    pallas_call sites, both live (the second reads the first's partials), so both are counted."""
    task = REG.tasks["quantize_int8_per_tensor_asym"]
    cand = jax_cpu.load(task.name, REFS / task.category / f"{task.name}.py", "cpu")
    (x,) = task.make_inputs(task.shape("small"), torch.float32, torch.Generator().manual_seed(0))
    n, (q, scale, zero_point) = _count(jax_cpu, cand.fn, x)
    assert n == 2
    assert q.dtype == torch.uint8 and q.shape == x.shape
    assert scale.shape == () and zero_point.shape == () and zero_point.dtype == torch.int32


def test_untraceable_candidate_is_an_error(jax_cpu):
    import jax.numpy as jnp
    import numpy as np
    with pytest.raises(jax_cpu.PallasRunError, match="could not be traced"):
        _count(jax_cpu, lambda v: jnp.asarray(np.asarray(v) * 2), torch.ones(4))


def test_kernel_trace_error_is_a_compile_failure(jax_cpu, tmp_path):
    src = tmp_path / "bad.py"
    src.write_text(HEADER + textwrap.dedent("""
        def _k(x_ref, o_ref):
            o_ref[...] = x_ref[...] + jnp.ones((3,))
        def kernel_function(x):
            return pl.pallas_call(_k, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
    """))
    cand = jax_cpu.load("gelu", src, "cpu")
    with pytest.raises(jax_cpu.PallasRunError) as info:
        jax_cpu.call(cand, (torch.ones(4, 8),))
    assert PALLAS.is_compile_error(info.value)
    assert f"{src}:8:" in str(info.value)  # the kernel's line
    assert not PALLAS.is_compile_error(ValueError("a plain runtime error"))


# --- the pipeline, real workers ------------------------------------------------------------------

def test_references_through_the_pipeline(tmp_path, cli):
    """Three shipped kernels (int64 gather, int8 + float32 tuple output, statistical RNG with
    scalars) at their awkward shapes, interpreted: correct, launches counted, interpreted times."""
    out = tmp_path / "r.json"
    code, _, err = cli("run", "--backend", "pallas", "--hw", "cpu", "--task", "embedding", "--task",
                       "quantize_int8_rowwise",
                       "--task", "dropout", "--shape-role", "awkward", "--baselines", "none", "--seeds", "1",
                       "--time-budget-ms", "20", "--store", tmp_path / "r.sqlite", "--json", out, "--no-progress")
    rows = _rows(out)
    assert code == 0, err
    assert {(r["task"], r["dtype"]) for r in rows} == {(t, d) for t in ("embedding", "quantize_int8_rowwise", "dropout")
                                                       for d in ("float32", "bfloat16")}
    for r in rows:
        where = f"{r['task']} {r['dtype']}"
        assert r["verdict"] == "correct", f"{where}: {r['error']}"
        assert r["perf_status"] == "interpreted" and r["timer"] == "host-clock" and r["interpreted"] == 1, where
        check = _extra(r)["compile_checks"]["pallas->triton lowering (cuda)"]
        assert check["ok"] and "lowered to Triton IR for CUDA" in check["message"], where


def test_later_references_through_the_pipeline(tmp_path, cli):
    """Three of the later references, for what the first three do not exercise: float64 and a
    scratch output that is not returned (tridiagonal_solve), two kernels with uint8 and 0-d
    outputs (quantize_int8_per_tensor_asym), and subnormal operands, which XLA:CPU (the
    interpreter) flushes to zero in any float instruction (hypot decodes their bits instead)."""
    out = tmp_path / "r.json"
    tasks = ("tridiagonal_solve", "quantize_int8_per_tensor_asym", "hypot")
    code, _, err = cli("run", "--backend", "pallas", "--hw", "cpu", *[a for t in tasks for a in ("--task", t)],
                       "--shape-role", "awkward", "--baselines", "none", "--seeds", "1", "--no-timing",
                       "--store", tmp_path / "r.sqlite", "--json", out, "--no-progress")
    rows = _rows(out)
    assert code == 0, err
    assert {(r["task"], r["dtype"]) for r in rows} == {(t, d) for t in tasks for d in REG.tasks[t].dtypes}
    for r in rows:
        where = f"{r['task']} {r['dtype']}"
        assert r["verdict"] == "correct", f"{where}: {r['error']}"
        assert _extra(r)["compile_checks"]["pallas->triton lowering (cuda)"]["ok"], where


def test_cuda_lowering_check(jax_cpu, tmp_path):
    """The compile check a CPU run records: a shipped kernel lowers to Triton IR for CUDA; one
    using erf (which Pallas's Triton lowering lacks, while the interpreter runs it) is reported
    with the lowering's message and the line of its pallas_call."""
    cpu = REG.hardware["cpu"]
    good = PALLAS.compile_checks(REG.tasks["gelu"], REFS / "activation" / "gelu.py", cpu)
    assert good["pallas->triton lowering (cuda)"]["ok"], good
    src = tmp_path / "gelu.py"
    src.write_text(HEADER + textwrap.dedent("""
        def _k(x_ref, o_ref):
            x = x_ref[...].astype(jnp.float32)
            o_ref[...] = (0.5 * x * (1 + jax.lax.erf(x * 0.7071067811865476))).astype(o_ref.dtype)
        def kernel_function(x):
            return pl.pallas_call(_k, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                                  in_specs=[pl.BlockSpec(x.shape, lambda: (0, 0))],
                                  out_specs=pl.BlockSpec(x.shape, lambda: (0, 0)))(x)
    """))
    bad = PALLAS.compile_checks(REG.tasks["gelu"], src, cpu)["pallas->triton lowering (cuda)"]
    # Lowering runs after tracing: the deepest frame of the file is the pallas_call (line 11).
    assert not bad["ok"] and "Triton lowering: erf" in bad["message"] and f"{src}:11" in bad["message"], bad
    n, out = _count(jax_cpu, jax_cpu.load("gelu", src, "cpu").fn, torch.ones(64, 1024))  # the interpreter runs it
    assert n == 1 and torch.allclose(out, torch.nn.functional.gelu(torch.ones(64, 1024)))


BAD = {
    # A decoy with no call the static scan could object to: operators only, no kernel.
    "activation/leaky_relu.py": """
        def kernel_function(x):
            pos = (x > 0).astype(x.dtype)
            return x * pos + x * (1 - pos) * 0.01
    """,
    # The kernel does not trace: a compile error carrying JAX's message and the kernel's line.
    "activation/softplus.py": """
        def _k(x_ref, o_ref):
            o_ref[...] = x_ref[...] + jnp.ones((3,), x_ref.dtype)
        def kernel_function(x):
            return pl.pallas_call(_k, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
    """,
}


def test_decoy_and_broken_kernel_through_the_pipeline(tmp_path, cli):
    sol = tmp_path / "sol"
    for rel, body in BAD.items():
        (sol / rel).parent.mkdir(parents=True, exist_ok=True)
        (sol / rel).write_text(HEADER + textwrap.dedent(body))
    out = tmp_path / "r.json"
    cli("run", "--backend", "pallas", "--hw", "cpu", "--solutions", sol, "--task", "leaky_relu", "--task", "softplus",
        "--shape-role", "small", "--baselines", "none", "--seeds", "1", "--time-budget-ms", "20",
        "--store", tmp_path / "r.sqlite", "--json", out, "--no-progress")
    by_task = {}
    for r in _rows(out):
        by_task.setdefault(r["task"], []).append(r)
    assert len(by_task["leaky_relu"]) == 2 and len(by_task["softplus"]) == 3
    for r in by_task["leaky_relu"]:
        assert r["verdict"] == "framework" and "no pallas kernel of the candidate ran" in r["error"], r["error"]
    for r in by_task["softplus"]:
        assert r["verdict"] == "compile_error" and r["compile_status"] == "error"
        assert "softplus.py:8" in r["error"] and "Incompatible shapes" in r["error"], r["error"]


# --- GPU --------------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("category", CATEGORIES)
def test_references_on_the_gpu(tmp_path, cli, category):
    """One category (four references) per run, a few minutes each: all 60 in one run (a worker and
    its JAX start-up per task, a compile per combination) are estimated to exceed the device's
    10-minute command limit. Select categories with -k."""
    refs = sorted(REFS.glob(f"{category}/*.py"))
    out = tmp_path / "r.json"
    code, _, err = cli("run", "--backend", "pallas", "--hw", "auto", "--shape-role", "small", "--shape-role", "awkward",
                       "--baselines", "none", "--seeds", "1", "--time-budget-ms", "100", "--store",
                       tmp_path / "r.sqlite",
                       "--json", out, "--no-progress",
                       *[a for p in refs for a in ("--task", p.stem)])
    rows = _rows(out)
    assert code == 0, err
    assert {r["task"] for r in rows} == {p.stem for p in refs}
    for r in rows:
        assert r["verdict"] == "correct", f"{r['task']} {r['shape']} {r['dtype']}: {r['error']}"
        assert r["timer"] == "device-sync-host-clock" and r["perf_status"] == "timed"


@pytest.mark.gpu
def test_gpu_dlpack_and_overhead():
    import os
    import subprocess
    import sys
    code = ("from mkbench.backends.pallas import runtime, timing\n"
            "import torch, json\n"
            "runtime.setup('cuda')\n"
            "t = torch.arange(8, dtype=torch.bfloat16, device='cuda')\n"
            "a = runtime.to_jax(t)\n"
            "assert a.unsafe_buffer_pointer() == t.data_ptr(), 'copied'\n"
            "print(json.dumps(timing.measure_overhead('cuda')))\n")
    env = dict(os.environ, **PALLAS.worker_env(REG.hardware["h100"]))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    overhead = json.loads(proc.stdout.strip().splitlines()[-1])
    assert overhead["pallas_empty_kernel_us"] > 0
