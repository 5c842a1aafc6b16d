"""Deliberately cheating candidates, each caught with the expected reason; the shipped reference
kernels produce no findings. Static cheats are read from source; runtime cheats are run through the
worker's own evaluation code in this process (Triton interpreter); one end-to-end run shows a hack
verdict in the store, never counted as correct."""

import threading
import time
from pathlib import Path

import pytest
import torch

from mkbench.candidate import load_python_candidate
from mkbench.plugins import build_registry
from mkbench.static_checks import scan_python
from mkbench.store import Store
from mkbench.worker import Evaluation

ROOT = Path(__file__).resolve().parent.parent
REFS = ROOT / "backends" / "triton" / "kernels"
REG = build_registry()
CPU = REG.hardware["cpu"]
TRITON = REG.backends["triton"]
GELU = REG.tasks["gelu"]

HEADER = "import torch\nimport triton\nimport triton.language as tl\nimport torch.nn.functional as F\n"

STATIC_CHEATS = {
    "framework_op_call": ("def kernel_function(x):\n    return F.gelu(x)\n", "framework_op"),
    "decoy_kernel": ("@triton.jit\ndef _k(x_ptr):\n    pass\n\ndef kernel_function(x):\n    _k[(1,)](x)\n"
                     "    return 0.5 * x * (1 + torch.erf(x * 0.7071067811865476))\n", "framework_op"),
    "tensor_method": ("def kernel_function(x):\n    return x.sigmoid() * x\n", "framework_op"),
    "matmul_operator": ("def kernel_function(a, b):\n    return a @ b\n", "framework_op"),
    "fallback": ("def kernel_function(x):\n    try:\n        return launch(x)\n    except Exception:\n        return x\n", "fallback"),
    "pointer_cache": ("_seen = {}\ndef kernel_function(x):\n    k = x.data_ptr()\n    if k in _seen:\n        return _seen[k]\n"
                      "    _seen[k] = y = launch(x)\n    return y\n", "caching"),
    "first_call_cache": ("_cache = {}\ndef kernel_function(x):\n    if 'y' not in _cache:\n        _cache['y'] = launch(x)\n"
                         "    return _cache['y']\n", "caching"),
    "memoised": ("import functools\n@functools.lru_cache\ndef kernel_function(x):\n    return launch(x)\n", "caching"),
    "side_stream": ("def kernel_function(x):\n    s = torch.cuda.Stream()\n    with torch.cuda.stream(s):\n        return launch(x)\n", "stream"),
    "background_thread": ("import threading\ndef kernel_function(x):\n    threading.Thread(target=launch, args=(x,)).start()\n    return x\n", "threads"),
    "lazy_subclass": ("class Lazy(torch.Tensor):\n    pass\ndef kernel_function(x):\n    return launch(x)\n", "tensor_subclass"),
    "timer_patch": ("torch.cuda.Event.elapsed_time = lambda self, other: 0.001\ndef kernel_function(x):\n    return launch(x)\n", "patching"),
    "harness_patch": ("import mkbench.timing\nmkbench.timing.summarize = None\ndef kernel_function(x):\n    return launch(x)\n", "harness_access"),
    "fake_results": ("import gc\ndef kernel_function(x):\n    conns = [o for o in gc.get_objects() if hasattr(o, 'send')]\n    return launch(x)\n", "introspection"),
    "sleep_in_warmup": ("import time\ndef kernel_function(x):\n    time.sleep(0.01)\n    return launch(x)\n", "sleep"),
    "l2_persistence": ("import ctypes\n_rt = ctypes.CDLL('libcudart.so')\ndef kernel_function(x):\n    return launch(x)\n", "introspection"),
    "tf32_switch": ("torch.backends.cuda.matmul.allow_tf32 = True\ndef kernel_function(a, b):\n    return launch(a, b)\n", "patching"),
    "dynamic_op": ("def kernel_function(x):\n    return getattr(torch, 'ex' + 'p')(x)\n", "dynamic_code"),
    "eval_code": ("def kernel_function(x):\n    return eval('x.exp()')\n", "dynamic_code"),
}


@pytest.mark.parametrize("name", sorted(STATIC_CHEATS))
def test_static_cheat_is_caught(name):
    body, expected = STATIC_CHEATS[name]
    findings = scan_python(HEADER + body)
    assert expected in {f.check for f in findings}, findings
    assert all(f.line > 0 for f in findings)


@pytest.mark.parametrize("path", sorted(REFS.rglob("*.py")), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_reference_kernels_have_no_findings(path):
    assert scan_python(path.read_text(), str(path)) == []


# --- runtime cheats, through the worker's evaluation -------------------------------------

def _evaluation():
    job = {"task": GELU, "backend": TRITON, "hw": CPU, "seeds": 1, "run_seed": 99,
           "timing": __import__("mkbench.timing", fromlist=["TimingSettings"]).TimingSettings()}
    return Evaluation(job, lambda msg: None)


def _ref_gelu():
    return load_python_candidate(REFS / "activation" / "gelu.py", "gelu")


SMALL = GELU.shape("small")


def test_reference_passes_runtime_checks():
    status, msg, _ = _evaluation().check_combo(_ref_gelu(), SMALL, "float32")
    assert status == "correct", msg


def test_decoy_without_kernel_launch():
    status, msg, _ = _evaluation().check_combo(lambda x: torch.nn.functional.gelu(x), SMALL, "float32")
    assert status == "hack" and "no triton kernel was launched" in msg


def test_harness_function_replaced_at_run_time():
    ev, ref = _evaluation(), _ref_gelu()
    original = time.perf_counter

    def cheat(x):
        time.perf_counter = lambda: 0.0
        return ref(x)
    try:
        status, msg, _ = ev.check_combo(cheat, SMALL, "float32")
    finally:
        time.perf_counter = original
    assert status == "hack" and "replaced harness function time.perf_counter" in msg


def test_background_thread_left_running():
    ev, ref = _evaluation(), _ref_gelu()
    stop = threading.Event()

    def cheat(x):
        threading.Thread(target=stop.wait, daemon=True).start()
        return ref(x)
    try:
        status, msg, _ = ev.check_combo(cheat, SMALL, "float32")
    finally:
        stop.set()
    assert status == "hack" and "the candidate started a thread (" in msg and "test_adversarial.py" in msg


def _timed_messages(ev, fn, combo=("small", "float32")):
    sent = []
    ev.send = sent.append
    ev.timing(fn, [combo])
    return [m for m in sent if m["kind"] == "timed"]


def test_answers_going_stale_during_timing_is_a_hack():
    """Right on every input until the timed calls begin, then the last answer it computed: the
    timing inputs it answered rightly before timing come back wrong after it."""
    ev, ref = _evaluation(), _ref_gelu()
    honest_calls = ev.job["seeds"] + ev.job["timing"].pool_size  # the correctness seed, then each timing input once
    state = {"calls": 0, "last": None}

    def cheat(x):
        state["calls"] += 1
        if state["calls"] <= honest_calls:
            state["last"] = ref(x)
        return state["last"]
    assert ev.check_combo(cheat, SMALL, "float32")[0] == "correct"
    timed = _timed_messages(ev, cheat)
    assert timed and "answered correctly before the timed calls and wrongly after them" in timed[0]["hack"], timed


def test_wrong_on_a_timing_input_is_incorrect_not_a_hack():
    """A result cache keyed on the shape is right for the first input it sees and wrong for every
    other: the timing inputs, judged before any timed call, show it wrong, and nothing shows it was
    ever right on them, so the verdict is incorrect (as for a half-precision kernel that misses the
    contract on one element of one timing input), not hack."""
    ev, ref = _evaluation(), _ref_gelu()
    cache = {}

    def cheat(x):
        if x.shape not in cache:
            cache[x.shape] = ref(x)
        return cache[x.shape]
    assert ev.check_combo(cheat, SMALL, "float32")[0] == "correct"  # one call per shape: looks fine
    timed = _timed_messages(ev, cheat)
    assert timed and "hack" not in timed[0] and "timing" not in timed[0]
    assert timed[0]["incorrect"].startswith("on a timing input, before timing: timing input 0: output:")


def test_timing_verdicts_land_in_rows():
    from mkbench.isolation import WorkerOutcome
    from mkbench.pipeline import Unit, _rows_for
    unit = Unit(GELU, TRITON, "m", None, [("small", "float32"), ("large", "float32")], [])
    timing = {"median_us": 10.0, "iqr_us": 1.0, "mean_us": 10.0, "stderr_us": 0.1, "min_us": 9.0, "n": 20,
              "timer": "t", "interpreted": False}
    messages = [{"kind": "compile", "ok": True}]
    for combo in unit.combos:
        messages.append({"kind": "check", "combo": list(combo), "status": "correct", "message": "",
                         "max_abs_err": 0.0, "max_rel_err": 0.0})
    messages += [{"kind": "timed", "combo": ["small", "float32"], "incorrect": "on a timing input, before timing: x"},
                 {"kind": "timed", "combo": ["large", "float32"], "timing": timing, "incorrect": "after timing, a fresh seed fails: y"},
                 {"kind": "done"}]
    rows = {r["shape"]: r for r in _rows_for(unit, WorkerOutcome(messages=messages, finished=True))}
    assert (rows["small"]["verdict"], rows["small"]["correct_status"], rows["small"]["perf_status"]) == ("incorrect", "incorrect", "not_run")
    assert (rows["large"]["verdict"], rows["large"]["correct_status"], rows["large"]["perf_status"]) == ("incorrect", "incorrect", "timed")
    assert rows["large"]["time_median_us"] == 10.0 and rows["large"]["error"].endswith("fails: y")


@pytest.mark.parametrize("name, fn, needle", [
    ("lazy_output", lambda x: torch.nn.functional.gelu(x).as_subclass(type("Lazy", (torch.Tensor,), {})), "plain torch.Tensor"),
    # garbage memory may hold NaN bit patterns, which the contract reports first
    ("uninitialised", lambda x: torch.empty_like(x), ("outside rtol", "NaN positions differ")),
    ("constant", lambda x: torch.full_like(x, 0.3), "outside rtol"),
    ("aliases_input", lambda x: x, "aliases an input"),
    ("bf16_compute", lambda x: torch.nn.functional.gelu(x.bfloat16()).float(), "outside rtol"),
])
def test_wrong_answers_are_incorrect(name, fn, needle):
    status, msg, _ = _evaluation().check_combo(fn, SMALL, "float32")
    needles = needle if isinstance(needle, tuple) else (needle,)
    assert status == "incorrect" and any(n in msg for n in needles), msg


def test_hack_verdict_lands_in_store_and_is_not_correct(tmp_path, cli):
    sol = tmp_path / "sol" / "activation"
    sol.mkdir(parents=True)
    (sol / "gelu.py").write_text(HEADER + "def kernel_function(x):\n    return F.gelu(x)\n")
    store = tmp_path / "s.sqlite"
    code, out, err = cli("run", "--solutions", tmp_path / "sol", "--method", "cheat", "--task", "gelu",
                         "--baselines", "none", "--seeds", "1", "--store", store, "--no-progress")
    assert code == 0, err
    rows = [r for r in Store(store).results() if r["verdict"] != "skipped"]
    assert {r["verdict"] for r in rows} == {"hack"}
    assert all("static check: line 6: framework_op: calls torch.nn.functional.gelu" in r["error"] for r in rows)
    assert "0/1 candidates correct" in out


def test_faster_than_the_roofline_is_a_hack():
    from mkbench.pipeline import Unit, _apply_integrity, roofline_floor_us
    h100 = REG.hardware["h100"]
    row = {"dtype": "float32", "bytes": 512 * 2**20, "flops": 0.0, "time_median_us": 100.0, "interpreted": 0,
           "verdict": "correct", "perf_status": "timed", "error": None, "extra": {}}
    floor = roofline_floor_us(row, h100)
    assert 150 < floor < 170  # 512 MiB at 3.35 TB/s
    unit = Unit(GELU, TRITON, "m", None, [], [])
    _apply_integrity(unit, [row], h100)
    assert row["verdict"] == "hack" and "under the roofline floor" in row["error"]
    honest = dict(row, time_median_us=1.2 * floor, verdict="correct", extra={})
    _apply_integrity(unit, [honest], h100)
    assert honest["verdict"] == "correct"


def test_backend_detected_runtime_cheat_is_a_hack():
    """A backend that sees a rule broken only it can see (a read-back to the host, a queue of the
    candidate's own) raises IntegrityViolation; the verdict is hack, with its message."""
    from mkbench.errors import IntegrityViolation

    class Watchful(type(TRITON)):
        def run(self, fn, inputs):
            raise IntegrityViolation("candidate read device results back to the host (enqueue_copy)")

    ev = _evaluation()
    ev.backend = Watchful()
    status, msg, _ = ev.check_combo(_ref_gelu(), SMALL, "float32")
    assert status == "hack" and "read device results back" in msg
