"""Cheating candidates, each caught with the runtime evidence named in its error, and honest ones
(references, a kernel that reuses its output buffer, a partial kernel) never called ``hack``.

Everything runs through the real engine: candidate files in a solutions folder, forked workers, the
out-of-process judge, the trace, the store. The cheats that need a GPU (a side stream) are in
``test_adversarial_gpu.py``. Static findings are warnings only: the last tests here show a static
rule firing on an honest candidate without changing its verdict.
"""

import os
import shlex
import textwrap
from pathlib import Path

import pytest

from mkbench.static_checks import scan_python
from mkbench.store import Store

ROOT = Path(__file__).resolve().parent.parent
REFS = ROOT / "backends" / "triton" / "kernels"


def _load_ref(category: str, task: str) -> str:
    """Source lines that import a shipped reference kernel as ``_ref`` (the cheats wrap honest code)."""
    return textwrap.dedent(f"""
        import importlib.util as _u
        _s = _u.spec_from_file_location("_ref_{task}", {str(REFS / category / (task + '.py'))!r})
        _m = _u.module_from_spec(_s); _s.loader.exec_module(_m)
        _ref = _m.kernel_function
    """)


def _inline_ref(category: str, task: str) -> str:
    """A shipped reference kernel's source, its entry point renamed ``_ref``: kernels the candidate's
    own file defines."""
    text = (REFS / category / (task + ".py")).read_text()
    assert "def kernel_function(" in text, task
    return text.replace("def kernel_function(", "def _ref(") + "\n"


HEAD = "import sys\nimport threading\nimport time\nimport torch\nimport triton\nimport triton.language as tl\n"

TOKEN_KERNEL = textwrap.dedent("""
    @triton.jit
    def _token(x_ptr, y_ptr):
        tl.store(y_ptr, tl.load(x_ptr))

    def _token_launch(x):
        scratch = torch.empty(1, dtype=x.dtype, device=x.device)
        _token[(1,)](x, scratch)
""")

COPY_KERNEL = textwrap.dedent("""
    @triton.jit
    def _copy(x_ptr, y_ptr, n, B: tl.constexpr):
        o = tl.program_id(0) * B + tl.arange(0, B)
        m = o < n
        tl.store(y_ptr + o, tl.load(x_ptr + o, mask=m), mask=m)
""")

PATCH_JUDGE_VIA_SYS_MODULES = textwrap.dedent("""
    for _name, _mod in list(sys.modules.items()):
        if _name.endswith("contracts") and hasattr(_mod, "AllClose"):
            _mod.AllClose.check = lambda self, ctx, _m=_mod: _m.CheckResult(True)
""")

# task -> (candidate source, expected verdict, text the error must contain)
CHEATS = {
    # the judge patched through sys.modules, with a token kernel launch, returning its input
    ("activation", "elu"): (HEAD + PATCH_JUDGE_VIA_SYS_MODULES + TOKEN_KERNEL +
                            "def kernel_function(x, *rest):\n    _token_launch(x)\n    return x.clone()\n",
                            "hack", "the candidate replaced harness function AllClose.check"),
    # the judge patched, with a full-traffic wrong kernel (a copy at full bandwidth)
    ("activation", "logsigmoid"): (HEAD + PATCH_JUDGE_VIA_SYS_MODULES + COPY_KERNEL +
                                   "def kernel_function(x):\n    y = torch.empty_like(x)\n"
                                   "    _copy[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), B=1024)\n"
                                   "    return y\n",
                                   "hack", "the candidate replaced harness function AllClose.check"),
    # the framework op through a plain module-level alias, with a token launch (a decoy)
    ("activation", "gelu"): (HEAD + "_act = torch.nn.functional.gelu\n" + TOKEN_KERNEL +
                             "def kernel_function(x):\n    _token_launch(x)\n    return _act(x)\n",
                             "hack",
                             "decoy: the answer stayed right with the candidate's 1 own kernel launch(es) suppressed"),
    # harness classes patched through a local alias, around an honest kernel
    ("math", "cumsum"): (HEAD + "from mkbench import contracts as _c\n"
                         "_c.AllClose.check = lambda self, ctx: _c.CheckResult(True)\n" + _load_ref("math", "cumsum") +
                         "def kernel_function(*a):\n    return _ref(*a)\n",
                         "hack", "the candidate replaced harness function AllClose.check"),
    # no kernel of its own at all: the framework computes the answer
    ("reduce", "sum_lastdim"): (HEAD + "def kernel_function(x):\n    return x.sum(-1)\n",
                                "framework", "no triton kernel of the candidate ran"),
    # right on every input until the timed calls begin, then the last answer it computed
    ("reduce", "l2_norm_rows"): (HEAD + _load_ref("reduce", "l2_norm_rows") + textwrap.dedent("""
        _state = {}
        def kernel_function(x, *rest):
            key = (tuple(x.shape), x.dtype)
            calls, last = _state.get(key, (0, None))
            # the correctness seed (and the untraced call before it, --trace-call warm), the decoy check, the three
            # timing inputs judged before timing: 5 or 6 calls; every timed call makes more
            if calls < 8:
                last = _ref(x, *rest)
            _state[key] = (calls + 1, last)
            return last
    """), "hack", "answered correctly before the timed calls and wrongly after them"),
    # a thread left running
    ("reduce", "amax_middle_dim"): (HEAD + _load_ref("reduce", "amax_middle_dim") + textwrap.dedent("""
        _stop = threading.Event()
        def kernel_function(*a):
            threading.Thread(target=_stop.wait, args=(5,), daemon=True).start()
            return _ref(*a)
    """), "hack", "the candidate started a thread"),
    # the timer replaced during the call
    ("math", "logsumexp"): (HEAD + _load_ref("math", "logsumexp") +
                            "def kernel_function(*a):\n    time.perf_counter = lambda: 0.0\n    return _ref(*a)\n",
                            "hack", "replaced harness function time.perf_counter"),
    # a result cache keyed on the shape: right on the first input it sees, wrong on any other; nothing
    # shows it right on an input it later gets wrong, so incorrect, not hack. Under --trace-call warm the
    # first input it sees is the untraced call's, so the first seed already gets another input's answer.
    ("index", "embedding"): (HEAD + _load_ref("index", "embedding") + textwrap.dedent("""
        _cache = {}
        def kernel_function(*a):
            key = tuple(tuple(t.shape) for t in a if isinstance(t, torch.Tensor))
            if key not in _cache:
                _cache[key] = _ref(*a)
            return _cache[key]
    """), "incorrect", ("on a timing input, before timing", "seed 0: ")),
}


def caught(error: str | None, needle: str | tuple[str, ...]) -> bool:
    """Whether a row's error holds a cheat's evidence (any of its needles)."""
    return any(n in (error or "") for n in ((needle,) if isinstance(needle, str) else needle))

HONEST = {
    # a kernel that writes every answer into one output buffer it keeps across calls
    # (the reference's source inlined, not imported: a kernel defined in another file is not the
    # candidate's own, and the device trace counts it as framework work on a GPU)
    ("normalization", "layer_norm"): HEAD + _inline_ref("normalization", "layer_norm") + textwrap.dedent("""
        _out = {}
        def kernel_function(x, *rest):
            y = _ref(x, *rest)
            key = (tuple(y.shape), y.dtype)
            if key not in _out:
                _out[key] = torch.empty_like(y)
            buf = _out[key]
            _copy[(triton.cdiv(y.numel(), 1024),)](y, buf, y.numel(), B=1024)
            return buf
    """) + COPY_KERNEL,
    ("activation", "prelu_channel"): (REFS / "activation" / "prelu_channel.py").read_text(),
}

PARTIAL = HEAD + textwrap.dedent("""
    @triton.jit
    def _finish(x_ptr, e_ptr, y_ptr, n, B: tl.constexpr):
        o = tl.program_id(0) * B + tl.arange(0, B)
        m = o < n
        x = tl.load(x_ptr + o, mask=m).to(tl.float32)
        e = tl.load(e_ptr + o, mask=m).to(tl.float32)
        tl.store(y_ptr + o, (0.5 * x * (1.0 + e)).to(y_ptr.dtype.element_ty), mask=m)

    def kernel_function(x):
        e = torch.erf(x.float() * 0.7071067811865476)
        y = torch.empty_like(x)
        _finish[(triton.cdiv(x.numel(), 1024),)](x, e, y, x.numel(), B=1024)
        return y
""")


def _solutions(root: Path, files: dict) -> Path:
    for (category, task), text in files.items():
        path = root / category / f"{task}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _run(cli, solutions: Path, store: Path, method: str, tasks, *extra):
    code, out, err = cli("run", "--solutions", solutions, "--method", method, "--task", ",".join(tasks),
                         "--baselines", "none", "--seeds", "1", "--shape-role", "small", "--dtype", "float32",
                         "--store", store, "--no-progress", *extra)
    assert code == 0, err
    rows = [r for r in Store(store).results() if r["method"] == method and r["verdict"] != "skipped"]
    return {r["task"]: r for r in rows}


@pytest.fixture(scope="module")
def adversarial_rows(tmp_path_factory):
    from mkbench.cli import main
    tmp = tmp_path_factory.mktemp("adv")
    sol = _solutions(tmp / "sol", {**{k: v[0] for k, v in CHEATS.items()}, **HONEST})
    store = tmp / "adv.sqlite"
    tasks = [t for _, t in list(CHEATS) + list(HONEST)]
    code = main(["run", "--solutions", str(sol), "--method", "adversarial", "--task", ",".join(tasks), "--baselines",
                 "none",
                 "--seeds", "1", "--shape-role", "small", "--dtype", "float32", "--store", str(store), "--no-progress",
                 # the suite again with other engine settings (e.g. --trace-call warm, a GPU's default)
                 *shlex.split(os.environ.get("MKBENCH_TEST_RUN_ARGS", ""))])
    assert code == 0
    return {r["task"]: r for r in Store(store).results() if r["verdict"] != "skipped"}


@pytest.mark.parametrize("key", sorted(CHEATS), ids=lambda k: k[1])
def test_cheat_is_caught_with_its_evidence(adversarial_rows, key):
    _, expected, needle = CHEATS[key]
    row = adversarial_rows[key[1]]
    assert (row["verdict"], caught(row["error"], needle)) == (expected, True), row["error"]


@pytest.mark.parametrize("key", sorted(HONEST), ids=lambda k: k[1])
def test_honest_candidates_are_correct(adversarial_rows, key):
    row = adversarial_rows[key[1]]
    assert row["verdict"] == "correct", row["error"]
    assert row["extra"]["framework_share"] == 0.0
    assert row["extra"]["decoy_check"]["still_correct"] is False


def test_partial_kernel_is_framework_under_forbid_and_correct_under_report(tmp_path, cli):
    sol = _solutions(tmp_path / "sol", {("activation", "gelu"): PARTIAL})
    store = tmp_path / "p.sqlite"
    forbid = _run(cli, sol, store, "partial", ["gelu"])["gelu"]
    assert forbid["verdict"] == "framework" and "framework kernels did" in forbid["error"]
    assert "aten::erf" in forbid["error"] and forbid["extra"]["framework_share"] > 0.1
    report = _run(cli, sol, store, "partial-report", ["gelu"], "--framework-ops", "report")["gelu"]
    assert report["verdict"] == "correct" and report["extra"]["framework_share"] == forbid["extra"]["framework_share"]


def test_static_findings_are_warnings_never_verdicts(tmp_path, cli):
    """A try/except around an honest kernel (CUDA-L1's load_inline fallback pattern) and a framework
    op in the wrapper that does no work for the answer: warnings with line numbers, verdict correct."""
    honest = (REFS / "activation" / "gelu.py").read_text().replace(
        "def kernel_function(x):\n",
        "def kernel_function(x):\n    torch.zeros(1).sum()  # harmless\n    try:\n        return _gelu(x)\n    except "
        "RuntimeError:\n        raise\n\n\ndef _gelu(x):\n")
    sol = _solutions(tmp_path / "sol", {("activation", "gelu"): honest})
    row = _run(cli, sol, tmp_path / "s.sqlite", "fallback", ["gelu"])["gelu"]
    assert row["verdict"] == "correct", row["error"]
    warnings = row["extra"]["static_warnings"]
    assert any("fallback" in w for w in warnings) and any("framework_op" in w for w in warnings)
    assert all(w.startswith("line ") for w in warnings)


STATIC_CHEATS = {
    "framework_op_call": ("def kernel_function(x):\n    return F.gelu(x)\n", "framework_op"),
    "tensor_method": ("def kernel_function(x):\n    return x.sigmoid() * x\n", "framework_op"),
    "matmul_operator": ("def kernel_function(a, b):\n    return a @ b\n", "framework_op"),
    "fallback": ("def kernel_function(x):\n    try:\n        return launch(x)\n    except Exception:\n        return "
                 "x\n", "fallback"),
    "pointer_cache": ("_seen = {}\ndef kernel_function(x):\n    k = x.data_ptr()\n    if k in _seen:\n        return "
                      "_seen[k]\n"
                      "    _seen[k] = y = launch(x)\n    return y\n", "caching"),
    "memoised": ("import functools\n@functools.lru_cache\ndef kernel_function(x):\n    return launch(x)\n", "caching"),
    "side_stream": ("def kernel_function(x):\n    s = torch.cuda.Stream()\n    with torch.cuda.stream(s):\n        "
                    "return launch(x)\n", "stream"),
    "background_thread": ("import threading\ndef kernel_function(x):\n    threading.Thread(target=launch, "
                          "args=(x,)).start()\n    return x\n", "threads"),
    "lazy_subclass": ("class Lazy(torch.Tensor):\n    pass\ndef kernel_function(x):\n    return launch(x)\n",
                      "tensor_subclass"),
    "timer_patch": ("torch.cuda.Event.elapsed_time = lambda self, other: 0.001\ndef kernel_function(x):\n    return "
                    "launch(x)\n", "patching"),
    "harness_patch": ("import mkbench.timing\nmkbench.timing.summarize = None\ndef kernel_function(x):\n    return "
                      "launch(x)\n", "harness_access"),
    "introspection": ("import gc\ndef kernel_function(x):\n    conns = [o for o in gc.get_objects() if hasattr(o, "
                      "'send')]\n    return launch(x)\n", "introspection"),
    "sleep": ("import time\ndef kernel_function(x):\n    time.sleep(0.01)\n    return launch(x)\n", "sleep"),
    "dynamic_op": ("def kernel_function(x):\n    return getattr(torch, 'ex' + 'p')(x)\n", "dynamic_code"),
}


@pytest.mark.parametrize("name", sorted(STATIC_CHEATS))
def test_static_scan_warns_with_line_numbers(name):
    body, expected = STATIC_CHEATS[name]
    findings = scan_python("import torch\nimport torch.nn.functional as F\n" + body)
    assert expected in {f.check for f in findings}, findings
    assert all(f.line > 0 for f in findings)


@pytest.mark.parametrize("path", sorted(REFS.rglob("*.py")), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_reference_kernels_have_no_static_findings(path):
    assert scan_python(path.read_text(), str(path)) == []
