"""A candidate that crashes, exits, hangs, raises, returns garbage or mutates its inputs costs only
its own verdict: the run goes on with a fresh worker and the next candidate is judged normally."""

import textwrap
from pathlib import Path

import pytest

from mkbench.store import Store

REFS = Path(__file__).resolve().parent.parent / "backends" / "triton" / "kernels"

CANDIDATES = {
    "segfault": "import ctypes\ndef kernel_function(x):\n    return ctypes.string_at(0)\n",
    "exit": "import os\ndef kernel_function(*args):\n    os._exit(3)\n",
    "hang": "def kernel_function(*args):\n    while True:\n        pass\n",
    "raises": "def kernel_function(*args):\n    raise RuntimeError('boom from candidate')\n",
    "identity": "def kernel_function(x, *rest):\n    return x.clone()\n",
    "mutates": textwrap.dedent("""
        import importlib.util, pathlib
        _p = pathlib.Path(%r) / 'activation' / 'gelu.py'
        _s = importlib.util.spec_from_file_location('_ref_gelu', _p)
        _m = importlib.util.module_from_spec(_s)
        _s.loader.exec_module(_m)
        def kernel_function(x):
            y = _m.kernel_function(x)
            x.zero_()
            return y
    """) % str(REFS),
    "syntax": "def kernel_function(x)\n    return x\n",
    "no_entry": "def something_else(x):\n    return x\n",
}


def _solutions(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    root = tmp_path / name
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _verdicts(store_path, method):
    rows = Store(store_path).results()
    out = {}
    for r in rows:
        if r["method"] == method and r["verdict"] != "skipped":
            out.setdefault(r["task"], set()).add(r["verdict"])
    return out, [r for r in rows if r["method"] == method]


def _run(cli, solutions, method, store_path, *extra):
    return cli("run", "--solutions", solutions, "--method", method, "--task", "gelu", "--task", "quantize_int8_rowwise",
               "--task", "dropout", "--baselines", "none", "--seeds", "1", "--timeout-step", "15",
               "--store", store_path, "--no-progress", *extra)


def test_crash_and_hang_cost_only_their_own_verdict(tmp_path, cli, store_path):
    good = (REFS / "quantization" / "quantize_int8_rowwise.py").read_text()
    sol = _solutions(tmp_path, "a", {"activation/gelu.py": CANDIDATES["segfault"],
                                     "quantization/quantize_int8_rowwise.py": good,
                                     "random/dropout.py": CANDIDATES["hang"]})
    code, out, err = _run(cli, sol, "a", store_path)
    assert code == 0, err
    verdicts, rows = _verdicts(store_path, "a")
    # the step that crashed or hung gets the verdict; the candidate's later steps are "not_run"
    assert verdicts == {"gelu": {"crash", "not_run"}, "quantize_int8_rowwise": {"correct"},
                        "dropout": {"timeout", "not_run"}}
    crash = next(r for r in rows if r["task"] == "gelu" and r["correct_status"] == "crash")
    assert "SIGSEGV" in crash["error"]
    assert "time limit" in next(r for r in rows if r["task"] == "dropout" and r["verdict"] == "timeout")["error"]


def test_exit_raise_and_wrong_answers(tmp_path, cli, store_path):
    sol = _solutions(tmp_path, "b", {"activation/gelu.py": CANDIDATES["exit"],
                                     "quantization/quantize_int8_rowwise.py": CANDIDATES["raises"],
                                     "random/dropout.py": CANDIDATES["identity"]})
    code, _, err = _run(cli, sol, "b", store_path)
    assert code == 0, err
    verdicts, rows = _verdicts(store_path, "b")
    assert verdicts == {"gelu": {"crash", "not_run"}, "quantize_int8_rowwise": {"error"}, "dropout": {"incorrect"}}
    assert any("exit code 3" in (r["error"] or "") for r in rows if r["task"] == "gelu")
    assert all("boom from candidate" in r["error"] for r in rows if r["task"] == "quantize_int8_rowwise"
               and r["verdict"] == "error")


def test_mutation_and_invalid_files(tmp_path, cli, store_path):
    sol = _solutions(tmp_path, "c", {"activation/gelu.py": CANDIDATES["mutates"],
                                     "quantization/quantize_int8_rowwise.py": CANDIDATES["syntax"],
                                     "random/dropout.py": CANDIDATES["no_entry"]})
    code, _, err = _run(cli, sol, "c", store_path)
    assert code == 3  # the run completes, but invalid candidate files make the exit non-zero
    assert "syntax error" in err and "defines neither `kernel_function` nor `dropout`" in err
    verdicts, rows = _verdicts(store_path, "c")
    assert verdicts == {"gelu": {"incorrect"}, "quantize_int8_rowwise": {"compile_error"}, "dropout": {"compile_error"}}
    assert all("modified input[0]" in r["error"] for r in rows if r["task"] == "gelu" and r["verdict"] != "skipped")


@pytest.mark.gpu
def test_illegal_address_is_isolated(tmp_path, cli, store_path):
    bad = textwrap.dedent("""
        import torch, triton, triton.language as tl
        @triton.jit
        def _k(y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs + (1 << 40), tl.zeros([BLOCK], tl.float32))
        def kernel_function(x):
            y = torch.empty_like(x)
            _k[(4,)](y, y.numel(), BLOCK=1024)
            return y
    """)
    good = (REFS / "quantization" / "quantize_int8_rowwise.py").read_text()
    sol = _solutions(tmp_path, "d", {"activation/gelu.py": bad, "quantization/quantize_int8_rowwise.py": good,
                                     "random/dropout.py": CANDIDATES["identity"]})
    code, _, err = _run(cli, sol, "d", store_path)
    assert code == 0, err
    verdicts, rows = _verdicts(store_path, "d")
    assert verdicts["gelu"] & {"error", "crash"} and "correct" not in verdicts["gelu"]
    assert verdicts["quantize_int8_rowwise"] == {"correct"}, \
        [(r["shape"], r["dtype"], r["verdict"], r["error"]) for r in rows if r["task"] == "quantize_int8_rowwise"]


def test_workers_are_forked_with_their_own_environment_and_session():
    """Each unit's worker is a fresh fork (from the fork server) with its backend's environment
    applied first, in a session of its own (so it dies with its process group, and a terminal's
    Ctrl-C reaches only the orchestrator)."""
    import os

    from mkbench import worker
    from mkbench.engine.procs import Child
    a = Child(worker.entry, ({"MKBENCH_ENV_TEST": "a"}, None))
    b = Child(worker.entry, ({"MKBENCH_ENV_TEST": "b"}, None))
    try:
        assert a.pid != b.pid
        for child in (a, b):
            reply = child.request({"op": "probe"}, 120)
            assert reply["kind"] == "probe"
            assert os.getpgid(child.pid) == child.pid != os.getpgid(0)
    finally:
        a.stop(), b.stop()
    assert not a.proc.is_alive() and not b.proc.is_alive()


def test_gpu_workers_never_inherit_the_triton_interpreter(monkeypatch):
    # conftest sets TRITON_INTERPRET=1 for this process; on a GPU that must not reach any worker
    # (it once ran the Triton references of the illegal-address test above interpreted on an H100)
    from mkbench.engine.runner import worker_env
    from mkbench.plugins import build_registry
    reg = build_registry()
    for name in ("triton", "eager", "torch_compile"):
        backend = reg.backends[name]
        assert worker_env(backend, reg.hardware["h100"])["TRITON_INTERPRET"] == "0", name
    assert worker_env(reg.backends["triton"], reg.hardware["cpu"])["TRITON_INTERPRET"] == "1"


def test_fork_server_restarts_when_the_triton_mode_changes():
    """Workers inherit Triton as the fork server imported it: a process that evaluated on the CPU
    (interpreter) and then asks for GPU workers must get a server that imported Triton for the GPU
    (on an H100, GPU tests run after CPU ones failed in Triton's gluon with an interpreted kernel)."""
    import time
    from multiprocessing import forkserver

    from mkbench.engine import procs

    def server() -> tuple[int, bytes | None]:
        pid = forkserver._forkserver._forkserver_pid
        for _ in range(200):  # until the new server has exec'd: before, /proc shows its parent's first environ
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"multiprocessing.forkserver" in f.read():
                    break
            time.sleep(0.05)
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().split(b"\0")
        return pid, next((v for v in env if v.startswith(b"TRITON_INTERPRET=")), None)

    try:
        procs.context(env={"TRITON_INTERPRET": "1"})
        first, mode = server()
        assert mode == b"TRITON_INTERPRET=1"
        procs.context(env={"TRITON_INTERPRET": "1"})
        procs.context()  # no environment asked for: the running server serves
        assert server()[0] == first
        procs.context(env={"TRITON_INTERPRET": "0"})
        second, mode = server()
        assert second != first and mode == b"TRITON_INTERPRET=0"
    finally:
        procs.context(env={"TRITON_INTERPRET": "1"})  # the rest of this session runs the interpreter
    assert server()[1] == b"TRITON_INTERPRET=1"


def test_modules_preloaded_by_the_fork_server_see_the_runs_jit_cache(tmp_path, monkeypatch):
    """CuPy 14 fixes its kernel cache directory when imported, and the fork server imports it for
    every CUDA worker: the run's cache must be in the server's environment while it imports, or
    confined workers are denied the default ~/.cupy/kernel_cache (every CUDA reference was
    compile_error on 4 H200s). Modules not installed leave the server's environment alone."""
    import time
    import types
    from multiprocessing import forkserver

    from mkbench.engine import procs
    from mkbench.engine.runner import Runner
    (tmp_path / "mkb_import_env_probe.py").write_text("import os\nSEEN = os.environ.get('CUPY_CACHE_DIR')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    runner = Runner.__new__(Runner)
    runner.store = types.SimpleNamespace(path=tmp_path / "study.sqlite")
    backend = types.SimpleNamespace(worker_modules=("mkb_import_env_probe",), worker_import_env=("CUPY_CACHE_DIR",))
    env = runner._import_env(backend)
    assert env == {"CUPY_CACHE_DIR": str(tmp_path / "study-cache" / "cupy")}
    assert runner._import_env(types.SimpleNamespace(worker_modules=("no_such_module_here",),
                                                    worker_import_env=("CUPY_CACHE_DIR",))) == {}
    try:
        procs.context(backend.worker_modules, {"TRITON_INTERPRET": "1", **env})
        pid = forkserver._forkserver._forkserver_pid
        for _ in range(200):  # until the new server has exec'd
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"multiprocessing.forkserver" in f.read():
                    break
            time.sleep(0.05)
        with open(f"/proc/{pid}/environ", "rb") as f:
            assert f"CUPY_CACHE_DIR={env['CUPY_CACHE_DIR']}".encode() in f.read().split(b"\0")
    finally:  # the rest of this session: a server without this test's cache in its environment
        forkserver._forkserver._stop()
        procs._started_env = None
        procs.context(env={"TRITON_INTERPRET": "1"})


def test_forked_children_start_with_what_every_worker_would_import():
    """The fork server imports (``mkbench.preload``) what a worker's profiler start and meta draws
    import, and computes Triton's source hash, once: a forked child finds them done. Without it each
    worker spent about 9 CPU seconds on these imports (``reports/2026-11-27-cpu-profile``)."""
    import fork_probe
    from mkbench.engine.procs import Child
    child = Child(fork_probe.report, ())
    try:
        seen = child.recv(120)
    finally:
        child.stop()
    assert seen["modules"] == ["sympy", "torch._dynamo", "torch._inductor"]
    assert seen["triton_key_cached"] == 1
