"""Every unit ends with a verdict in bounded time: a unit past its own limit (``--unit-limit``) is
``timeout``, naming the unit limit and the step it was in, even when no single step reached the step
limit; and a candidate whose import replaced a timing function ends right after its compile step as
``hack``, with what it replaced, before any of its calls or timings could run on the replacement."""

import textwrap
import time
from pathlib import Path

import pytest

from mkbench.engine.procs import Timeout
from mkbench.engine.session import UnitTimeout, WorkerSession
from mkbench.store import Store

REFS = Path(__file__).resolve().parent.parent / "backends" / "triton" / "kernels"


def _load_ref(category: str, task: str) -> str:
    """Source lines that import a shipped reference kernel as ``_ref``: the candidates below are
    honest but for what they do at import."""
    return textwrap.dedent(f"""
        import importlib.util as _u
        _s = _u.spec_from_file_location("_ref_{task}", {str(REFS / category / (task + '.py'))!r})
        _m = _u.module_from_spec(_s); _s.loader.exec_module(_m)
        _ref = _m.kernel_function
    """)


def _solutions(root: Path, files: dict[tuple[str, str], str]) -> Path:
    for (category, task), text in files.items():
        path = root / category / f"{task}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _rows(store: Path, method: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in Store(store).results():
        if r["method"] == method and r["verdict"] != "skipped":
            out.setdefault(r["task"], []).append(r)
    return out


# --- the session's arithmetic, without processes -------------------------------------------------

def _session(limit: float | None, used: float, waited: float = 0.0) -> WorkerSession:
    w = object.__new__(WorkerSession)  # no worker: only the unit clock is exercised
    w.started, w.unit_limit, w.waited = time.monotonic() - used - waited, limit, waited
    w.stage, w.combo, w.clock, w.seconds = "correctness", ("small", "float32"), {}, {}
    return w


def test_a_step_gets_what_is_left_of_the_unit_and_waits_do_not_count():
    w = _session(limit=100.0, used=70.0, waited=500.0)  # 500 s waiting for other lanes: not the unit's own
    given = []
    assert w.within(180.0, lambda s: given.append(s) or "answer", "run") == "answer"
    assert 29.0 < given[0] <= 30.0  # the step's 180 s cut to the unit's 30 s left
    w.started -= 1000.0  # 1000 s pass, all of them waiting for the device
    w.waited_for("wait_shared", 1000.0)
    assert w.clock["wait_shared"] == 1000.0 and 29.0 < w.left() <= 30.0
    assert _session(limit=None, used=1e6).within(5.0, lambda s: s, "run") == 5.0  # no unit limit: the step's


def test_no_time_left_ends_the_unit_without_asking_the_worker():
    w = _session(limit=20.0, used=21.0)
    with pytest.raises(UnitTimeout, match=r"unit limit of 20 s .*correctness stage, step run"):
        w.within(180.0, lambda s: pytest.fail("a request was sent with no time left"), "run")


def test_a_timeout_is_the_unit_limit_only_when_the_unit_deadline_came_first():
    def hang(seconds):
        raise Timeout()
    with pytest.raises(UnitTimeout, match="unit limit"):
        _session(limit=100.0, used=90.0).within(180.0, hang, "time")
    with pytest.raises(Timeout) as caught:  # the step's own limit, shorter than what is left of the unit's
        _session(limit=1000.0, used=1.0).within(30.0, hang, "time")
    assert not isinstance(caught.value, UnitTimeout)


# --- whole runs ----------------------------------------------------------------------------------

def test_unit_limit_stops_a_unit_no_step_limit_would(tmp_path, cli):
    """Each call takes 40 s: under the 60 s step limit, so only the unit limit (15 s) can end it."""
    slow = _load_ref("activation", "gelu") + "import time\ndef kernel_function(x):\n    time.sleep(40)\n" \
                                             "    return _ref(x)\n"
    sol = _solutions(tmp_path / "sol", {("activation", "gelu"): slow})
    store = tmp_path / "s.sqlite"
    t = time.monotonic()
    code, _, err = cli("run", "--solutions", sol, "--method", "slow", "--task", "gelu", "--shape-role", "small",
                       "--baselines", "none", "--seeds", "1", "--timeout-step", "60", "--unit-limit", "15",
                       "--store", store, "--no-progress", "--no-confine")
    elapsed = time.monotonic() - t
    assert code == 0, err
    rows = _rows(store, "slow")["gelu"]
    timed_out = [r for r in rows if r["verdict"] == "timeout"]
    assert len(timed_out) == 1, [(r["verdict"], r["error"]) for r in rows]
    error = timed_out[0]["error"]
    assert "unit limit of 15 s (--unit-limit)" in error and "correctness stage, step run" in error, error
    assert timed_out[0]["correct_status"] == "timeout"
    assert {r["verdict"] for r in rows} == {"timeout", "not_run"}
    assert elapsed < 38, f"the unit was not stopped at its limit: the run took {elapsed:.0f} s"


#: timing functions replaced at import, around an honest kernel: each task's candidate, and the
#: function its evidence must name
IMPORT_PATCHES = {
    # module-level: the CUDA event timer, and the host clock
    ("activation", "gelu"): ("import torch\ntorch.cuda.Event.elapsed_time = lambda *a: 0.001\n",
                             "replaced harness function Event.elapsed_time"),
    ("activation", "silu"): ("import time\ntime.perf_counter = lambda: 0.0\n",
                             "replaced harness function time.perf_counter"),
    # through an alias of the module, the original kept
    ("activation", "elu"): ("import torch.cuda as tc\n_orig = tc.synchronize\n"
                            "tc.synchronize = lambda *a, **k: None\n",
                            "replaced harness function torch.cuda.synchronize"),
    # through an alias of the class
    ("activation", "selu"): ("from torch.cuda import Event as E\nE.elapsed_time = lambda self, other: 0.001\n",
                             "replaced harness function Event.elapsed_time"),
    # patched at import, put back at the first call: only the check right after the import sees it
    ("activation", "mish"): ("import time\n_orig = time.perf_counter\ntime.perf_counter = lambda: 0.0\n"
                             "def _restore():\n    time.perf_counter = _orig\n",
                             "replaced harness function time.perf_counter"),
}


def test_timing_patched_at_import_is_hack_at_once(tmp_path, cli):
    files = {}
    for (category, task), (patch, _) in IMPORT_PATCHES.items():
        restore = "    _restore()\n" if "_restore" in patch else ""
        files[(category, task)] = (patch + _load_ref(category, task) + "def kernel_function(*a):\n" + restore
                                   + "    return _ref(*a)\n")
    sol = _solutions(tmp_path / "sol", files)
    store = tmp_path / "s.sqlite"
    code, _, err = cli("run", "--solutions", sol, "--method", "patched", "--task",
                       ",".join(t for _, t in IMPORT_PATCHES), "--shape-role", "small", "--dtype", "float32",
                       "--baselines", "none", "--seeds", "1", "--store", store, "--no-progress")
    assert code == 0, err
    rows = _rows(store, "patched")
    assert sorted(rows) == sorted(t for _, t in IMPORT_PATCHES)
    for (_, task), (_, needle) in IMPORT_PATCHES.items():
        for r in rows[task]:
            assert r["verdict"] == "hack", (task, r["verdict"], r["error"])
            assert r["error"].startswith("when the candidate was imported (compile step): ") and needle in r["error"], \
                (task, r["error"])
            # the unit ended at its compile: no correctness run, no timing
            assert (r["compile_status"], r["correct_status"], r["perf_status"]) == ("ok", "not_run", "not_run")
            steps = r["extra"]["unit_seconds"]["steps"]
            # (its worker's start and stop share the device, so a wait_shared may be booked for them)
            assert not {"run", "run_traced", "judge", "time_step", "wait_exclusive"} & set(steps), (task, steps)
            assert r["time_median_us"] is None
