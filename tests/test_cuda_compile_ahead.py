"""The cuda backend's compile-ahead call (``CudaBackend.prewarm``): a load_inline extension built
lazily in a candidate's first ``forward`` is built by a throwaway worker's compile-only call instead
of inside the first traced call, while the device is held; a build the compiler refused is refused
again at once in the evaluated worker, with the same message. CPU-only: torch's load_inline and the
extension's kernels are stand-ins here; the same paths run on a GPU."""

from types import SimpleNamespace

import pytest

from mkbench.backends.cuda import runtime
from mkbench.backends.native import sources
from mkbench.backends.native.launches import launches

REFUSED = ("Error building extension 'fused_op': [1/2] nvcc -c fused.cu\n"
           "fused.cu(12): error: identifier \"blockDimx\" is undefined\n"
           "1 error detected in the compilation of \"fused.cu\".\nninja: build stopped: subcommand failed.")
KILLED = ("Error building extension 'fused_op': [1/2] nvcc -c fused.cu\n"
          "nvcc error   : 'cicc' died due to signal 9 (Kill signal)\nninja: build stopped: subcommand failed.")


class FakeTorchLoadInline:
    """Stands in for torch.utils.cpp_extension.load_inline: counts builds, fails with ``failure``."""

    def __init__(self, failure=None):
        self.failure, self.builds = failure, 0

    def __call__(self, name, cpp_sources, cuda_sources=None, functions=None, extra_cuda_cflags=None,
                 build_directory=None, verbose=False):
        self.builds += 1
        if self.failure:
            raise RuntimeError(self.failure)

        class Extension:
            calls = 0

            @staticmethod
            def fused(x):
                Extension.calls += 1
                return x + 1
        return Extension


@pytest.fixture
def load_inline(tmp_path, monkeypatch):
    """The wrapped load_inline of a worker, over a stand-in; ``new_worker()`` forgets what this
    process learnt, as a fresh worker process would."""
    # A stand-in module, not torch's: importing torch.utils.cpp_extension pulls in setuptools, whose
    # distutils shim refuses to load once any earlier test has imported the standard library's distutils
    import sys
    import types

    import torch.utils
    cpp_extension = types.ModuleType("torch.utils.cpp_extension")
    cpp_extension.load_inline = None
    monkeypatch.setitem(sys.modules, "torch.utils.cpp_extension", cpp_extension)
    monkeypatch.setattr(torch.utils, "cpp_extension", cpp_extension, raising=False)
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "ext"))
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    candidate = tmp_path / "cand.py"
    candidate.write_text("from torch.utils.cpp_extension import load_inline\n")

    def install(fake):
        monkeypatch.setattr(cpp_extension, "load_inline", fake)
        monkeypatch.setattr(runtime, "FAILED_BUILDS", {})
        runtime.install_load_inline_counting(sources.find(candidate, "cuda"), candidate)
        return cpp_extension.load_inline
    return install


def build(load):
    return load(name="fused_op", cpp_sources="int f();", cuda_sources="__global__ void k() {}",
                functions=["fused"])


def test_a_build_the_compiler_refused_is_refused_again_by_the_next_worker_without_nvcc(load_inline):
    first = FakeTorchLoadInline(REFUSED)
    with pytest.raises(RuntimeError) as ahead:
        build(load_inline(first))  # the compile-ahead worker
    assert first.builds == 1
    evaluated = FakeTorchLoadInline()  # it would build now: it must not be asked
    with pytest.raises(RuntimeError) as again:
        build(load_inline(evaluated))
    assert evaluated.builds == 0
    assert str(again.value) == str(ahead.value) == REFUSED
    assert runtime.build_failures() == [
        f"load_inline {next(iter(runtime.FAILED_BUILDS)).rsplit('/', 1)[-1]} failed to build: "
        "fused.cu(12): error: identifier \"blockDimx\" is undefined"]


def test_a_build_cut_short_by_the_machine_is_built_again(load_inline):
    with pytest.raises(RuntimeError):
        build(load_inline(FakeTorchLoadInline(KILLED)))
    evaluated = FakeTorchLoadInline()
    ext = build(load_inline(evaluated))
    assert evaluated.builds == 1 and ext.fused(1) == 2


def test_other_sources_are_built_whatever_failed_before(load_inline):
    with pytest.raises(RuntimeError):
        build(load_inline(FakeTorchLoadInline(REFUSED)))
    other = FakeTorchLoadInline()
    load_inline(other)(name="fused_op", cpp_sources="int f();", cuda_sources="__global__ void k2() {}",
                       functions=["fused"])
    assert other.builds == 1


def test_compiler_refusal_needs_a_diagnostic_and_no_sign_of_the_machine():
    assert runtime.compiler_refused(RuntimeError(REFUSED))
    assert runtime.compiler_refused(RuntimeError("Error building extension 'x': a.cpp:3:1: error: expected ';'"))
    assert not runtime.compiler_refused(RuntimeError(KILLED))
    assert not runtime.compiler_refused(RuntimeError("Error building extension 'x'"))  # no output: unknown
    assert not runtime.compiler_refused(ImportError("x.so: undefined symbol: foo"))  # built: loads again fast


def test_a_compile_only_call_builds_the_extension_and_launches_nothing(load_inline):
    fake = FakeTorchLoadInline()
    load = load_inline(fake)
    before = launches()
    with runtime.compile_only():
        ext = build(load)  # built lazily, as in a first forward
        with pytest.raises(runtime.CompileOnlyCall):
            ext.fused(1)
    assert fake.builds == 1 and ext._ext.calls == 0 and launches() == before
    assert ext.fused(1) == 2 and ext._ext.calls == 1 and launches() == before + 1  # outside: launched, counted


def test_a_compile_only_call_compiles_a_cupy_kernel_and_does_not_launch_it():
    class Kernel:
        compiled = launched = 0

        @property
        def kernel(self):
            Kernel.compiled += 1
            return self

        def __call__(self, *args):
            Kernel.launched += 1

    counted = runtime.CountingKernel(Kernel())
    with runtime.compile_only(), pytest.raises(runtime.CompileOnlyCall):
        counted((1,), (1,), ())
    assert (Kernel.compiled, Kernel.launched) == (1, 0)
    counted((1,), (1,), ())
    assert Kernel.launched == 1


def test_the_cuda_backend_compiles_ahead_on_a_gpu_only_and_only_when_asked():
    """Off by default: on an H200 it has not yet paid (reports/2026-11-28-cuda-compile-ahead);
    `--compile-ahead lane` runs it."""
    import torch

    from mkbench.engine import compile_ahead
    from mkbench.plugins import build_registry
    reg = build_registry()
    backend = reg.backend("cuda")
    assert backend.compile_ahead == "off"
    assert backend.prewarm(reg.hardware["cpu"]) is None  # compile-only mode: nvcc on sources, no candidate run

    class Unit:
        source, compile_only, hw = "x.py", False, reg.hardware["h100"]
        task = SimpleNamespace(harness_in_call=False)
    Unit.backend = backend
    assert compile_ahead.where(Unit) is None and compile_ahead.where(Unit, "lane") == "lane"
    to, cuda = torch.nn.Module.to, torch.nn.Module.cuda
    with backend.prewarm(reg.hardware["h100"]):
        assert runtime._compile_only
        model = torch.nn.Identity()
        assert model.to("cuda", torch.bfloat16) is model and model.cuda() is model  # made where it stays
    assert not runtime._compile_only
    assert (torch.nn.Module.to, torch.nn.Module.cuda) == (to, cuda)


def test_a_candidate_that_builds_only_for_cuda_tensors_builds_in_the_compile_only_call(load_inline):
    """CUDA-L1's kb_l2_43 (h20 set) builds its extension in its first forward, after ``if not
    x.is_cuda: return <PyTorch>``: on meta inputs it built nothing. The compile-only call hands it fake
    CUDA tensors, and its fallback (which catches the stopped launch) runs on them, computing nothing."""
    import torch

    from mkbench.plugins import build_registry
    fake = FakeTorchLoadInline()
    load = load_inline(fake)

    class Lazy:
        ext = None

    def forward(x):
        if not x.is_cuda:
            return torch.relu(x)
        try:
            if Lazy.ext is None:
                Lazy.ext = build(load)
            return Lazy.ext.fused(x)
        except RuntimeError:
            return torch.relu(x)

    reg = build_registry()
    meta = (torch.empty(4, 8, device="meta"), 3)
    with reg.backend("cuda").prewarm(reg.hardware["h100"]) as patch:
        x, k = patch.inputs(meta)
        out = forward(x)
    assert k == 3 and x.is_cuda and tuple(x.shape) == (4, 8) and x.dtype == torch.float32
    assert fake.builds == 1 and Lazy.ext._ext.calls == 0 and out.is_cuda  # built; the fallback ran, on fakes
    assert forward(torch.ones(2)).tolist() == [1.0, 1.0]  # outside: real tensors again
