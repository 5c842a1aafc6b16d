"""Fault injection (issue 19): hostile and broken candidates, a killed or interrupted orchestrator, a
second ``--resume``, a damaged store and bad input, each proven through real runs of the CLI, with the
store checked row for row afterwards and, where processes are involved, the process table checked for
orphans.

Runs whose orchestrator is attacked (killed, interrupted, handed a FIFO) go through ``python -m
mkbench`` in a subprocess of its own session: a hang then fails the test on a timeout instead of
hanging pytest. Each such subprocess carries a unique marker in its environment, which everything it
starts inherits (the fork server, workers, judges, their guardians, the prepare pool, Ray's
processes), so the orphan check finds exactly the processes that descend from that run, even after
they were re-parented to init, and never another user's. Runs that only need their verdicts go
through the CLI in-process (the ``cli`` fixture), which reuses one fork server and is faster.

The GPU part (``-m gpu``, skipped without an NVIDIA GPU): a candidate that runs the device out of
memory, one that makes an illegal address access and one whose kernel never terminates, each
followed in the same run, on the same device, by a candidate that is judged normally.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from mkbench.store import Store

ROOT = Path(__file__).resolve().parent.parent
REFS = ROOT / "backends" / "triton" / "kernels" / "activation"
# One small float32 shape, one seed, correctness only: what a fault does shows on the first step.
QUICK = ["--shape-role", "small", "--dtype", "float32", "--seeds", "1", "--baselines", "none", "--no-timing",
         "--no-progress"]
TAG_VAR = "MKBENCH_FAULT_TAG"


# --- helpers -----------------------------------------------------------------------------------------

def _solutions(root: Path, sources: dict[str, str]) -> Path:
    """A solutions folder with one candidate per task, named ``category/task`` (or ``task``: activation)."""
    for task, text in sources.items():
        path = root / f"{task if '/' in task else 'activation/' + task}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _with_reference(task: str, body: str, at_import: str = "") -> str:
    """A candidate that does ``body`` and then returns the shipped Triton reference's answer."""
    return (f"import os, sys\nimport importlib.util as _u\n{at_import}"
            f"_s = _u.spec_from_file_location('_ref_{task}', {str(REFS / (task + '.py'))!r})\n"
            "_m = _u.module_from_spec(_s); _s.loader.exec_module(_m)\n"
            "def kernel_function(x, *rest):\n" + textwrap.indent(textwrap.dedent(body), "    ") +
            "    return _m.kernel_function(x, *rest)\n")


def _digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def _rows(store_path: Path) -> list[dict]:
    store = Store(store_path)
    try:
        return store.results()
    finally:
        store.close()


def _table(store_path: Path, sql: str) -> list[tuple]:
    db = sqlite3.connect(store_path, timeout=30)
    try:
        return [tuple(r) for r in db.execute(sql)]
    finally:
        db.close()


def _checked(store_path: Path, method: str) -> dict[str, dict]:
    """The rows of ``method`` that were evaluated (not skipped), one per task, after checking the store
    row for row: exactly one row per (task, shape, dtype) and one unit per (task, backend, method),
    every unit with its rows, and every shape and dtype not selected recorded as skipped."""
    rows = [r for r in _rows(store_path) if r["method"] == method]
    keys = Counter((r["run_id"], r["task"], r["shape"], r["dtype"]) for r in rows)
    assert all(n == 1 for n in keys.values()), [k for k, n in keys.items() if n > 1]
    units = _table(store_path, f"SELECT run_id, task, backend, method FROM units WHERE method={method!r}")
    assert len(units) == len(set(units))
    assert {(u[0], u[1]) for u in units} == {(r["run_id"], r["task"]) for r in rows}
    evaluated = {}
    for r in rows:
        if (r["shape"], r["dtype"]) == ("small", "float32"):
            assert r["task"] not in evaluated
            evaluated[r["task"]] = r
        else:
            assert r["verdict"] == "skipped", r
    return evaluated


def _tagged(tag: str) -> list[tuple[int, str]]:
    """Live processes whose environment carries ``tag``: the descendants of one orchestrator."""
    needle = f"{TAG_VAR}={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            if needle not in env:
                continue
            with open(f"/proc/{entry}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":  # a zombie is dead, only not yet reaped
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")[:120]
        except OSError:  # gone meanwhile
            continue
        found.append((int(entry), cmd))
    return found


def _assert_no_orphans(tag: str, within: float = 15.0, spare=lambda cmd: False) -> None:
    """Every process of the run (but those ``spare`` names) gone within ``within`` seconds; any left is
    killed (so a failure does not leave a busy process behind) and named in the failure."""
    deadline = time.monotonic() + within
    while True:
        left = [(pid, cmd) for pid, cmd in _tagged(tag) if not spare(cmd)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"processes of the killed run still alive {within:.0f} s later: {left}"


class Orchestrator:
    """``python -m mkbench ...`` in a session of its own (as from a terminal), marked with a tag."""

    def __init__(self, args: list, workdir: Path, tag: str | None = None):
        self.tag = tag or uuid.uuid4().hex
        self.out_path = workdir / f"orchestrator-{uuid.uuid4().hex[:8]}.out"
        self.err_path = self.out_path.with_suffix(".err")
        env = dict(os.environ, **{TAG_VAR: self.tag})
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "mkbench", *map(str, args)], stdout=out, stderr=err,
                                         env=env, start_new_session=True, cwd=workdir)

    def wait(self, timeout: float) -> tuple[int, str, str]:
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"mkbench did not finish within {timeout:.0f} s: {self.proc.args}\n{self.output()[1][-2000:]}")
        return (self.proc.returncode, *self.output())

    def output(self) -> tuple[str, str]:
        return self.out_path.read_text(errors="replace"), self.err_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the orchestrator alone, as the OOM killer or ``kill -9 PID`` would."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)


def mkbench(args: list, workdir: Path, timeout: float = 600) -> tuple[int, str, str]:
    """Run mkbench to completion in a subprocess; afterwards, nothing it started may be left."""
    orch = Orchestrator(args, workdir)
    result = orch.wait(timeout)
    _assert_no_orphans(orch.tag)
    return result


# --- candidate faults ----------------------------------------------------------------------------------

# A candidate that writes to its worker's pipe to the orchestrator, found the way any candidate could.
TO_ORCHESTRATOR = textwrap.dedent("""
    import gc, os, pickle, struct
    from multiprocessing.connection import Connection

    def _to_orchestrator(data):
        for obj in gc.get_objects():
            if isinstance(obj, Connection) and not obj.closed:
                os.write(obj.fileno(), data)
""")

MEMORY_CAP_MB = 1024  # --worker-memory-mb of the fault run: a worker starts near 250 MiB


def _fault_candidates(tmp_path: Path) -> dict[str, tuple[str, str, str, str]]:
    """task -> (candidate source, verdict, the status column that says where, text the error must hold)."""
    pwned = tmp_path / "pwned"
    return {
        # output on stdout/stderr goes to the unit's log: the run and its verdict are unaffected
        "gelu": (_with_reference("gelu", """
                    junk = bytes(range(256)) * 4096 + b"JUNK-TOKEN\\n"
                    os.write(1, junk)
                    os.write(2, junk)
                    print("JUNK-TOKEN on sys.stdout \\x00\\x1b[2J")
                    sys.stderr.write("JUNK-TOKEN on sys.stderr\\n")
                 """), "correct", "correct_status", ""),
        # stdin, stdout and stderr closed at import: the worker still answers, the verdict stands
        "logsigmoid": (_with_reference("logsigmoid", "pass\n", at_import="os.close(0); os.close(1); os.close(2)\n"),
                       "correct", "correct_status", ""),
        # bytes on the worker's pipe that are no message: an error verdict, never a crash of the run
        "elu": (TO_ORCHESTRATOR + "def kernel_function(x, *rest):\n"
                "    _to_orchestrator(struct.pack('!i', 12) + b'not a pickle')\n    return x.clone()\n",
                "error", "correct_status", "unreadable message"),
        # a message header announcing a gigabyte: refused before anything is read
        "hardsigmoid": (TO_ORCHESTRATOR + "def kernel_function(x, *rest):\n"
                        "    _to_orchestrator(struct.pack('!i', 1 << 30))\n    return x.clone()\n",
                        "error", "correct_status", "message over"),
        # a well-formed pickle that would run a shell command if the orchestrator unpickled it plainly
        "leaky_relu": (TO_ORCHESTRATOR + textwrap.dedent(f"""
                           class _Payload:
                               def __reduce__(self):
                                   return (os.system, ({'touch ' + shlex.quote(str(pwned))!r},))

                           def kernel_function(x, *rest):
                               data = pickle.dumps({{"kind": "ran", "outputs": _Payload()}})
                               _to_orchestrator(struct.pack('!i', len(data)) + data)
                               return x.clone()
                       """), "error", "correct_status", "refers to posix.system: only plain data is accepted"),
        "selu": ("import ctypes\ndef kernel_function(x, *rest):\n    return ctypes.string_at(0)\n",
                 "crash", "correct_status", "SIGSEGV"),
        "silu": ("import os\ndef kernel_function(x, *rest):\n    os._exit(7)\n", "crash", "correct_status",
                 "exit code 7"),
        "mish": ("def kernel_function(x, *rest):\n    while True:\n        pass\n",
                 "timeout", "correct_status", "no progress within the correctness time limit"),
        "softplus": ("while True:\n    pass\ndef kernel_function(x, *rest):\n    return x\n",
                     "timeout", "compile_status", "no progress within the compile time limit"),
        "hardswish": ("def kernel_function(x, *rest):\n    raise RuntimeError('boom from candidate')\n",
                      "error", "correct_status", "RuntimeError: boom from candidate"),
        # allocates (and touches) host memory until the worker's cap stops it; the 2 GiB bound of its own
        # only keeps the test machine alive should the cap not hold (the error then says so, and fails)
        "gelu_tanh": (textwrap.dedent("""
                          def kernel_function(x, *rest):
                              hoard = []
                              for _ in range(32):
                                  hoard.append(bytearray(b"\\x01") * (64 << 20))
                              raise RuntimeError("HOG NOT STOPPED: 2 GiB allocated")
                      """), "error", "correct_status", "MemoryError"),
    }


def test_candidate_faults_cost_only_their_own_unit(tmp_path):
    """Eleven faulty candidates in one run: each gets the verdict its fault deserves, with the reason;
    the run finishes (exit 0); nothing a candidate sends down its pipe is executed; nothing is left
    running."""
    faults = _fault_candidates(tmp_path)
    sol = _solutions(tmp_path / "sol", {task: spec[0] for task, spec in faults.items()})
    store = tmp_path / "faults.sqlite"
    code, out, err = mkbench(["run", "--solutions", sol, "--method", "faulty", "--task", ",".join(faults), *QUICK,
                              "--timeout-step", "20", "--timeout-compile", "20", "--worker-memory-mb", MEMORY_CAP_MB,
                              "--store", store], tmp_path)
    assert code == 0, err
    assert "Traceback" not in err and "JUNK-TOKEN" not in out + err
    assert not (tmp_path / "pwned").exists(), "a pickle from a candidate was executed by the orchestrator"
    rows = _checked(store, "faulty")
    assert sorted(rows) == sorted(faults)
    for task, (_, verdict, column, needle) in faults.items():
        r = rows[task]
        assert (r["verdict"], r[column]) == (verdict, verdict), (task, r["error"])
        assert needle in (r["error"] or ""), (task, r["error"])
    assert "HOG NOT STOPPED" not in rows["gelu_tanh"]["error"]
    (run,) = Store(store).runs()
    assert run.status == "finished" and run.env["engine"]["worker_memory_mb"] == MEMORY_CAP_MB
    assert "JUNK-TOKEN" in (tmp_path / "faults-logs" / f"run{run.id}" / "gelu__faulty.log").read_text(errors="replace")


# --- a killed, interrupted or doubled orchestrator ------------------------------------------------------------

# Enough units that each of six interrupted sessions finishes one or two and some are left for the last.
KILL_TASKS = ["elu", "gelu_tanh", "hardsigmoid", "hardswish", "leaky_relu", "logsigmoid", "mish", "prelu_channel",
              "selu", "silu", "softplus", "math/erf", "math/expm1", "math/log1p"]
GIL_TASK = "gelu"  # holds the GIL for good: only a signal's default action can end it
TASK_NAMES = [Path(t).name for t in KILL_TASKS + [GIL_TASK]]


def _slow_candidates(marks: Path) -> dict[str, str]:
    """Candidates that leave a mark when called (so the test knows one is running), then loop on the CPU
    for a while and answer wrongly; one loops for good inside a regular expression, holding the GIL."""
    mark = ("    open(os.path.join({marks!r}, f'{task}.{{os.getpid()}}.{{time.time()}}'), 'w').close()\n")
    out = {}
    for task in KILL_TASKS:
        out[task] = ("import os, time\ndef kernel_function(x, *rest):\n"
                     + mark.format(marks=str(marks), task=Path(task).name) +
                     "    end = time.monotonic() + 1.5\n    while time.monotonic() < end:\n        pass\n"
                     "    return x.clone()\n")
    out[GIL_TASK] = ("import os, re, time\ndef kernel_function(x, *rest):\n"
                     + mark.format(marks=str(marks), task=GIL_TASK) +
                     "    re.match(r'(a+)+$', 'a' * 64 + '!')\n    return x\n")
    return out


def _finished(store_path: Path) -> dict[tuple, tuple]:
    """(task, shape, dtype) -> (verdict, created) of every recorded row, checking for duplicates."""
    if not store_path.exists():
        return {}
    try:
        rows = _table(store_path, "SELECT task, shape, dtype, verdict, created FROM results")
    except sqlite3.OperationalError:  # the first run has not created its tables yet
        return {}
    keys = Counter(r[:3] for r in rows)
    assert all(n == 1 for n in keys.values()), [k for k, n in keys.items() if n > 1]
    return {r[:3]: r[3:] for r in rows}


def _units(store_path: Path) -> int:
    try:
        return _table(store_path, "SELECT COUNT(*) FROM units")[0][0]
    except sqlite3.OperationalError:
        return 0


def _until(condition, orch: Orchestrator, limit: float, what: str) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert orch.alive(), f"mkbench exited before {what}: {orch.output()}"
        assert time.monotonic() < deadline, f"no {what} within {limit:.0f} s"
        time.sleep(0.1)


def _interrupt_mid_candidate(orch: Orchestrator, store_path: Path, marks: Path, units_before: int | None) -> None:
    """Wait until this orchestrator has finished a unit of its own (unless ``units_before`` is None)
    and a candidate has just started (so one is looping): the moment to stop it."""
    seen = set(os.listdir(marks))
    if units_before is not None:
        _until(lambda: _units(store_path) > units_before, orch, 300, "unit finished")
    _until(lambda: set(os.listdir(marks)) - seen, orch, 300, "candidate started")


def _run_args(sol: Path, store: Path, *extra) -> list:
    # --no-confine: these candidates leave marks outside their scratch directory so that the test
    # sees them running, which confinement rightly denies (tests/test_sandbox.py tests confinement)
    return ["run", "--solutions", sol, "--method", "slow", "--task", ",".join(TASK_NAMES), *QUICK,
            "--timeout-step", "20", "--store", store, "--resume", "--no-confine", *extra]


def test_orchestrator_killed_five_times_interrupted_and_resumed_concurrently(tmp_path):
    """The run is SIGKILLed five times, each while a candidate loops (one of them holding the GIL), then
    interrupted with Ctrl-C, then resumed to the end. After every stop: nothing that run started is
    left running, every unit finished so far is kept as it was, none is recorded twice. During the
    third session a second ``--resume`` is refused with one line while the owner is alive, and
    changes nothing; after the owner is killed the next ``--resume`` takes the run over."""
    marks = tmp_path / "marks"
    marks.mkdir()
    sol = _solutions(tmp_path / "sol", _slow_candidates(marks))
    store = tmp_path / "killed.sqlite"
    kept: dict[tuple, tuple] = {}

    def check_kept() -> None:
        now = _finished(store)
        assert {k: now.get(k) for k in kept} == kept, "a finished unit changed or vanished"
        kept.update(now)
        assert _units(store) == len({k[0] for k in now})
        assert _table(store, "SELECT COUNT(*) FROM runs")[0][0] == 1

    for session in range(5):
        orch = Orchestrator(_run_args(sol, store), tmp_path)
        _interrupt_mid_candidate(orch, store, marks, _units(store))
        if session == 2:
            owner = _table(store, "SELECT owner, status FROM runs")[0]
            before = _finished(store)
            code, out, err = mkbench(_run_args(sol, store), tmp_path, timeout=300)
            assert code == 2, (out, err)
            assert "is being run by" in _one_line_error(err) and owner[0] in err
            assert orch.alive()
            assert _table(store, "SELECT owner, status FROM runs")[0] == owner
            assert set(_finished(store)) >= set(before)
            seen = set(os.listdir(marks))
            _until(lambda: set(os.listdir(marks)) - seen, orch, 300, "candidate started")
        orch.kill()
        _assert_no_orphans(orch.tag)
        check_kept()
        assert _table(store, "SELECT status FROM runs")[0][0] == "running"  # nobody could mark it

    # Ctrl-C: the terminal signals the whole foreground process group
    orch = Orchestrator(_run_args(sol, store), tmp_path)
    _interrupt_mid_candidate(orch, store, marks, None)
    assert _units(store) < len(TASK_NAMES), "the run finished before it could be interrupted"
    os.killpg(orch.proc.pid, signal.SIGINT)
    code, out, err = orch.wait(120)
    assert code == 130, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted: ") and "--resume" in lines[0], err
    _assert_no_orphans(orch.tag)
    check_kept()
    assert _table(store, "SELECT status FROM runs")[0][0] == "interrupted"

    code, out, err = mkbench(_run_args(sol, store), tmp_path)
    assert code == 0, err
    assert "resuming run 1" in out
    check_kept()
    rows = _checked(store, "slow")
    assert {t: r["verdict"] for t, r in rows.items()} == {**{t: "incorrect" for t in TASK_NAMES}, GIL_TASK: "timeout"}
    assert _table(store, "SELECT status, owner IS NOT NULL FROM runs") == [("finished", 1)]


RAY_AGENTS = ("ray::DashboardAgent", "ray::RuntimeEnvAgent")  # Ray's per-node agents


@pytest.mark.slow
def test_orchestrator_killed_under_ray_then_resumed(tmp_path):
    """The same under ``--executor ray``: the Ray actor hosting the lanes, its fork server, workers and
    judges, and Ray's own processes go with the killed driver; the resume (under Ray too) keeps every
    finished unit. Ray's per-node agents leave on their own schedule (they poll the raylet): they must
    be gone by the end of the test, not within seconds."""
    pytest.importorskip("ray", reason="--executor ray needs the ray package (installed by .ci/setup)")
    marks = tmp_path / "marks"
    marks.mkdir()
    sol = _solutions(tmp_path / "sol", _slow_candidates(marks))
    store = tmp_path / "ray.sqlite"
    orch = Orchestrator(_run_args(sol, store, "--executor", "ray"), tmp_path)
    _interrupt_mid_candidate(orch, store, marks, 0)
    kept = _finished(store)
    orch.kill()
    _assert_no_orphans(orch.tag, spare=lambda cmd: cmd.startswith(RAY_AGENTS))
    code, out, err = mkbench(_run_args(sol, store, "--executor", "ray"), tmp_path)
    assert code == 0, err
    assert "resuming run 1" in out
    now = _finished(store)
    assert {k: now[k] for k in kept} == kept
    rows = _checked(store, "slow")
    assert {t: r["verdict"] for t, r in rows.items()} == {**{t: "incorrect" for t in TASK_NAMES}, GIL_TASK: "timeout"}
    _assert_no_orphans(orch.tag, within=120)


# --- a damaged store ---------------------------------------------------------------------------------------------

def _real_store(path: Path) -> Path:
    """A store with a finished run of a few hundred rows (several pages), written through the Store API."""
    store = Store(path)
    rid = store.start_run("k", {}, "cpu", "triton", "m", {"cpu": "test"}, {}, 1)
    for i in range(300):
        store.record_unit(rid, f"t{i}", "triton", "m", [dict(
            task=f"t{i}", category="activation", shape="small", shape_role="small", dtype="float32", backend="triton",
            method="m", is_baseline=0, verdict="incorrect", compile_status="ok", correct_status="incorrect",
            perf_status="not_run", error="planted " * 25, extra={})])
    store.set_run_status(rid, "finished")
    store.close()
    return path


@pytest.mark.parametrize("damage", ["truncated", "page overwritten", "header page zeroed"])
def test_damaged_store_is_refused_and_left_untouched(tmp_path, cli, damage):
    data = _real_store(tmp_path / "real.sqlite").read_bytes()
    if damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "page overwritten":
        data = data[: len(data) // 2] + b"\xa5" * 4096 + data[len(data) // 2 + 4096:]
    else:
        data = data[:100] + b"\0" * 3996 + data[4096:]
    path = tmp_path / "damaged.sqlite"
    path.write_bytes(data)
    for args in (["run", "--task", "gelu", *QUICK], ["report"]):
        code, _, err = cli(*args, "--store", path)
        assert code == 2
        assert "is not a usable mkbench store" in _one_line_error(err)
        assert path.read_bytes() == data


# --- bad input ------------------------------------------------------------------------------------------------

@pytest.fixture
def existing_store(tmp_path) -> Path:
    return _real_store(tmp_path / "existing.sqlite")


@pytest.mark.parametrize("args, needle", [
    (["--seed", str(2**63)], "argument --seed: '9223372036854775808': a seed must be between 0 and 2**63-1"),
    (["--seed", "-1"], "a seed must be between"),
    (["--timeout-step", "0"], "argument --timeout-step: '0': must be a positive number"),
    (["--timeout-compile", "-1"], "argument --timeout-compile: '-1': must be a positive number"),
    (["--time-budget-ms", "-5"], "argument --time-budget-ms: '-5': must be a positive number"),
    (["--time-budget-ms", "nan"], "must be a positive number"),
    (["--timeout-step", "inf"], "must be a positive number"),
    (["--unit-limit", "0"], "argument --unit-limit: '0': must be a positive number"),
    (["--task", ""], "argument --task: '': empty name"),
    (["--task", "gelu,,elu"], "empty name"),
    (["--category", ""], "argument --category"),
    (["--backend", " "], "argument --backend: must not be empty"),
    (["--method", ""], "argument --method: must not be empty"),
    (["--method", "a\nb"], "printable characters"),
    (["--method", "m" * 1001], "names are at most 1000 printable characters"),
    (["--seeds", "0"], "argument --seeds"),
    (["--lanes", "0"], "argument --lanes"),
    (["--workers", "0"], "argument --workers"),
    (["--worker-memory-mb", "0"], "argument --worker-memory-mb"),
    (["--gpus", "first"], "argument --gpus"),
    (["--framework-threshold", "2"], "must be between 0 and 1"),
    (["--store", "x" * 300 + ".sqlite"], "a path component is longer than 255 bytes"),
    (["--json", "{tmp}"], "is a directory, not a file"),
    (["--store", "{tmp}"], "is a directory, not a file"),
    (["--method", "m"], "--method names candidates from --solutions"),
    (["--address", "auto"], "--address needs --executor ray"),
    (["--task", "gelu", "--tasks-dir", "{tmp}/nowhere"], "nowhere is not a directory"),
])
def test_bad_values_get_one_line_and_change_nothing(tmp_path, cli, existing_store, monkeypatch, args, needle):
    monkeypatch.setenv("MKBENCH_TASK_DIRS", "")  # --tasks-dir extends it in-process: put back after
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    before = _digest(existing_store)
    store = [] if "--store" in args else ["--store", existing_store]
    code, _, err = cli("run", *args, *store)
    assert code == 2
    assert needle in _one_line_error(err)
    assert _digest(existing_store) == before


def test_ray_executor_without_ray_is_one_line(cli, existing_store, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` finds where it is not installed
    before = _digest(existing_store)
    code, _, err = cli("run", "--task", "gelu", *QUICK, "--executor", "ray", "--store", existing_store)
    assert code == 2
    assert "--executor ray needs the ray package" in _one_line_error(err)
    assert _digest(existing_store) == before


def test_run_that_cannot_start_its_executor_is_left_resumable(cli, store_path, monkeypatch):
    """A failure after the run was recorded (here: the executor refuses its devices, as ``--gpus 3`` on a
    one-GPU machine does) is one line, and the run is 'interrupted' (resumable), never left 'running'."""
    from mkbench.engine.runner import Runner
    from mkbench.errors import BadInput

    def refuse(*args, **kwargs):
        raise BadInput("--gpus 3: this machine has 1 GPU(s) (0..0)")
    monkeypatch.setattr(Runner, "_executor", refuse)
    code, _, err = cli("run", "--task", "gelu", *QUICK, "--store", store_path)
    assert code == 2
    assert "--gpus 3: this machine has 1 GPU(s)" in _one_line_error(err)
    assert [r.status for r in Store(store_path).runs()] == ["interrupted"]


def test_store_that_is_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "store.sqlite"
    os.mkfifo(fifo)
    code, _, err = mkbench(["run", "--task", "gelu", *QUICK, "--store", fifo], tmp_path, timeout=120)
    assert code == 2
    assert "is not a regular file" in _one_line_error(err)


def test_unusable_candidate_files_are_invalid_not_hangs_nor_tracebacks(tmp_path):
    """A FIFO (which would block a read), a directory, a symlink loop, a device, a broken symlink, an
    oversized file, a non-UTF-8 file and one nested too deeply to parse, in one run: each an invalid
    candidate (compile_error) with its reason, exit 3, the run finished. ``--resume`` afterwards says
    so, with no traceback, and changes nothing."""
    sol = tmp_path / "sol" / "activation"
    sol.mkdir(parents=True)
    os.mkfifo(sol / "elu.py")
    (sol / "selu.py").mkdir()
    os.symlink("silu.py", sol / "silu.py")
    os.symlink("/dev/zero", sol / "mish.py")
    os.symlink("nowhere.py", sol / "softplus.py")
    (sol / "hardswish.py").write_text("def kernel_function(x):\n    return x\n" + "#" * (4 * 2**20) + "\n")
    (sol / "hardsigmoid.py").write_bytes(b"def kernel_function(x):\n    return x  # \xff\xfe\n")
    (sol / "leaky_relu.py").write_text("def kernel_function(x):\n    return " + "-" * 100_000 + "1\n")
    expected = {"elu": "is a FIFO, not a regular file", "selu": "is a directory, not a candidate file",
                "silu": "symlink loop", "mish": "is a device file, not a regular file", "softplus": "broken symlink",
                "hardswish": "over the 4 MiB limit for a candidate file", "hardsigmoid": "not UTF-8 text",
                "leaky_relu": "nested too deeply to parse"}
    store = tmp_path / "invalid.sqlite"
    args = ["run", "--solutions", tmp_path / "sol", "--method", "bad-files", "--task", ",".join(expected), *QUICK,
            "--store", store]
    code, out, err = mkbench(args, tmp_path, timeout=300)
    assert code == 3, err
    assert "Traceback" not in err
    assert err.splitlines()[-1] == f"error: {len(expected)} candidate file(s) were invalid (recorded as compile errors)"
    rows = _checked(store, "bad-files")
    assert sorted(rows) == sorted(expected)
    for task, needle in expected.items():
        r = rows[task]
        assert (r["verdict"], r["compile_status"]) == ("compile_error", "error"), (task, r["error"])
        assert (r["error"].startswith(str(tmp_path / "sol" / "activation" / task))
                and needle in r["error"]), (task, r["error"])
    assert [r.status for r in Store(store).runs()] == ["finished"]
    before = _digest(store)
    code, out, err = mkbench(args + ["--resume"], tmp_path, timeout=300)
    assert code == 3 and "Traceback" not in err
    assert "already finished; nothing to resume" in out
    assert _digest(store) == before


@pytest.mark.parametrize("content, needle", [
    ("raise SystemExit(7)\n", "task file failed to import: SystemExit: 7"),
    ("raise KeyboardInterrupt\n", "task file failed to import: KeyboardInterrupt"),
    (None, "is a FIFO, not a regular file"),
])
def test_task_file_that_exits_interrupts_or_blocks_is_a_load_error(tmp_path, cli, existing_store, monkeypatch,
                                                                   content, needle):
    monkeypatch.setenv("MKBENCH_TASK_DIRS", "")  # --tasks-dir extends it in-process: put back after
    path = tmp_path / "tasks" / "activation" / "boom.py"
    path.parent.mkdir(parents=True)
    if content is None:
        os.mkfifo(path)
    else:
        path.write_text(content)
    before = _digest(existing_store)
    code, _, err = cli("run", "--task", "gelu", *QUICK, "--tasks-dir", tmp_path / "tasks", "--store", existing_store)
    assert code == 2
    line = _one_line_error(err)
    assert str(path) in line and needle in line
    assert _digest(existing_store) == before


def test_method_names_are_slugged_in_file_names_and_kept_in_the_store(tmp_path, cli):
    """A 300-character method, and one that climbs out of the log folder: the log of each lands inside
    ``<store>-logs/run<ID>/`` under a file name the filesystem accepts; the store keeps the name given."""
    sol = _solutions(tmp_path / "sol", {"gelu": (REFS / "gelu.py").read_text()})
    store = tmp_path / "deep" / "names.sqlite"
    store.parent.mkdir()
    methods = ["m" * 300, "../../evil"]
    for method in methods:
        code, _, err = cli("run", "--solutions", sol, "--method", method, "--task", "gelu", *QUICK, "--store", store)
        assert code == 0, err
    runs = Store(store).runs()
    assert [r.method for r in runs] == methods and {r.status for r in runs} == {"finished"}
    for run in runs:
        assert _checked(store, run.method)["gelu"]["verdict"] == "correct"
    log_root = tmp_path / "deep" / "names-logs"
    logs = sorted(p for p in tmp_path.rglob("*.log"))
    assert [p.parent for p in logs] == [log_root / "run1", log_root / "run2"], logs
    assert all(len(p.name) <= 100 and p.name.startswith("gelu__") for p in logs), logs
    assert not (tmp_path / "evil.log").exists() and not list(tmp_path.rglob("evil.log"))


def test_export_to_a_directory_is_one_line(tmp_path, cli, existing_store):
    before = _digest(existing_store)
    code, _, err = cli("export", "--format", "jsonl", "--store", existing_store, "-o", tmp_path)
    assert code == 2 and "is a directory" in _one_line_error(err)
    assert _digest(existing_store) == before


def test_import_of_an_empty_jsonl_is_an_error(tmp_path, cli):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, _, err = cli("import", "kernelbench-x", empty, "--out", tmp_path / "sol")
    assert code != 0
    _one_line_error(err)


def test_one_prepare_worker_and_one_lane_run_units_in_plan_order(tmp_path, cli, store_path):
    """The GPU test below relies on it: with ``--workers 1 --lanes 1`` the units of a run are evaluated
    one after another in plan order (category, then task name), whatever order their preparation
    finished in."""
    marks = tmp_path / "marks"
    marks.mkdir()
    tasks = ["elu", "gelu", "hardsigmoid", "selu", "silu"]
    sol = _solutions(tmp_path / "sol", {t: f"import os, time\ndef kernel_function(x, *rest):\n"
                                           f"    open(os.path.join({str(marks)!r}, f'{{time.monotonic_ns()}}-{t}'), "
                                           "'w').close()\n"
                                           "    return x.clone()\n" for t in tasks})
    code, _, err = cli("run", "--solutions", sol, "--method", "ordered", "--task", ",".join(reversed(tasks)), *QUICK,
                       "--workers", "1", "--lanes", "1", "--store", store_path,
                       "--no-confine")  # the marks are written outside the candidates' scratch directory
    assert code == 0, err
    assert [name.split("-", 1)[1] for name in sorted(os.listdir(marks), key=lambda n: int(n.split("-")[0]))] == tasks


# --- on a GPU ----------------------------------------------------------------------------------------------------

GPU_FAULTS = {
    # fills the device until the allocator gives up
    "elu": (textwrap.dedent("""
                import torch
                def kernel_function(x, *rest):
                    hoard = []
                    while True:
                        hoard.append(torch.empty(1 << 30, dtype=torch.uint8, device=x.device))
            """), {"error", "crash"}, "out of memory"),
    # stores 4 TiB past the output
    "gelu": (textwrap.dedent("""
                 import torch, triton, triton.language as tl
                 @triton.jit
                 def _far(y_ptr, BLOCK: tl.constexpr):
                     offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                     tl.store(y_ptr + offs + (1 << 40), tl.zeros([BLOCK], tl.float32))
                 def kernel_function(x, *rest):
                     y = torch.empty_like(x)
                     _far[(4,)](y, BLOCK=1024)
                     return y
             """), {"error", "crash"}, ""),
    # a kernel that never terminates: its loop condition depends on data it keeps rewriting
    "hardsigmoid": (textwrap.dedent("""
                        import torch, triton, triton.language as tl
                        @triton.jit
                        def _forever(x_ptr, y_ptr):
                            v = tl.load(x_ptr)
                            while v == v:
                                v = v + 1.0
                                tl.store(y_ptr, v)
                        def kernel_function(x, *rest):
                            y = torch.empty_like(x)
                            _forever[(1,)](x, y)
                            return y
                    """), {"timeout"}, "time limit"),
}
GPU_GOOD = ["logsigmoid", "prelu_channel"]  # shipped references, after the faults in plan order


@pytest.mark.gpu
def test_gpu_faults_leave_the_device_usable(tmp_path):
    """Out-of-memory, an illegal address and a kernel that never terminates, in one run with one prepare
    worker and one lane, so units run one at a time in plan order and the candidates after the faults
    run on the device the faults used: those are judged correct, and nothing is left running."""
    sources = {task: spec[0] for task, spec in GPU_FAULTS.items()}
    sources.update({task: (REFS / f"{task}.py").read_text() for task in GPU_GOOD})
    sol = _solutions(tmp_path / "sol", sources)
    store = tmp_path / "gpu.sqlite"
    code, out, err = mkbench(["run", "--hw", "auto", "--solutions", sol, "--method", "gpu-faults", "--task",
                              ",".join(sources),
                              *QUICK, "--workers", "1", "--lanes", "1", "--timeout-step", "60", "--store", store],
                             tmp_path, timeout=580)
    assert code == 0, err
    rows = _checked(store, "gpu-faults")
    for task, (_, verdicts, needle) in GPU_FAULTS.items():
        assert (rows[task]["verdict"] in verdicts
                and needle in (rows[task]["error"] or "").lower()), (task, rows[task]["error"])
    for task in GPU_GOOD:
        assert rows[task]["verdict"] == "correct", (task, rows[task]["error"])
    finished = dict(_table(store, "SELECT task, finished FROM units"))
    assert all(finished[t] >= finished["hardsigmoid"] for t in GPU_GOOD), finished  # they ran after the hang


@pytest.mark.gpu
def test_gpu_worker_memory_cap_leaves_cuda_working(tmp_path):
    """``--worker-memory-mb`` (RLIMIT_DATA) on a GPU: a worker with a CUDA context runs a Triton
    reference under a cap of 16 GiB (the driver's address-space reservations are not private writable
    memory, so they do not count)."""
    sol = _solutions(tmp_path / "sol", {"gelu": (REFS / "gelu.py").read_text()})
    store = tmp_path / "cap.sqlite"
    code, out, err = mkbench(["run", "--hw", "auto", "--solutions", sol, "--method", "capped", "--task", "gelu",
                              *QUICK, "--worker-memory-mb", "16384", "--store", store], tmp_path, timeout=580)
    assert code == 0, err
    assert _checked(store, "capped")["gelu"]["verdict"] == "correct"
