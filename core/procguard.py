"""Child processes that can never outlive their orchestrator.

Every process mkbench starts (candidate workers, judges, compile-pool workers) calls
:func:`detach_and_guard` first thing. It

* starts a new session, so the process and whatever it spawns (nvcc, ninja, a candidate's own
  subprocesses) form one process group that the orchestrator kills as a unit, and so a Ctrl-C in
  the terminal reaches only the orchestrator (which prints one line) and not every worker (which
  would each print a traceback);
* asks Linux to send it SIGTERM when its parent dies (``prctl(PR_SET_PDEATHSIG)``): the parent is
  the orchestrator or multiprocessing's fork server, which itself exits when the orchestrator's
  end of its pipe closes, so a SIGKILLed orchestrator takes the whole tree with it;
* blocks SIGTERM in every thread and runs a watchdog thread that waits for it (and polls the parent
  pid, in case the death signal was missed): on either it kills its own process group with SIGKILL.
  A watchdog thread, not a Python signal handler, because handlers run only in the main thread
  between bytecodes, and a candidate's main thread may be stuck in a CUDA call or a C loop.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading

_PR_SET_PDEATHSIG = 1
_guarded = False


def _set_parent_death_signal(sig: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _kill_group() -> None:
    try:
        os.killpg(os.getpgid(0), signal.SIGKILL)
    finally:
        os._exit(137)


def _watch(parent: int) -> None:
    while True:
        got = signal.sigtimedwait([signal.SIGTERM], 0.5)
        if got is not None or os.getppid() != parent:
            _kill_group()


def detach_and_guard() -> None:
    """Make this process the leader of a new process group that dies with its parent. Idempotent."""
    global _guarded
    if _guarded:
        return
    _guarded = True
    try:
        os.setsid()
    except OSError:  # already a session leader
        pass
    parent = os.getppid()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    _set_parent_death_signal(signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before the death signal was armed
        _kill_group()
    threading.Thread(target=_watch, args=(parent,), name="mkbench-parent-watch", daemon=True).start()


def kill_group(pid: int) -> None:
    """Kill a guarded child and everything it started (its process group); quiet if already gone."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
