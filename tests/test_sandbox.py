"""Confinement of candidate workers (mkbench.sandbox, issue 31): hostile candidates that go for the
results store, the digest key, files outside their scratch directory or other processes are stopped,
leave the store as it was and leave no process behind; honest candidates are judged as before."""

import os
import shutil
import textwrap
import time
from pathlib import Path

import pytest
import torch

from mkbench import sandbox
from mkbench.store import Store

REFS = Path(__file__).resolve().parent.parent / "backends" / "triton" / "kernels"
MARKER = f"mkbench-sandbox-marker-{os.getpid()}"

pytestmark = pytest.mark.skipif(not sandbox.landlock_abi(), reason="needs Landlock")

def _planter(var: str, sibling: str, planted: str, answer: str) -> str:
    """A candidate that writes into its own folder named by ``var``, then plants a file in a sibling."""
    return f"""
        import os
        def kernel_function(x):
            own = os.environ["{var}"]
            os.makedirs(own, exist_ok=True)
            open(os.path.join(own, "mine.txt"), "w").write("allowed")
            other = os.path.join(os.path.dirname(own), "{sibling}")
            os.makedirs(other, exist_ok=True)
            open(os.path.join(other, "{planted}"), "w").write("pwned")
            return {answer}
    """


# each takes its store paths from the source ({store}, {victim}); the real attack found it in
# /proc/<ppid>/cmdline, which an in-process test run does not have
HOSTILE = {
    # writes the store directly, then a copy of it next to it
    "elu": """
        import sqlite3
        def kernel_function(x):
            for path in ({store!r}, {victim!r}):
                db = sqlite3.connect(path)
                db.execute("UPDATE results SET verdict = 'correct', error = NULL")
                db.commit()
            return x.clone()
    """,
    # rewrites it from a detached process that outlives the call
    "silu": """
        import subprocess, sys
        CODE = '''import sqlite3, time  # {marker}
        time.sleep(2)
        for path in ({store!r}, {victim!r}):
            try:
                db = sqlite3.connect(path); db.execute("UPDATE results SET verdict = 'correct'"); db.commit()
            except Exception:
                pass
        '''
        def kernel_function(x):
            subprocess.Popen([sys.executable, "-c", CODE], start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return x.clone()
    """,
    # double-forks into a new session and stays
    "selu": """
        import os, sys
        def kernel_function(x):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    code = "import time  # {marker}\\nwhile True: time.sleep(0.2)"
                    os.execv(sys.executable, [sys.executable, "-c", code])
                os._exit(0)
            os.wait()
            return x.clone()
    """,
    # double-forks into a new session, then ends its worker (the reaper, not the orchestrator, kills what is left)
    "hardsigmoid": """
        import os, sys
        def kernel_function(x):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    code = "import time  # {marker}\\nwhile True: time.sleep(0.2)"
                    os.execv(sys.executable, [sys.executable, "-c", code])
                os._exit(0)
            os.wait()
            os._exit(3)
    """,
    # reads the digest key as it is imported (a hack, not a compile error)
    "gelu_tanh": """
        import glob, os
        for path in glob.glob(os.path.join(os.environ["MKBENCH_KEY_DIR"], "*")):
            open(path).read()
        def kernel_function(x):
            return x.clone()
    """,
    # writes outside its scratch directory
    "mish": """
        def kernel_function(x):
            open({outside!r}, "w").write("pwned")
            return x.clone()
    """,
    # reads the digest key
    "softplus": """
        import glob, os
        def kernel_function(x):
            for path in glob.glob(os.path.join(os.environ["MKBENCH_KEY_DIR"], "*")):
                open(path).read()
            return x.clone()
    """,
    # connects to the fork server, which would fork it an unconfined process
    "logsigmoid": """
        import glob, socket
        def kernel_function(x):
            for path in glob.glob("/tmp/pymp-*/listener-*") or ["/tmp/none"]:
                socket.socket(socket.AF_UNIX).connect(path)
            return x.clone()
    """,
    # plants a build in the JIT build folder of another unit (its own folder is its unit's alone)
    "leaky_relu": _planter("TORCH_EXTENSIONS_DIR", "another-unit", "planted.so", "x.clone()"),
    # plants a binary in another method's compile cache (its own method's is its own to write)
    "cosh": _planter("TRITON_CACHE_DIR", "torch_compile__baseline", "planted.cubin", "x.cosh()"),
    # reaches into another process (the orchestrator: this test's process)
    "hardswish": """
        def kernel_function(x):
            open("/proc/{orchestrator}/environ", "rb").read()
            return x.clone()
    """,
}


CATEGORY = {"cosh": "math"}  # the others are activation tasks


def _solutions(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _run(cli, solutions, method, store_path, tasks, *extra):
    return cli("run", "--solutions", solutions, "--method", method, "--task", ",".join(tasks), "--hw", "cpu",
               "--shape-role", "small", "--dtype", "float32", "--seeds", "1", "--no-timing", "--baselines", "none",
               "--timeout-step", "30", "--store", store_path, "--no-progress", *extra)


def _survivors() -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and MARKER.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                found.append(int(name))
        except OSError:
            pass
    return found


def _rows(store_path, method):
    return {(r["task"], r["shape"], r["dtype"]): r for r in Store(store_path).results() if r["method"] == method}


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    from mkbench.cli import main
    tmp = tmp_path_factory.mktemp("sandbox")
    store = tmp / "results.sqlite"
    honest = _solutions(tmp / "honest", {"activation/gelu.py": (REFS / "activation" / "gelu.py").read_text()})
    assert main(["run", "--solutions", str(honest), "--method", "honest", "--task", "gelu", "--hw", "cpu",
                 "--shape-role", "small", "--dtype", "float32", "--seeds", "1", "--no-timing", "--baselines", "none",
                 "--store", str(store), "--no-progress"]) == 0
    before = _rows(store, "honest")
    victim = tmp / "victim.sqlite"
    shutil.copyfile(store, victim)
    victim_bytes = victim.read_bytes()
    sol_dir = tmp / "hostile"
    outside = sol_dir / "pwned.txt"
    fmt = {"store": str(store), "victim": str(victim), "marker": MARKER, "outside": str(outside),
           "orchestrator": os.getpid()}
    files = {f"{CATEGORY.get(task, 'activation')}/{task}.py": textwrap.dedent(src).format(**fmt)
             for task, src in HOSTILE.items()}
    sol = _solutions(sol_dir, files)
    assert main(["run", "--solutions", str(sol), "--method", "hostile", "--task", ",".join(HOSTILE), "--hw", "cpu",
                 "--shape-role", "small", "--dtype", "float32", "--seeds", "1", "--no-timing", "--baselines", "none",
                 "--timeout-step", "30", "--store", str(store), "--no-progress"]) == 0
    time.sleep(2.5)  # the detached writer's delay, and then some
    yield {"store": store, "before": before, "victim": victim, "victim_bytes": victim_bytes, "outside": outside,
           "rows": _rows(store, "hostile"), "survivors": _survivors()}
    for pid in _survivors():  # never leave one behind for the next test, whatever happened
        os.kill(pid, 9)


def _verdicts(rows, task):
    return {r["verdict"] for k, r in rows.items() if k[0] == task and r["verdict"] != "skipped"}


def test_store_and_victim_unchanged(hostile_run):
    assert _rows(hostile_run["store"], "honest") == hostile_run["before"]
    assert all(r["integrity"] == "verified" for r in hostile_run["before"].values())
    assert hostile_run["victim"].read_bytes() == hostile_run["victim_bytes"]


def test_nothing_survives_the_unit(hostile_run):
    assert hostile_run["survivors"] == []
    assert _verdicts(hostile_run["rows"], "hardsigmoid") == {"crash"}


def test_store_writer_is_hack(hostile_run):
    assert _verdicts(hostile_run["rows"], "elu") == {"hack"}


def test_key_reader_and_process_reacher_are_hack(hostile_run):
    assert _verdicts(hostile_run["rows"], "softplus") == {"hack"}
    assert _verdicts(hostile_run["rows"], "gelu_tanh") == {"hack"}
    assert _verdicts(hostile_run["rows"], "hardswish") == {"hack"}
    assert _verdicts(hostile_run["rows"], "logsigmoid") == {"hack"}


def test_write_outside_scratch_is_an_error_naming_the_path(hostile_run):
    rows = [r for k, r in hostile_run["rows"].items() if k[0] == "mish" and r["verdict"] == "error"]
    assert rows and all(str(hostile_run["outside"]) in r["error"] for r in rows)
    assert not hostile_run["outside"].exists()


def test_build_folders_are_per_unit(hostile_run):
    """A confined worker writes its own unit's load_inline build folder, and no other unit's: an
    extension planted under another candidate's key would be loaded as that candidate's."""
    rows = [r for k, r in hostile_run["rows"].items() if k[0] == "leaky_relu" and r["verdict"] != "skipped"]
    root = hostile_run["store"].parent / f"{hostile_run['store'].stem}-cache" / "torch_extensions"
    assert rows and all(r["verdict"] == "error" and str(root / "another-unit") in r["error"] for r in rows), rows
    assert not (root / "another-unit").exists()
    (own,) = [p for p in root.iterdir() if p.name.startswith("leaky_relu__hostile-")]
    assert (own / "mine.txt").read_text() == "allowed"


def test_compile_caches_are_per_method(hostile_run):
    """A confined worker writes its own method's Triton cache, and no other method's: a binary planted
    under the key of a baseline's kernel (torch.compile's) would be loaded as the baseline's."""
    rows = [r for k, r in hostile_run["rows"].items() if k[0] == "cosh" and r["verdict"] != "skipped"]
    root = hostile_run["store"].parent / f"{hostile_run['store'].stem}-cache" / "triton"
    assert rows and all(r["verdict"] == "error" and str(root / "torch_compile__baseline") in r["error"]
                        for r in rows), rows
    assert not (root / "torch_compile__baseline").exists()
    (own,) = [p for p in root.iterdir() if p.name.startswith("triton__hostile-")]
    assert (own / "mine.txt").read_text() == "allowed"
    # one folder per method that ran here, whatever its number of units
    assert sorted(p.name.split("-")[0] for p in root.iterdir()) == ["triton__honest", "triton__hostile"]


def test_honest_candidate_is_correct_and_confinement_recorded(tmp_path, cli):
    store = tmp_path / "results.sqlite"
    sol = _solutions(tmp_path / "s", {"activation/gelu.py": (REFS / "activation" / "gelu.py").read_text()})
    code, out, err = _run(cli, sol, "m", store, ["gelu"])
    assert code == 0, err
    assert {r["verdict"] for r in _rows(store, "m").values()} - {"skipped"} == {"correct"}
    run = Store(store).run(max(r["run_id"] for r in Store(store).results()))
    assert run.env["engine"]["confinement"].startswith("subreaper + landlock ABI")
    assert f"confinement: {run.env['engine']['confinement']}" in out
    logs = list((tmp_path / "results-logs").rglob("*.log"))
    assert logs and all("mkbench: confinement: " in p.read_text() for p in logs)


def test_no_confine_is_recorded(tmp_path, cli):
    store = tmp_path / "results.sqlite"
    sol = _solutions(tmp_path / "s", {"activation/gelu.py": (REFS / "activation" / "gelu.py").read_text()})
    code, out, err = _run(cli, sol, "m", store, ["gelu"], "--no-confine")
    assert code == 0, err
    assert {r["verdict"] for r in _rows(store, "m").values()} - {"skipped"} == {"correct"}
    run = Store(store).run(max(r["run_id"] for r in Store(store).results()))
    assert run.env["engine"]["confinement"] == "none: --no-confine"
    assert "confinement: none: --no-confine" in out


# at import, as generated kernels do (CUDA-L1's load_inline(..., build_directory="vit_fully_fused_build")):
# builds under a relative folder, which only works where the worker's cwd is its scratch directory
RELATIVE_BUILD = """
import os as _os, sys as _sys
if _os.getcwd() != _os.environ["TMPDIR"]:
    raise RuntimeError(f"cwd {_os.getcwd()} is not the scratch directory {_os.environ['TMPDIR']}")
if "" in _sys.path or _os.getcwd() in _sys.path:
    raise RuntimeError(f"the scratch directory is on sys.path: {_sys.path}")
_os.makedirs("relative_build", exist_ok=True)
with open("relative_build/x.txt", "w") as _f:
    _f.write("built")
"""

# at import: writes its own method's Triton cache and its unit's build folder, wherever they are said to be
OWN_CACHES = """
import os as _os
for _var in ("TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR"):
    if not _os.path.isabs(_os.environ[_var]):
        raise RuntimeError(f"{_var} is relative: {_os.environ[_var]}")
    _os.makedirs(_os.environ[_var], exist_ok=True)
    with open(_os.path.join(_os.environ[_var], "mine.txt"), "w") as _f:
        _f.write("allowed")
"""


def test_confined_worker_runs_in_its_scratch_directory(tmp_path, cli, monkeypatch):
    """A candidate that writes relative to its cwd (a build folder) is judged as an honest one: its cwd
    is its scratch directory, not the orchestrator's, where nothing of it appears."""
    here = tmp_path / "orchestrator"
    here.mkdir()
    monkeypatch.chdir(here)
    gelu = RELATIVE_BUILD + (REFS / "activation" / "gelu.py").read_text()
    sol = _solutions(tmp_path / "s", {"activation/gelu.py": gelu})
    code, out, err = _run(cli, sol, "m", tmp_path / "results.sqlite", ["gelu"])
    assert code == 0, err
    rows = _rows(tmp_path / "results.sqlite", "m")
    assert rows and {r["verdict"] for r in rows.values()} - {"skipped"} == {"correct"}, rows
    assert list(here.iterdir()) == []


def test_relative_store_and_solutions_are_absolute_for_workers(tmp_path, cli, monkeypatch):
    """--store and --solutions given relative to the orchestrator's cwd: the same verdicts as given
    absolute, and the JIT caches and logs beside the store, not in a worker's scratch directory."""
    files = {"activation/gelu.py": (REFS / "activation" / "gelu.py").read_text(),
             "activation/elu.py": OWN_CACHES + (REFS / "activation" / "elu.py").read_text()}
    _solutions(tmp_path / "abs" / "m", files)
    _solutions(tmp_path / "rel" / "m", files)
    code, _, err = _run(cli, tmp_path / "abs" / "m", "m", tmp_path / "abs" / "results.sqlite", ["gelu", "elu"])
    assert code == 0, err
    monkeypatch.chdir(tmp_path / "rel")
    code, _, err = _run(cli, "m", "m", "results.sqlite", ["gelu", "elu"])
    assert code == 0, err
    verdicts = {where: {k: r["verdict"] for k, r in _rows(tmp_path / where / "results.sqlite", "m").items()}
                for where in ("abs", "rel")}
    assert verdicts["rel"] == verdicts["abs"] and set(verdicts["rel"].values()) - {"skipped"} == {"correct"}
    cache = tmp_path / "rel" / "results-cache"
    (triton,) = [p for p in (cache / "triton").iterdir() if p.name.startswith("triton__m-")]
    assert (triton / "mine.txt").read_text() == "allowed"
    (build,) = [p for p in (cache / "torch_extensions").iterdir() if p.name.startswith("elu__m-")]
    assert (build / "mine.txt").read_text() == "allowed"
    assert list((tmp_path / "rel" / "results-logs").rglob("*.log"))
    # what the runner hands the workers, from a relative store: absolute, beside the store
    from mkbench.engine.runner import Runner, RunOptions
    runner = Runner(None, Store("results.sqlite"), RunOptions())
    assert set(runner._jit_cache_env().values()) >= {str(cache / "triton"), str(cache / "torch_extensions")}
    assert all(v.startswith(str(cache) + os.sep) for v in runner._jit_cache_env().values())
    assert runner._log_dir() == tmp_path / "rel" / "results-logs"


def test_confine_enters_an_absolute_scratch_directory(tmp_path):
    """Given a relative scratch root, the worker's cwd and TMPDIR are one absolute scratch directory,
    a relative write lands there, and '' on sys.path keeps meaning the old cwd, not the scratch."""
    import sys

    def body():
        os.chdir(tmp_path)
        os.mkdir("scratches")
        sys.path.insert(0, "")
        sandbox.confine({"store": str(tmp_path / "results.sqlite"), "scratch_root": "scratches"}, None)
        return {"cwd": os.getcwd(), "tmpdir": os.environ["TMPDIR"], "path0": sys.path[0],
                "relative write": _outcome(lambda: _write("x.txt"))}

    out = _in_confined_child(body)
    assert "child failed" not in out, out
    root = os.path.realpath(tmp_path)
    assert out["cwd"] == out["tmpdir"] and os.path.dirname(out["tmpdir"]) == os.path.join(root, "scratches"), out
    assert out["path0"] == root and out["relative write"] == "ok", out
    assert not (tmp_path / "x.txt").exists()


def test_readable_grants_around_the_hidden_directory(tmp_path):
    hidden = tmp_path / "state" / "mkbench" / "keys"
    hidden.mkdir(parents=True)
    (tmp_path / "state" / "other").mkdir()
    (tmp_path / "state" / "mkbench" / "sibling").mkdir()
    roots = sandbox._readable(str(hidden))
    assert "/dev" not in roots and "/usr" in roots
    assert str(tmp_path / "state" / "other") in roots and str(tmp_path / "state" / "mkbench" / "sibling") in roots
    assert not any(str(hidden).startswith(r + "/") or r == str(hidden) for r in roots)


def test_confine_hides_a_key_directory_under_home(tmp_path):
    """The default key directory (~/.local/state/mkbench/keys) lies under a hierarchy that must stay
    readable (HOME): its siblings stay readable, the key does not, and writes go to scratch only."""
    import json
    home = tmp_path / "home"
    keys = home / ".local" / "state" / "mkbench" / "keys"
    keys.mkdir(parents=True)
    (keys / "k.key").write_text("secret")
    (home / ".local" / "other.txt").write_text("fine")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.environ.pop("MKBENCH_KEY_DIR", None)
            os.environ.pop("XDG_STATE_HOME", None)
            os.environ["HOME"] = str(home)
            what = sandbox.confine({"store": str(tmp_path / "results.sqlite")}, None)
            out = {"what": what}
            for name, act in {"sibling": lambda: (home / ".local" / "other.txt").read_text(),
                              "key": lambda: (keys / "k.key").read_text(),
                              "outside": lambda: (tmp_path / "x").write_text("x"),
                              "scratch": lambda: Path(os.environ["TMPDIR"], "x").write_text("x")}.items():
                try:
                    act()
                    out[name] = "ok"
                except PermissionError:
                    out[name] = "denied"
            os.write(w, json.dumps(out).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        out = json.loads(f.read())
    os.waitpid(pid, 0)
    assert out == {"what": out["what"], "sibling": "ok", "key": "denied", "outside": "denied", "scratch": "ok"}
    assert "landlock ABI" in out["what"] and "NOT hidden" not in out["what"]


def _in_confined_child(body) -> dict:
    """Run ``body()`` (a dict of outcomes) in a forked child; return what it returned."""
    import json
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            out = body()
            os.write(w, json.dumps(out).encode())
        except BaseException as exc:  # noqa: BLE001 - reported to the test, not lost in the child
            os.write(w, json.dumps({"child failed": repr(exc)}).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    os.waitpid(pid, 0)
    return json.loads(text)


def _outcome(act) -> str:
    try:
        act()
        return "ok"
    except PermissionError:
        return "denied"
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"


def _write(path, text="probe") -> None:
    with open(path, "w") as f:
        f.write(text)


def test_confined_worker_may_name_its_own_threads_only(tmp_path):
    """The CUDA driver names the threads it starts in cuInit by writing /proc/<pid>/task/<tid>/comm
    (error 304 where it may not): a confined worker may write its own threads' comm, those started
    after confinement too, through every path to them; another process's (a child's included), and
    anything else in /proc, stays denied."""
    import threading
    orchestrator = os.getpid()

    def body():
        what = sandbox.confine({"store": str(tmp_path / "results.sqlite")}, None)
        pid, main_tid = os.readlink("/proc/self"), threading.get_native_id()
        out = {"what": what,
               "own main thread": _outcome(lambda: _write(f"/proc/self/task/{main_tid}/comm", "main")),
               "own process comm": _outcome(lambda: _write(f"/proc/{pid}/comm", "main")),
               "own oom_score_adj": _outcome(lambda: _write(f"/proc/{pid}/oom_score_adj", "0")),
               "another process": _outcome(lambda: _write(f"/proc/{orchestrator}/comm", "pwned")),
               "outside": _outcome(lambda: _write(tmp_path / "x"))}
        started, named = threading.Event(), threading.Event()

        def thread():  # as a driver thread does: names itself, or is named by the thread that made it
            out["new thread, thread-self"] = _outcome(lambda: _write("/proc/thread-self/comm", "worker-a"))
            tid = threading.get_native_id()
            out["new thread, own task"] = _outcome(lambda: _write(f"/proc/self/task/{tid}/comm", "worker-b"))
            out["tid"] = tid
            started.set()
            named.wait(10)

        t = threading.Thread(target=thread)
        t.start()
        started.wait(10)
        out["new thread, from main"] = _outcome(lambda: _write(f"/proc/{pid}/task/{out['tid']}/comm", "worker-c"))
        out["new thread name"] = Path(f"/proc/self/task/{out.pop('tid')}/comm").read_text().strip()
        named.set()
        t.join()
        r, w = os.pipe()
        child = os.fork()
        if child == 0:  # a child of the worker: its own directory was not granted
            os.write(w, _outcome(lambda: _write(f"/proc/self/task/{os.getpid()}/comm", "child")).encode())
            os._exit(0)
        os.close(w)
        out["child's own thread"] = os.read(r, 200).decode()
        os.waitpid(child, 0)
        return out

    out = _in_confined_child(body)
    assert "landlock ABI" in out.get("what", ""), out
    assert out == {"what": out["what"], "own main thread": "ok", "new thread, thread-self": "ok",
                   "new thread, own task": "ok", "new thread, from main": "ok", "new thread name": "worker-c",
                   "own process comm": "denied", "own oom_score_adj": "denied", "another process": "denied",
                   "outside": "denied", "child's own thread": "denied"}


def test_without_the_task_grant_a_worker_may_not_name_its_threads(tmp_path):
    """What the CUDA driver met before (the rules without the grant): the write is denied."""
    import threading

    def body():
        sandbox._libc.prctl(sandbox._PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        sandbox._landlock([str(tmp_path)], None, None, proc_task=False)
        return {"own thread": _outcome(lambda: _write(f"/proc/self/task/{threading.get_native_id()}/comm"))}

    assert _in_confined_child(body) == {"own thread": "denied"}


@pytest.mark.skipif(os.uname().machine not in sandbox._SYSCALLS, reason="no seccomp filter for this machine")
@pytest.mark.parametrize("mode, made, connected", [
    (None, "ok", "FileNotFoundError: [Errno 2] No such file or directory"),  # the default: no-connect
    ("deny", "PermissionError: [Errno 1] Operation not permitted", None),
    ("EAFNOSUPPORT", "OSError: [Errno 97] Address family not supported by protocol", None),
    ("allow", "ok", "ok"),
])
def test_seccomp_unix_socket_rule(tmp_path, mode, made, connected):
    """The socket rule's variants (sandbox.UNIX_SOCKET; the default, no-connect, is the one under which
    the CUDA driver starts: reports/2026-11-27-confinement)."""
    import socket
    address = str(tmp_path / "listener")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(address)
    listener.listen()

    def body():
        sandbox._libc.prctl(sandbox._PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        out = {"said": sandbox._seccomp(mode)}
        try:
            sock = socket.socket(socket.AF_UNIX)
            out["made"] = "ok"
        except OSError as exc:
            out["made"] = f"{type(exc).__name__}: {exc}"
            return out
        try:
            sock.connect(address)
            out["connected"] = "ok"
        except OSError as exc:
            out["connected"] = f"{type(exc).__name__}: {exc}"
            out["hack"] = sandbox.denied_hack(exc)
        out["pair"] = "ok" if len(socket.socketpair()) == 2 else "?"  # never refused: it reaches nothing
        return out

    try:
        out = _in_confined_child(body)
    finally:
        listener.close()
    assert out.get("said") == ("seccomp" if mode is None else f"seccomp (Unix sockets: {mode})"), out
    if mode is None:  # the filter's ENOENT says which call it stopped: a connect is hack evidence
        assert "connect a socket" in (out.get("hack") or "")
    assert out["made"] == made and out.get("connected") == connected
    assert out.get("pair", "ok") == "ok"


def test_seccomp_unix_socket_rule_refuses_an_unknown_mode():
    with pytest.raises(ValueError):
        sandbox._seccomp("sometimes")


def test_shared_memory_written_by_another_process_is_refused():
    """/dev/shm is every worker's: another unit's candidate could write into a segment between its
    export and the judge's import. The digest the writer sent over its own pipe shows it."""
    from multiprocessing import resource_tracker, shared_memory

    from mkbench import transfer
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)[:, 1:]  # not contiguous: copied into the segment
    (desc,) = transfer.export_all([t])
    try:
        assert torch.equal(transfer.materialize(desc), t)
        seg = shared_memory.SharedMemory(name=desc["name"])
        resource_tracker.unregister(seg._name, "shared_memory")
        seg.buf[0] ^= 0x40  # one bit, as a rival's write would
        seg.close()
        with pytest.raises(ValueError, match=f"segment {desc['name']} changed after its writer wrote it"):
            transfer.materialize(desc)
        with pytest.raises(ValueError, match="unusable tensor descriptor"):  # no digest: not taken on trust
            transfer.materialize({k: v for k, v in desc.items() if k != "blake2b"})
    finally:
        transfer.unlink([desc["name"]])
