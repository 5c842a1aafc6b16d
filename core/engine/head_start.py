"""`mkbench run`'s head start: its device probe's worker is spawned, and its fork server started, before the
orchestrator imports torch, the tasks and the backends, so their own imports and the probe's CUDA start go on
meanwhile instead of after.

On 4 H200s a run's first unit came 12-17 s after its process began: the orchestrator's imports 5-8 s, then
the probe 5-6 s (reports/2026-11-28-corpus-scaling, call 46). The command line is read before anything heavy
is imported (:func:`mkbench.cli.main` calls :func:`begin`); the runner takes the worker and its answer (:func:`take`) if
it was started for what the runner would start it for, and otherwise starts its own as before. The worker is
asked for the device's facts as it is spawned (its reply waits in the pipe): a worker imports torch and makes
its CUDA context only when asked.
"""

from __future__ import annotations

import multiprocessing
import os

from . import procs

#: a GPU machine's driver nodes: what Triton is told at import is known from these before any device is asked
GPU_NODES = ("/dev/nvidiactl", "/dev/kfd")
#: set by the orchestrator after the head start (--tasks-dir's folders), and read by none of the engine's
#: children: a probe worker asks no task, and workers and judges are handed their task's file
NOT_READ_BY_CHILDREN = frozenset({"MKBENCH_TASK_DIRS"})

#: what the probe's worker is asked as it is spawned
PROBE = {"op": "probe", "hw": None}

_started: tuple[dict[str, str], dict[str, str], procs.Child] | None = None  # (its env, the environ, the worker)


def gpu_nodes() -> bool:
    return any(os.path.exists(p) for p in GPU_NODES)


def server_env() -> dict[str, str]:
    """What the fork server's imports are told before a backend adds its own (``worker_import_env``):
    Triton compiles on a GPU and is interpreted elsewhere."""
    return {"TRITON_INTERPRET": "0" if gpu_nodes() else "1"}


def probe_env() -> dict[str, str]:
    """The probe worker's environment: on a GPU, Triton compiles (the launch overheads time a compiled
    Triton kernel); elsewhere the worker's Triton is as the environment says."""
    return {"TRITON_INTERPRET": "0"} if gpu_nodes() else {}


def begin() -> None:
    """Spawns the probe's worker now and asks it :data:`PROBE` (spawned, not forked: a probe worker needs
    none of the fork server's imports), then starts the fork server ahead (:func:`.procs.start_ahead`:
    the runner keeps it if its backend needs no other modules or environment). A second call keeps the
    first worker."""
    global _started
    if _started is None:
        from .. import worker
        env = probe_env()
        try:
            child = procs.Child(worker.entry, (env, None), ctx=multiprocessing.get_context("spawn"))
        except Exception:  # a head start is never a run's failure: the runner's own probe says what is wrong
            return
        try:
            child.send(PROBE)
        except procs.Died:
            child.kill()
            return
        _started = (env, procs.environ_without(NOT_READ_BY_CHILDREN), child)
        # and the fork server, whose imports (torch, Triton, torch._inductor: seconds) the first workers wait for
        try:
            procs.start_ahead(server_env(), NOT_READ_BY_CHILDREN)
        except Exception:  # the runner starts it as before
            pass


def take(env: dict[str, str]) -> procs.Child | None:
    """The worker :func:`begin` spawned, its answer to :data:`PROBE` on the way, if it was spawned with
    ``env`` and the environment it inherited is still the process's; else None (and that worker is
    stopped). Taken once."""
    global _started
    started, _started = _started, None
    if started is None:
        return None
    if started[0] == env and started[1] == procs.environ_without(NOT_READ_BY_CHILDREN) and started[2].proc.is_alive():
        return started[2]
    started[2].stop(grace=0)
    return None


def cancel() -> None:
    """Stops a worker no runner took (the command failed before its probe)."""
    global _started
    started, _started = _started, None
    if started is not None:
        started[2].stop(grace=0)
