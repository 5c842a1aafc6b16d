"""A Triton compile inside a candidate's call is host work: with ``--build-hold release`` the lane lets go
of its shared hold on the device while Triton builds (backends/triton: compile_as_host_work). The protocol
that follows a ``host_work`` block end to end is tested in test_prewarm.py; here, that Triton's compile
entry point is wrapped once, names the kernel, and passes its answer and its errors through."""

import threading
from contextlib import contextmanager
from types import SimpleNamespace

import pytest

triton_compiler = pytest.importorskip("triton.compiler")

import mkbench.worker  # noqa: E402
from mkbench.backends import triton as triton_backend  # noqa: E402


@pytest.fixture
def compiles(monkeypatch):
    """Triton's compile replaced by a stand-in (the interpreter builds nothing), and host_work by a recorder."""
    calls, blocks = [], []

    def fake_compile(src, target=None, options=None):
        calls.append((src, target))
        if src == "broken":
            raise RuntimeError("PassManager::run failed")
        return "kernel"

    @contextmanager
    def host_work(what):
        blocks.append(["begin", what])
        try:
            yield
        finally:
            blocks[-1][0] = "ended"

    monkeypatch.setattr(triton_compiler, "compile", fake_compile)
    monkeypatch.setattr(mkbench.worker, "host_work", host_work)
    return calls, blocks


def test_each_compile_in_the_main_thread_is_one_host_work_block_named_after_its_kernel(compiles):
    calls, blocks = compiles
    triton_backend.compile_as_host_work()
    triton_backend.compile_as_host_work()  # a second candidate in the worker: wrapped once
    wrapped = triton_compiler.compile
    assert wrapped.mkbench_host_work and wrapped.__wrapped__.__name__ == "fake_compile"
    src = SimpleNamespace(fn=SimpleNamespace(__name__="add_kernel"))
    assert wrapped(src, target="cuda") == "kernel" and calls == [(src, "cuda")]
    assert blocks == [["ended", "triton compile add_kernel"]]
    with pytest.raises(RuntimeError, match="PassManager"):  # still a compile error, with the block ended
        wrapped("broken")
    assert blocks[-1] == ["ended", "triton compile str"]


def test_a_compile_from_another_thread_stays_under_the_hold(compiles):
    calls, blocks = compiles
    triton_backend.compile_as_host_work()
    done = []
    t = threading.Thread(target=lambda: done.append(triton_compiler.compile("src")))
    t.start()
    t.join()
    assert done == ["kernel"] and calls == [("src", None)] and blocks == []


def test_a_gpu_candidates_load_installs_it_and_an_interpreted_one_does_not(compiles, tmp_path):
    backend = triton_backend.TritonBackend()
    source = tmp_path / "silu.py"
    source.write_text("def kernel_function(x):\n    return x\n")
    task = SimpleNamespace(name="silu")
    backend.compile(task, source, SimpleNamespace(device="cpu"))
    assert not getattr(triton_compiler.compile, "mkbench_host_work", False)
    backend.compile(task, source, SimpleNamespace(device="cuda"))
    assert triton_compiler.compile.mkbench_host_work
