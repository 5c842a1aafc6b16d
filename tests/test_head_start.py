"""`mkbench run` spawns its device probe's worker, already asked for the device's facts, before the
orchestrator imports torch; the runner takes that worker only if it was started as the runner would start
it, and a worker no runner takes is stopped."""

import subprocess
import sys

import pytest

from mkbench.engine import head_start
from mkbench.engine.lane import Limits
from mkbench.engine.runner import DeviceProbe


@pytest.fixture(autouse=True)
def nothing_left():
    head_start.cancel()
    yield
    head_start.cancel()


def test_the_command_line_and_the_probe_worker_import_without_torch():
    code = ("import sys, mkbench.cli, mkbench.worker, mkbench.engine.head_start; "
            "print(sorted(m for m in ('torch', 'triton', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_package_still_names_task_and_shape():
    import mkbench
    from mkbench.task import Shape, Task
    assert mkbench.Task is Task and mkbench.Shape is Shape
    with pytest.raises(AttributeError):
        mkbench.Nothing  # noqa: B018


def test_the_runner_reads_the_answer_the_head_start_asked_for():
    head_start.begin()
    child = head_start._started[2]
    head_start.begin()  # a second call keeps the first worker
    assert head_start._started[2] is child
    taken = head_start.take(head_start.probe_env())
    assert taken is child and head_start.take(head_start.probe_env()) is None  # taken once
    with DeviceProbe(Limits(), head_start.probe_env(), taken) as device:
        facts = device.ask()  # read from the pipe: asking again would leave a second answer behind
        assert facts["torch"] and "cuda_available" in facts
        assert device.ask() == facts and device.child is child  # the same worker goes on answering
    assert not child.proc.is_alive()


def test_a_worker_started_for_another_environment_is_stopped_not_taken(monkeypatch):
    head_start.begin()
    child = head_start._started[2]
    assert head_start.take({"TRITON_INTERPRET": "something else"}) is None
    assert not child.proc.is_alive()

    head_start.begin()
    child = head_start._started[2]
    monkeypatch.setenv("MKBENCH_HEAD_START_TEST", "set after the worker was spawned")
    assert head_start.take(head_start.probe_env()) is None
    assert not child.proc.is_alive()


def test_folders_given_to_the_tasks_do_not_cost_the_head_start(monkeypatch):
    head_start.begin()
    monkeypatch.setenv("MKBENCH_TASK_DIRS", "/somewhere/tasks")  # --tasks-dir, set after the head start
    child = head_start.take(head_start.probe_env())
    assert child is not None
    child.stop(grace=0)


def test_mkbench_run_takes_its_head_start(cli, store_path, monkeypatch):
    taken = []
    take = head_start.take

    def spy(env):
        taken.append(take(env))
        return taken[-1]

    monkeypatch.setattr(head_start, "take", spy)
    code, out, err = cli("run", "--backend", "triton", "--hw", "cpu", "--task", "elu", "--no-timing",
                         "--store", store_path)
    assert code == 0, err
    assert len(taken) == 1 and taken[0] is not None
    assert not taken[0].proc.is_alive()  # closed once the run's record had what it asked
    assert head_start._started is None


def test_a_run_that_fails_before_its_probe_leaves_no_worker(cli, store_path):
    spawned = []
    begin = head_start.begin

    def spy():
        begin()
        spawned.append(head_start._started[2])

    head_start.begin = spy
    try:
        code, out, err = cli("run", "--backend", "no-such-backend", "--hw", "cpu", "--store", store_path)
    finally:
        head_start.begin = begin
    assert code != 0 and err.count("\n") == 1 and "no-such-backend" in err
    assert len(spawned) == 1 and not spawned[0].proc.is_alive()
    assert head_start._started is None


def test_help_and_other_commands_spawn_nothing(cli):
    code, out, err = cli("list", "backends")
    assert code == 0
    assert head_start._started is None


def test_loading_every_task_leaves_scipy_to_the_checks_that_use_it():
    """scipy.stats is 0.8 s of import, and the orchestrator loads every task file at its start: the random
    tasks' checks import it when they run."""
    code = ("import sys; from mkbench.plugins import build_registry; r = build_registry(); "
            "assert len(r.tasks) > 100, len(r.tasks); print('scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


def test_a_head_start_that_cannot_spawn_is_no_failure(monkeypatch):
    def refuse(*a, **k):
        raise OSError("no more processes")
    monkeypatch.setattr(head_start.procs, "Child", refuse)
    head_start.begin()
    assert head_start._started is None and head_start.take(head_start.probe_env()) is None


def _server_pid():
    from multiprocessing import forkserver
    return forkserver._forkserver._forkserver_pid


def test_a_fork_server_started_ahead_is_kept_for_the_same_modules_and_environment(monkeypatch):
    from mkbench.engine import procs
    env = head_start.server_env()
    procs.start_ahead(env, head_start.NOT_READ_BY_CHILDREN)
    pid = _server_pid()
    monkeypatch.setenv("MKBENCH_TASK_DIRS", "/somewhere/tasks")  # --tasks-dir, set after the head start
    procs.context((), env)
    assert _server_pid() == pid and procs._ahead is None  # kept, and claimed


def test_a_fork_server_started_ahead_is_replaced_for_another_environment_or_modules(monkeypatch):
    from mkbench.engine import procs
    env = head_start.server_env()
    procs.start_ahead(env, head_start.NOT_READ_BY_CHILDREN)
    pid = _server_pid()
    monkeypatch.setenv("MKBENCH_AHEAD_TEST", "set after the server was started")
    procs.context((), env)
    replaced = _server_pid()
    assert replaced != pid

    procs.start_ahead(env, head_start.NOT_READ_BY_CHILDREN)  # running as it should be: kept, then claimed
    assert _server_pid() == replaced
    procs.context(("json",), env)  # a module it did not import
    assert _server_pid() != replaced and "json" in procs._preloaded

    # claimed: later calls are as before (no restart for the environment or the modules)
    kept = _server_pid()
    monkeypatch.setenv("MKBENCH_AHEAD_TEST", "changed again")
    procs.context(("json",), env)
    assert _server_pid() == kept
