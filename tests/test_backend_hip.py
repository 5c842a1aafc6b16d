"""The hip backend. On this CPU machine (no GPU; nvcc and Debian's hipcc 5.2 present) it runs in
compile-only mode: HIP_SOURCE is compiled with nvcc for sm_90 through hip_on_cuda.h (the gating
verdict) and with hipcc for the AMD targets it knows (side checks kept in extra.compile_checks).
The GPU tests (marked gpu) run the references through the loader on an NVIDIA GPU."""

import json
import re
import textwrap
from pathlib import Path

import pytest

from mkbench import Unavailable
from mkbench.backends.hip import compile as hip_compile
from mkbench.backends.hip import loader
from mkbench.backends.native import kernel_names, nvcc
from mkbench.errors import CompileError
from mkbench.plugins import build_registry

REG = build_registry()
HIP = REG.backends["hip"]
REFS = HIP.reference_dir()
needs_nvcc = pytest.mark.skipif(nvcc.find_nvcc() is None, reason="nvcc not installed")
needs_hipcc = pytest.mark.skipif(hip_compile.find_hipcc() is None, reason="hipcc not installed")

TASKS = ["activation/elu", "activation/gelu", "activation/logsigmoid", "activation/prelu_channel",
         "convolution/conv1d", "convolution/conv2d_3x3", "convolution/conv2d_pointwise",
         "convolution/depthwise_conv2d", "fusion/add_layernorm", "fusion/bias_gelu_residual", "fusion/rope_apply",
         "fusion/swiglu", "index/embedding", "index/embedding_bag_sum", "index/index_select_rows", "index/one_hot",
         "linear_algebra/gemv", "linear_algebra/ger_rank1_update", "linear_algebra/tridiagonal_solve",
         "linear_algebra/trsv", "loss/bce_with_logits", "loss/cross_entropy", "loss/margin_ranking_loss",
         "loss/mse_loss", "math/cumsum", "math/hypot", "math/logaddexp", "math/logsumexp", "matmul/bmm",
         "matmul/int8_matmul_int32", "matmul/matmul", "matmul/matmul_nt", "normalization/batch_norm_inference",
         "normalization/l2_normalize", "normalization/layer_norm", "normalization/rms_norm", "optimizer/adam_step",
         "optimizer/adamw", "optimizer/lion", "optimizer/sgd_nesterov", "pooling/avg_pool2d",
         "pooling/global_avg_pool", "pooling/max_pool1d", "pooling/max_pool2d",
         "quantization/dequantize_int8_per_channel", "quantization/quantize_int8_per_channel_sym",
         "quantization/quantize_int8_per_tensor_asym", "quantization/quantize_int8_rowwise", "random/bernoulli_mask",
         "random/dropout", "random/normal_fill", "random/uniform_fill", "reduce/amax_middle_dim",
         "reduce/argmax_lastdim", "reduce/l2_norm_rows", "reduce/sum_lastdim", "spatial/nchw_to_nhwc",
         "spatial/pixel_shuffle", "spatial/upsample_bilinear2d", "spatial/upsample_nearest2d"]

BROKEN = '''import numpy as np
import torch

from mkbench.backends.hip import load_module

HIP_SOURCE = r"""
#include <hip/hip_runtime.h>
extern "C" __global__ void row_sum_f32(const float* x, float* y, int C) {
    float s = 0.0f;
    for (int i = threadIdx.x; i < C; i += blockDim.x) s += x[(long long)blockIdx.x * C + i];
    for (int o = warpSize / 2; o > 0; o >>= 1) s += __shfl_down(s, o);
    if (threadIdx.x == 0) y[blockIdx.x] = s + undefined_offset;
}
"""

_k = load_module(HIP_SOURCE).get_function("row_sum_f32")


def kernel_function(x):
    y = torch.empty(x.shape[0], dtype=x.dtype, device=x.device)
    _k((x.shape[0],), (64,), (x, y, np.int32(x.shape[1])))
    return y
'''
BROKEN_LINE = 12


def _solutions(tmp_path, files):
    for rel, text in files.items():
        path = tmp_path / "sol" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path / "sol"


def _rows(path):
    return [r for r in json.loads(Path(path).read_text())["results"] if r["verdict"] != "skipped"]


def _extra(row):
    return row["extra"] if isinstance(row["extra"], dict) else json.loads(row["extra"] or "{}")


def test_registered_with_a_contract(cli):
    assert REG.origin[("backend", "hip")] == "hip"
    assert "HIP_SOURCE" in HIP.candidate_contract and "load_module" in HIP.candidate_contract
    code, out, _ = cli("list", "backends", "--verbose")
    assert code == 0 and f"hip: {HIP.candidate_contract}" in out


def test_every_task_has_a_reference():
    assert sorted(p.relative_to(REFS).with_suffix("").as_posix() for p in REFS.glob("*/*.py")) == TASKS


def test_availability(monkeypatch):
    assert HIP.compile_only(REG.hardware["h100"]) is None
    assert HIP.compile_only(REG.hardware["mi300x"]) is None
    assert "no AMD or NVIDIA GPU" in HIP.compile_only(REG.hardware["cpu"])
    monkeypatch.setattr(nvcc, "find_nvcc", lambda: None)
    with pytest.raises(Unavailable, match="no nvcc to compile-check HIP sources"):
        HIP.availability(REG.hardware["cpu"])


def test_static_problem_needs_hip_source(tmp_path):
    task = REG.tasks["gelu"]
    assert HIP.static_problem(task, REFS / "activation" / "gelu.py") is None
    (tmp_path / "a.py").write_text("def kernel_function(x):\n    return x\n")
    assert "defines no top-level HIP_SOURCE" in HIP.static_problem(task, tmp_path / "a.py")
    (tmp_path / "b.py").write_text("HIP_SOURCE = open('k.hip').read()\ndef kernel_function(x):\n    return x\n")
    assert "HIP_SOURCE is not a constant string" in HIP.static_problem(task, tmp_path / "b.py")


@pytest.mark.parametrize("path", sorted(REFS.glob("*/*.py")), ids=lambda p: p.stem)
def test_references_have_no_findings(path):
    assert HIP.static_findings(REG.tasks[path.stem], path) == []


def test_only_the_loader_may_be_imported(tmp_path):
    path = tmp_path / "c.py"
    path.write_text("import torch\nfrom mkbench.backends.hip import load_module, loader\nHIP_SOURCE = ''\n"
                    "def kernel_function(x):\n    return torch.relu(x)\n")
    checks = {f.check for f in HIP.static_findings(REG.tasks["gelu"], path)}
    assert checks == {"harness_access", "framework_op"}


def test_nvidia_text_maps_lines_and_blanks_hip_includes():
    text = loader.nvidia_text("#include <hip/hip_runtime.h>\n#include \"hip/hip_fp16.h\"\nint x;\n", ("cand.py", 7))
    body = text.split('#line 7 "cand.py"\n', 1)[1]
    assert body.splitlines() == ["", "", "int x;"]  # line numbers kept
    assert text.startswith('#line 1 "hip_on_cuda.h"\n') and "mkb_shfl_down" in text


@pytest.mark.parametrize("path", sorted(REFS.glob("*/*.py")), ids=lambda p: p.stem)
def test_reference_kernel_names_are_the_launched_ones(path):
    # kernel_names reads HIP_SOURCE too: every kernel a reference defines is fetched by name.
    launched = set(re.findall(r'get_function\("(\w+)"\)', path.read_text()))
    assert launched and kernel_names(path) == launched


@needs_nvcc
def test_all_references_compile_for_nvidia():
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda path: hip_compile.nvcc_check(path, "sm_90"), sorted(REFS.glob("*/*.py"))))


@needs_nvcc
@needs_hipcc
def test_reference_and_broken_source_through_the_pipeline(tmp_path, cli):
    sol = _solutions(tmp_path,
                     {"reduce/sum_lastdim.py": BROKEN, "math/cumsum.py": (REFS / "math" / "cumsum.py").read_text()})
    code, out, err = cli("run", "--backend", "hip", "--hw", "cpu", "--solutions", sol, "--task", "cumsum",
                         "--task", "sum_lastdim", "--shape-role", "small", "--baselines", "none",
                         "--store", tmp_path / "r.sqlite", "--json", tmp_path / "r.json", "--no-progress")
    assert code == 0, err
    rows = _rows(tmp_path / "r.json")
    cumsum = [r for r in rows if r["task"] == "cumsum"]
    assert {r["verdict"] for r in cumsum} == {"compiled"}
    checks = _extra(cumsum[0])["compile_checks"]
    assert checks["hipcc --offload-arch=gfx90a"] == {"ok": True, "message": ""}
    assert set(checks) == {f"hipcc --offload-arch={t}" for t in hip_compile.AMD_TARGETS}
    for target in ("gfx940", "gfx942"):  # each either compiled or is recorded as unknown to this hipcc
        assert (checks[f"hipcc --offload-arch={target}"]["ok"]
                or "not known to this hipcc" in checks[f"hipcc --offload-arch={target}"]["message"])

    broken = [r for r in rows if r["task"] == "sum_lastdim"]
    assert {r["verdict"] for r in broken} == {"compile_error"}
    message = broken[0]["error"]
    assert 'identifier "undefined_offset" is undefined' in message
    assert f"{(sol / 'reduce' / 'sum_lastdim.py').as_posix()}({BROKEN_LINE}): error" in message
    side = _extra(broken[0])["compile_checks"]["hipcc --offload-arch=gfx90a"]
    assert (side["ok"] is False and "undefined_offset" in side["message"]
            and f"sum_lastdim.py:{BROKEN_LINE}" in side["message"])


def test_hip_source_not_found_is_a_compile_error(tmp_path):
    (tmp_path / "a.py").write_text("def kernel_function(x):\n    return x\n")
    with pytest.raises(CompileError, match="no HIP source found statically"):
        hip_compile.nvcc_check(tmp_path / "a.py", "sm_90")


def test_launch_counter_counts_loader_launches():
    fn = loader.HipFunction("k", lambda grid, block, args, shared_mem: None)
    with HIP.launch_counter() as none:
        pass
    assert none.count == 0
    with HIP.launch_counter() as counter:
        fn(4, (64,), ())
        fn((2, 2), (64, 1, 1), (), shared_mem=128)
    assert counter.count == 2
    with pytest.raises(ValueError, match="1 to 3 dimensions"):
        fn((1, 1, 1, 1), 64, ())


# --- on a GPU -------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_references_pass_on_gpu(tmp_path, cli):
    code, out, err = cli("run", "--backend", "hip", "--hw", "auto", "--shape-role", "small", "--shape-role", "awkward",
                         "--baselines", "none", "--seeds", "1", "--time-budget-ms", "50", "--store",
                         tmp_path / "r.sqlite",
                         "--json", tmp_path / "r.json", "--no-progress",
                         *[a for t in TASKS for a in ("--task", t.split("/")[1])])  # the rest would be "missing"
    assert code == 0, err
    rows = _rows(tmp_path / "r.json")
    assert {r["task"] for r in rows} == {t.split("/")[1] for t in TASKS}
    bad = [(r["task"], r["shape"], r["dtype"], r["verdict"], r["error"]) for r in rows if r["verdict"] != "correct"]
    assert not bad, bad


@pytest.mark.gpu
def test_broken_source_on_gpu_names_the_line(tmp_path, cli):
    sol = _solutions(tmp_path, {"reduce/sum_lastdim.py": BROKEN})
    cli("run", "--backend", "hip", "--hw", "auto", "--solutions", sol, "--task", "sum_lastdim", "--shape-role", "small",
        "--baselines", "none", "--store", tmp_path / "r.sqlite", "--json", tmp_path / "r.json", "--no-progress")
    rows = _rows(tmp_path / "r.json")
    assert {r["verdict"] for r in rows} == {"compile_error"}
    assert "undefined_offset" in rows[0]["error"] and f"sum_lastdim.py({BROKEN_LINE})" in rows[0]["error"]
