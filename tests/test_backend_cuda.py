"""The cuda backend. On this CPU machine (no NVIDIA GPU, nvcc present) it runs in compile-only mode:
every CUDA source of a candidate is compiled with nvcc for sm_90 through the real pipeline, a
broken source is a compile_error carrying nvcc's message at the candidate's file:line, and the
static integrity checks and launch counting are exercised directly. The GPU tests (marked gpu)
run the reference kernels, a decoy and a KernelBench load_inline candidate for real."""

import json
import re
import sys
import textwrap
import types
from pathlib import Path

import pytest
import torch

from mkbench import Unavailable
from mkbench.backends.cuda import compile_with_nvcc, runtime
from mkbench.backends.native import kernel_names, nvcc, sources
from mkbench.errors import CompileError
from mkbench.plugins import build_registry

REG = build_registry()
CUDA = REG.backends["cuda"]
REFS = CUDA.reference_dir()
needs_nvcc = pytest.mark.skipif(nvcc.find_nvcc() is None, reason="nvcc not installed")
KB_FIXTURES = Path(__file__).parent / "fixtures" / "kernelbench"

# The 60 tasks with a reference in every backend (Triton, CUDA, HIP, Pallas, SYCL): the portability matrix.
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

BROKEN = '''import cupy
import numpy as np
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void row_sum_f32(const float* x, float* y, int C) {
    float s = 0.0f;
    for (int i = threadIdx.x; i < C; i += blockDim.x) s += x[(long long)blockIdx.x * C + i];
    s = block_reduce(s);
    if (threadIdx.x == 0) y[blockIdx.x] = s;
}
"""

_k = cupy.RawModule(code=CUDA_SOURCE).get_function("row_sum_f32")


def kernel_function(x):
    y = torch.empty(x.shape[0], dtype=x.dtype, device=x.device)
    _k((x.shape[0],), (32,), (x.data_ptr(), y.data_ptr(), np.int32(x.shape[1])))
    return y
'''
BROKEN_LINE = 9  # the line of block_reduce in the file above

# KernelBench's form with the CUDA side free of torch headers (the launcher takes raw pointers), so
# nvcc checks it in seconds; the binding lives in cpp_sources, which the host compiler builds on a GPU.
LOAD_INLINE = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <cuda_runtime.h>
#include <math.h>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
}

void gelu_launch(const float* x, float* y, long long n, cudaStream_t stream) {
    gelu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(x, y, n);
}
"""

cpp_source = r"""
#include <ATen/cuda/CUDAContext.h>
void gelu_launch(const float* x, float* y, long long n, cudaStream_t stream);

torch::Tensor gelu(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    gelu_launch(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(), at::cuda::getCurrentCUDAStream());
    return y;
}
"""

ext = load_inline(name="mkbench_test_gelu_ext", cpp_sources=cpp_source, cuda_sources=cuda_source,
                  functions=["gelu"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.gelu(x)
'''


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


# --- registration, availability, contract --------------------------------------------------------

def test_registered_with_a_contract(cli):
    assert REG.origin[("backend", "cuda")] == "cuda"
    assert "RawModule" in CUDA.candidate_contract and "load_inline" in CUDA.candidate_contract
    code, out, _ = cli("list", "backends", "--verbose")
    assert code == 0 and f"cuda: {CUDA.candidate_contract}" in out


def test_every_task_has_a_reference():
    assert sorted(p.relative_to(REFS).with_suffix("").as_posix() for p in REFS.glob("*/*.py")) == TASKS


def test_availability(monkeypatch):
    with pytest.raises(Unavailable, match="AMD GPU"):
        CUDA.availability(REG.hardware["mi300x"])
    assert CUDA.compile_only(REG.hardware["h100"]) is None
    monkeypatch.setattr(nvcc, "find_nvcc", lambda: None)
    with pytest.raises(Unavailable, match="no NVIDIA GPU on profile cpu and no nvcc"):
        CUDA.availability(REG.hardware["cpu"])


@needs_nvcc
def test_compile_only_on_a_machine_without_gpu():
    CUDA.availability(REG.hardware["cpu"])
    assert "no NVIDIA GPU on profile cpu" in CUDA.compile_only(REG.hardware["cpu"])
    assert nvcc.arch_for(REG.hardware["cpu"]) == "sm_90" and nvcc.arch_for(REG.hardware["a100-80gb"]) == "sm_80"


# --- the static source rule ----------------------------------------------------------------------

def test_source_rule(tmp_path):
    path = tmp_path / "c.py"
    path.write_text(textwrap.dedent('''\
        import cupy
        from torch.utils.cpp_extension import load_inline
        HEAD = "// head\\n"
        CUDA_SOURCE = r"""
        extern "C" __global__ void k() {}
        """
        OTHER = HEAD + "extern \\"C\\" __global__ void j() {}"
        m1 = cupy.RawModule(code=CUDA_SOURCE)
        m2 = cupy.RawKernel(OTHER, "j")
        m3 = cupy.RawModule(code=f"{HEAD}")
        ext = load_inline(name="e", cpp_sources="int f();", cuda_sources=[r"__global__ void z() {}"], functions=["f"])
        PROBLEM_TEXT = "not CUDA"
        '''))
    found = sources.find(path, "cuda")
    by_label = {s.label: s for s in found.sources}
    assert set(by_label) == {"RawModule code (line 8)", "RawKernel code (line 9)", "load_inline cuda_sources (line 11)",
                             "load_inline cpp_sources (line 11)"}
    cuda = by_label["RawModule code (line 8)"]
    assert cuda.exact and cuda.kind == "nvrtc" and cuda.line == 4 and cuda.text.splitlines()[1].startswith('extern "C"')
    assert not by_label["RawKernel code (line 9)"].exact  # a concatenation: no line mapping
    assert found.unresolved == ["line 10: RawModule code is not a constant string (see the source rule)"]
    assert sources.line_directive(cuda, path) == f'#line 4 "{path.as_posix()}"\n'


def test_kernel_names(tmp_path):
    # The __global__ functions a candidate defines, by the bare name a profiler shows once
    # demangled: extern "C" names, C++ templates and namespaced kernels by their identifier;
    # declarations, comments, strings, #define bodies and host C++ (cpp_sources) are not kernels.
    path = tmp_path / "c.py"
    path.write_text(textwrap.dedent('''\
        import cupy
        from torch.utils.cpp_extension import load_inline
        CUDA_SOURCE = r"""
        #define KERNEL(name) extern "C" __global__ void name(float* x) {}
        // __global__ void commented_out(float* x) {}
        /* __global__ void also_commented(float* x) {} */
        extern "C" __global__ void __launch_bounds__(256, 2) row_sum_f32(const float* x, float* y) { }
        extern "C" __global__ void declared_only(float* x);
        template <typename T, int N>
        __global__ void __launch_bounds__(128) scale(T* __restrict__ x, T a) { x[0] = a * (T)N; }
        template __global__ void scale<float, 2>(float*, float);
        namespace ops { __global__ static void shift_kernel(int* x) { const char* s = "__global__ void no()"; } }
        __device__ float helper(float v) { return v; }
        """
        ext = load_inline(name="e", cpp_sources="void host_only() {}", functions=["f"], cuda_sources=[r"""
        __global__
        void
        relu_kernel (const float* x,
                     float* y) {}
        """])
        '''))
    assert kernel_names(path) == {"row_sum_f32", "scale", "shift_kernel", "relu_kernel"}


def test_kernel_sources_held_in_a_function_local(tmp_path):
    """Generated candidates often hold the kernel source in a local of the function that builds it
    (32 of CUDA-L1's 210 h100 rows). Unresolved, the candidate's own kernel was taken for a
    framework kernel in the device trace: CUDA-L1's VanillaRNN (level 3, 34) was `framework` on an
    H200, its own vanilla_rnn_fused_kernel doing 100% of the work (reports/2026-11-27-gpu-checks)."""
    path = tmp_path / "c.py"
    path.write_text(textwrap.dedent('''\
        import cupy as cp
        HEAD = "// shared\\n"
        class Fused:
            @staticmethod
            def forward(x):
                code = HEAD + """
                extern "C" __global__ void fused_kernel(float* x) {}
                """
                def build():
                    return cp.RawKernel(code, "fused_kernel")  # an enclosing function's local
                return build()
        def twice(flag):
            src = 'extern "C" __global__ void first(float* x) {}'
            if flag:
                src = 'extern "C" __global__ void second(float* x) {}'
            return cp.RawKernel(src, "second")  # rebound: which text runs is not known without running it
        def elsewhere():
            return cp.RawKernel(code, "fused_kernel")  # another function's local: not this one's
        '''))
    found = sources.find(path, "cuda")
    assert [s.label for s in found.sources] == ["RawKernel code (line 10)"]
    assert found.unresolved == ["line 16: RawKernel code is not a constant string (see the source rule)",
                                "line 18: RawKernel code is not a constant string (see the source rule)"]
    assert kernel_names(path) == {"fused_kernel"}


def test_kernel_sources_held_in_an_attribute_of_the_class(tmp_path):
    """`self.code = '''...'''` in __init__, `load_inline(cuda_sources=self.code)` in another method (6
    of CUDA-L1's 210 h100 candidates); an attribute bound twice is not resolved."""
    path = tmp_path / "c.py"
    path.write_text(textwrap.dedent('''\
        from torch.utils.cpp_extension import load_inline
        class ModelNew:
            def __init__(self):
                self.code = """
                __global__ void attr_kernel(float* x) {}
                """
                self.other = "__global__ void a(float* x) {}"
            def build(self):
                self.other = "__global__ void b(float* x) {}"
                ext = load_inline(name="e", cpp_sources="", cuda_sources=self.code, functions=["f"])
                return load_inline(name="g", cpp_sources="", cuda_sources=self.other, functions=["f"])
        '''))
    found = sources.find(path, "cuda")
    assert [s.label for s in found.sources] == ["load_inline cuda_sources (line 10)",
                                                "load_inline cpp_sources (line 10)"]
    assert found.unresolved == ["line 11: load_inline cuda_sources is not a constant string (see the source rule)"]
    assert kernel_names(path) == {"attr_kernel"}


@pytest.mark.parametrize("path", sorted(REFS.glob("*/*.py")), ids=lambda p: p.stem)
def test_reference_kernel_names_are_the_launched_ones(path):
    # Every kernel a reference defines is fetched by name (get_function / RawKernel), and only those.
    launched = set(re.findall(r'(?:get_function\(|RawKernel\([^,]+,\s*)"(\w+)"', path.read_text()))
    assert launched and kernel_names(path) == launched


# --- compile-only runs through the real pipeline -----------------------------------------------

@needs_nvcc
def test_references_compile_through_the_pipeline(tmp_path, cli):
    # Two references through the real pipeline (one spawned worker each: that is what takes the
    # time); test_all_references_compile covers every reference without the workers.
    tasks = ["gelu", "cross_entropy"]
    code, out, err = cli("run", "--backend", "cuda", "--hw", "cpu", *sum((["--task", t] for t in tasks), []),
                         "--shape-role", "small", "--shape-role", "awkward", "--baselines", "none",
                         "--store", tmp_path / "r.sqlite", "--json", tmp_path / "r.json", "--no-progress")
    assert code == 0, err
    rows = _rows(tmp_path / "r.json")
    assert {r["task"] for r in rows} == set(tasks)
    assert all(r["backend"] == "cuda" for r in rows), "no baselines in compile-only mode"
    for r in rows:
        assert (r["verdict"], r["compile_status"], r["correct_status"]) == ("compiled", "ok", "not_run"), r
        assert "nvcc -arch=sm_90" in r["error"]
    assert "compiled only" in out


@needs_nvcc
def test_all_references_compile():
    # Every CUDA string of every reference through nvcc for sm_90, straight through the backend's
    # compile-only path (no worker per task).
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda path: compile_with_nvcc(path, "sm_90"), sorted(REFS.glob("*/*.py"))))


@needs_nvcc
def test_candidates_through_the_pipeline(tmp_path, cli):
    # A broken source is a compile_error carrying nvcc's message at the candidate's file and line;
    # a KernelBench-form (load_inline) candidate compiles.
    sol = _solutions(tmp_path, {"reduce/sum_lastdim.py": BROKEN, "activation/gelu.py": LOAD_INLINE})
    code, out, err = cli("run", "--backend", "cuda", "--hw", "cpu", "--solutions", sol, "--task", "sum_lastdim",
                         "--task", "gelu", "--shape-role", "small", "--baselines", "none", "--store",
                         tmp_path / "r.sqlite",
                         "--json", tmp_path / "r.json", "--no-progress")
    assert code == 0, err
    rows = _rows(tmp_path / "r.json")
    assert {r["verdict"] for r in rows if r["task"] == "gelu"} == {"compiled"}
    broken = [r for r in rows if r["task"] == "sum_lastdim"]
    assert {r["verdict"] for r in broken} == {"compile_error"}
    message = broken[0]["error"]
    assert 'identifier "block_reduce" is undefined' in message  # nvcc's own words
    assert f"{(sol / 'reduce' / 'sum_lastdim.py').as_posix()}({BROKEN_LINE}): error" in message


@needs_nvcc
def test_load_inline_error_names_the_file_and_line(tmp_path):
    broken = LOAD_INLINE.replace("0.70710678118654752f", "sqrt_half")
    path = _solutions(tmp_path, {"activation/gelu.py": broken}) / "activation" / "gelu.py"
    with pytest.raises(CompileError, match=r'gelu\.py\(11\): error: identifier "sqrt_half" is undefined'):
        compile_with_nvcc(path, "sm_90")


@needs_nvcc
@pytest.mark.slow  # nvcc spends about a minute of CPU on torch's headers
def test_imported_kernelbench_candidate_compiles_through_the_pipeline(tmp_path, cli, monkeypatch):
    # KernelBench's usual form: ModelNew whose load_inline cuda_sources include <torch/extension.h>,
    # imported with `mkbench import kernelbench`, then judged by the cuda backend on a machine with
    # no GPU: compiled with torch's include folders and flags, recorded as `compiled` (a broken
    # load_inline source gets nvcc's message: test_load_inline_error_names_the_file_and_line).
    monkeypatch.setenv("MKBENCH_TASK_DIRS", "")
    tasks, sols = tmp_path / "tasks", tmp_path / "sols"
    code, out, err = cli("import", "kernelbench", KB_FIXTURES / "problems" / "19_ReLU.py", "--out", tasks,
                         "--candidates", KB_FIXTURES / "cuda_candidates", "--solutions-out", sols)
    assert code == 0, err
    code, out, err = cli("run", "--backend", "cuda", "--hw", "cpu", "--tasks-dir", tasks, "--solutions", sols,
                         "--method", "kb", "--task", "kb_19_relu", "--store", tmp_path / "r.sqlite",
                         "--json", tmp_path / "r.json", "--no-progress")
    assert code == 0, err
    rows = [r for r in _rows(tmp_path / "r.json") if r["verdict"] != "skipped"]
    assert rows and {(r["backend"], r["verdict"]) for r in rows} == {("cuda", "compiled")}, rows


def test_no_cuda_source_found_is_a_compile_error(tmp_path):
    path = _solutions(tmp_path, {"activation/gelu.py": "import cupy\nSRC = open('k.cu').read()\n"
                                                       "mod = cupy.RawModule(code=SRC)\ndef kernel_function(x):\n    "
                                                       "return x\n"})
    with pytest.raises(CompileError,
                       match="no CUDA source found statically .*line 3: RawModule code is not a constant"):
        compile_with_nvcc(path / "activation" / "gelu.py", "sm_90")


def test_static_problem():
    task = REG.tasks["gelu"]
    assert CUDA.static_problem(task, REFS / "activation" / "gelu.py") is None
    assert CUDA.static_problem(task, KB_FIXTURES / "cuda_candidates" / "19_ReLU.py") is None  # ModelNew


# --- integrity: static findings and launch counting --------------------------------------------

@pytest.mark.parametrize("path", sorted(REFS.glob("*/*.py")), ids=lambda p: p.stem)
def test_references_have_no_findings(path):
    assert CUDA.static_findings(REG.tasks[path.stem], path) == []


FINDINGS = {
    "torch_op": ("def kernel_function(x):\n    _k((1,), (1,), (x.data_ptr(),))\n    return "
                 "torch.nn.functional.gelu(x)\n", "framework_op"),
    "cupy_op": ("def kernel_function(a, b):\n    return torch.from_dlpack(cupy.matmul(cupy.from_dlpack(a), "
                "cupy.from_dlpack(b)))\n",
                "framework_op"),
    "pointer_key": ("_seen = {}\ndef kernel_function(x):\n    k = x.data_ptr()\n    return _seen.get(k)\n", "caching"),
    "side_stream": ("def kernel_function(x):\n    s = cupy.cuda.Stream(non_blocking=True)\n    _k((1,), (1,), "
                    "(x.data_ptr(),), stream=s)\n",
                    "stream"),
    "aten_in_extension": ('ext = load_inline(name="e", cpp_sources="", cuda_sources=r"""\n'
                          'torch::Tensor f(torch::Tensor a, torch::Tensor b) { return torch::matmul(a, b); }\n"""'
                          ', functions=["f"])\nclass ModelNew(torch.nn.Module):\n    pass\n', "framework_op"),
    "cublas": ('CUDA_SOURCE = r"""\nvoid f(cublasHandle_t h) { cublasSgemm(h, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1); '
               '}\n"""\n'
               "def kernel_function(x):\n    return x\n", "framework_op"),
    "stream_in_cxx": ('CUDA_SOURCE = r"""\nvoid f() { cudaStream_t s; cudaStreamCreate(&s); }\n"""\n'
                      "def kernel_function(x):\n    return x\n", "stream"),
}


@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_cheats_are_found(tmp_path, name):
    body, check = FINDINGS[name]
    path = tmp_path / f"{name}.py"
    path.write_text("import cupy\nimport torch\nfrom torch.utils.cpp_extension import load_inline\n" + body)
    findings = CUDA.static_findings(REG.tasks["gelu"], path)
    assert check in {f.check for f in findings}, findings


def test_launch_idioms_are_not_findings(tmp_path):
    path = tmp_path / "ok.py"
    path.write_text(textwrap.dedent('''\
        import cupy
        import torch
        _k = cupy.RawKernel(r'extern "C" __global__ void k(float* x) {}', "k")
        def kernel_function(x):
            s = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
            _k((1,), (32,), (x.data_ptr(),), stream=s)
            _k((1,), (32,), args=(x.data_ptr(),))
            return torch.from_dlpack(cupy.from_dlpack(x))
        '''))
    assert CUDA.static_findings(REG.tasks["gelu"], path) == []


def test_kernelbench_footer_import_is_allowed(tmp_path):
    from mkbench.importers import kernelbench as kb
    text = kb.candidate_module_source((KB_FIXTURES / "cuda_candidates" / "19_ReLU.py").read_text(),
                                      (KB_FIXTURES / "problems" / "19_ReLU.py").read_text(), candidate="19_ReLU.py",
                                      problem="19_ReLU.py", task="kb_19_relu")
    (tmp_path / "c.py").write_text(text)
    assert CUDA.static_findings(REG.tasks["gelu"], tmp_path / "c.py") == []
    (tmp_path / "d.py").write_text("import mkbench.importers.kernelbench as kb\n" + text)
    assert {f.check for f in CUDA.static_findings(REG.tasks["gelu"], tmp_path / "d.py")} == {"harness_access"}


def test_launch_counter_counts_cupy_kernels_and_extension_calls(monkeypatch):
    # A stand-in cupy module: the counting subclasses are installed over its classes exactly as
    # over CuPy's, and every kernel call inside the counter's block is counted.
    fake = types.ModuleType("cupy")

    class RawKernel:
        def __init__(self, code, name, options=()):
            self.name = name

        def __call__(self, grid, block, args, **kwargs):
            return None

    class RawModule:
        def __init__(self, code=None, options=()):
            self.code = code

        def get_function(self, name):
            return RawKernel(self.code, name)

    fake.RawKernel, fake.RawModule = RawKernel, RawModule
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(runtime.importlib.util, "find_spec", lambda name: object())
    assert runtime.install_cupy_counting()
    assert issubclass(fake.RawKernel, RawKernel) and fake.RawKernel.__name__ == "RawKernel"
    kernel = fake.RawKernel("code", "k")
    from_module = fake.RawModule(code="code").get_function("j")
    ext = runtime.CountingExtension(types.SimpleNamespace(relu_cuda=lambda x: x, _private=lambda: None))
    with CUDA.launch_counter() as none:
        pass
    assert none.count == 0  # a candidate that launches nothing: the worker calls it a decoy
    with CUDA.launch_counter() as counter:
        kernel((1,), (1,), ())
        from_module((1,), (1,), ())
        assert ext.relu_cuda(3) == 3
        ext._private()
    assert counter.count == 3
    from_module.max_dynamic_shared_size_bytes = 1024  # attributes reach the wrapped kernel
    assert from_module._kernel.max_dynamic_shared_size_bytes == 1024


def test_entry_point_forms(tmp_path, monkeypatch):
    monkeypatch.setattr(runtime, "install_cupy_counting", lambda: False)
    (tmp_path / "a.py").write_text("def kernel_function(x):\n    return x + 1\n")
    assert runtime.load("gelu", tmp_path / "a.py")(1) == 2
    (tmp_path / "b.py").write_text("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        "
                                   "return x * 2\n")
    assert torch.equal(runtime.load("gelu", tmp_path / "b.py")(torch.ones(2)), torch.full((2,), 2.0))
    (tmp_path / "c.py").write_text("x = 1\nraise ValueError('bad')\n")
    with pytest.raises(CompileError, match=r"c\.py:2: import failed: ValueError: bad"):
        runtime.load("gelu", tmp_path / "c.py")


# --- on an NVIDIA GPU -----------------------------------------------------------------------------

@pytest.mark.gpu
def test_references_pass_on_gpu(tmp_path, cli):
    code, out, err = cli("run", "--backend", "cuda", "--hw", "auto", "--shape-role", "small", "--shape-role", "awkward",
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
def test_decoy_and_broken_source_on_gpu(tmp_path, cli):
    decoy = "import torch\n\ndef kernel_function(indices, weight):\n    return weight[indices]\n"
    sol = _solutions(tmp_path, {"index/embedding.py": decoy, "reduce/sum_lastdim.py": BROKEN})
    code, out, err = cli("run", "--backend", "cuda", "--hw", "auto", "--solutions", sol, "--task", "embedding",
                         "--task", "sum_lastdim", "--shape-role", "small", "--baselines", "none", "--seeds", "1",
                         "--store", tmp_path / "r.sqlite", "--json", tmp_path / "r.json", "--no-progress")
    rows = _rows(tmp_path / "r.json")
    embedding = [r for r in rows if r["task"] == "embedding"]
    assert {r["verdict"] for r in embedding} == {"hack"} and "no cuda kernel was launched" in embedding[0]["error"]
    broken = [r for r in rows if r["task"] == "sum_lastdim"]
    assert {r["verdict"] for r in broken} == {"compile_error"}
    assert "block_reduce" in broken[0]["error"] and f"sum_lastdim.py({BROKEN_LINE})" in broken[0]["error"]


@pytest.mark.gpu
def test_load_inline_candidate_on_gpu(tmp_path, cli):
    sol = _solutions(tmp_path, {"activation/gelu.py": LOAD_INLINE})
    code, out, err = cli("run", "--backend", "cuda", "--hw", "auto", "--solutions", sol, "--task", "gelu",
                         "--shape-role", "small", "--baselines", "none", "--seeds", "1", "--time-budget-ms", "50",
                         "--store", tmp_path / "r.sqlite", "--json", tmp_path / "r.json", "--no-progress")
    rows = _rows(tmp_path / "r.json")
    f32 = [r for r in rows if r["dtype"] == "float32"]
    assert [r["verdict"] for r in f32] == ["correct"], f32


@pytest.mark.gpu
def test_kernelbench_import_runs_with_the_cuda_backend(tmp_path, cli, monkeypatch):
    # What tests/test_importers.py's load_inline GPU test can use instead of its test-only backend.
    monkeypatch.setenv("MKBENCH_TASK_DIRS", "")
    tasks, sols = tmp_path / "tasks", tmp_path / "sols"
    code, out, err = cli("import", "kernelbench", KB_FIXTURES / "problems" / "19_ReLU.py", "--out", tasks,
                         "--candidates", KB_FIXTURES / "cuda_candidates", "--solutions-out", sols)
    assert code == 0, err
    monkeypatch.setenv("MKBENCH_TASK_DIRS", "")
    code, out, err = cli("run", "--backend", "cuda", "--tasks-dir", tasks, "--solutions", sols, "--method", "kb",
                         "--task", "kb_19_relu", "--baselines", "eager", "--seeds", "2", "--store",
                         tmp_path / "r.sqlite",
                         "--json", tmp_path / "r.json", "--no-progress")
    assert code == 0, err
    rows = [r for r in _rows(tmp_path / "r.json") if r["method"] == "kb"]
    assert [(r["verdict"], r["perf_status"]) for r in rows] == [("correct", "timed")], rows


# The same kernel built lazily, in the first forward, behind a device check, as CUDA-L1's kernels build
LAZY_LOAD_INLINE = LOAD_INLINE[:LOAD_INLINE.index("ext = load_inline(")] + '''

class ModelNew(nn.Module):
    ext = None

    def forward(self, x):
        if not x.is_cuda:
            return torch.nn.functional.gelu(x)
        if ModelNew.ext is None:
            ModelNew.ext = load_inline(name="mkbench_test_lazy_gelu_ext", cpp_sources=cpp_source,
                                       cuda_sources=cuda_source, functions=["gelu"], verbose=False)
        return ModelNew.ext.gelu(x)
'''


@pytest.mark.gpu
@pytest.mark.parametrize("setting", [("--build-hold", "release"), ("--compile-ahead", "lane")])
def test_a_build_in_the_first_forward_leaves_the_shared_hold_on_gpu(tmp_path, cli, setting):
    """Each way of getting a lazy load_inline build out of the shared hold, on a GPU: ``--build-hold
    release`` lets go of the device while nvcc runs in the call (its ``host_work`` step); ``--compile-ahead
    lane`` builds it in a throwaway worker's compile-only call first (the log says so), so that the
    evaluated worker's first call only loads it. Either way the verdict is the kernel's own."""
    sol = _solutions(tmp_path, {"activation/gelu.py": LAZY_LOAD_INLINE})
    code, out, err = cli("run", "--backend", "cuda", "--hw", "auto", "--solutions", sol, "--task", "gelu",
                         "--shape-role", "small", "--dtype", "float32", "--baselines", "none", "--seeds", "1",
                         "--time-budget-ms", "50", "--store", tmp_path / "r.sqlite", "--json", tmp_path / "r.json",
                         "--no-progress", *setting)
    assert code == 0, err
    rows = _rows(tmp_path / "r.json")
    assert [r["verdict"] for r in rows] == ["correct"], rows
    steps = _extra(rows[0])["unit_seconds"]["steps"]
    log = next(tmp_path.glob("r-logs/**/gelu__*.log")).read_text()
    if setting[0] == "--build-hold":
        assert steps["host_work"] > 1.0, steps  # nvcc, out of the hold
    else:
        assert "prewarm: 1 combination(s) compiled ahead; 0 skipped" in log, log[-3000:]
        assert steps["prewarm"] > steps.get("run_traced", 0.0), steps  # the build ran there, not in the call
