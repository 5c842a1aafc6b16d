"""Child processes that can never outlive their orchestrator.

Every process mkbench starts (candidate workers, judges, compile-pool workers) calls
:func:`detach_and_guard` first thing. It

* starts a new session, so the process and whatever it spawns (nvcc, ninja, a candidate's own
  subprocesses) form one process group that the orchestrator kills as a unit, and so a Ctrl-C in
  the terminal reaches only the orchestrator (which prints one line) and not every worker (which
  would each print a traceback);
* lets go of multiprocessing's fork-server "alive" pipe, which the fork server hands to every child
  it forks: the fork server exits when the last write end of that pipe closes, and children holding
  one would keep it alive after the orchestrator died (and so never get the signal below);
* asks Linux to SIGKILL it when its parent dies (``prctl(PR_SET_PDEATHSIG)``): the parent is
  multiprocessing's fork server, which exits when the orchestrator's end of its pipe closes, so a
  SIGKILLed orchestrator takes the whole tree with it. SIGKILL, not a signal a thread of ours would
  handle: a candidate can hold the GIL for as long as it likes (a regular expression that
  backtracks, a C extension's loop), and no Python code of ours runs in the meantime;
* forks a guardian: a small process in the same group that does nothing but wait for the parent
  death signal of its own parent (the guarded process, which dies as above, or crashes, or is
  ended by its candidate) and then kills the whole group with SIGKILL, so nothing the guarded
  process started survives it. The guardian is single-threaded and runs no candidate code, so it
  cannot be kept from acting.

A hostile candidate could leave the group on purpose (``setsid`` in a grandchild): a confined worker
(:mod:`mkbench.sandbox`) is a child subreaper that keeps such processes below it and kills them
when the worker ends, and :func:`kill_group` kills every descendant, not only the group.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

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


def _release_forkserver_pipe() -> None:
    """Close this process's copy of the fork server's "alive" pipe (see the module docstring)."""
    try:
        from multiprocessing import forkserver
    except ImportError:
        return
    server = getattr(forkserver, "_forkserver", None)
    fd = getattr(server, "_forkserver_alive_fd", None)
    if fd is None or server._forkserver_pid is not None:  # None: not a fork-server child; pid: we started it
        return
    try:
        os.close(fd)
    except OSError:
        pass
    server._forkserver_alive_fd = None


def _guardian(guarded: int) -> None:
    """The guardian's whole life: wait for the guarded process to die, then kill the group."""
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        _set_parent_death_signal(signal.SIGTERM)
        os.closerange(3, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1024)
        if os.getppid() == guarded:  # else it died before the death signal was armed
            signal.sigwait({signal.SIGTERM})
    finally:
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
    _release_forkserver_pipe()
    parent = os.getppid()
    _set_parent_death_signal(signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the death signal was armed
        _kill_group()
    me = os.getpid()
    if os.fork() == 0:
        _guardian(me)


def stat_fields(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (the state first, then the parent's
    pid, ...; the name in parentheses may hold spaces), or None where the process cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def process_table() -> dict[int, list[bytes]]:
    """Every live process's :func:`stat_fields`, by pid (empty without ``/proc``)."""
    table = {}
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if name.isdigit():
            fields = stat_fields(name)
            if fields is not None and len(fields) > 1:
                table[int(name)] = fields
    return table


def descendants(pid: int, table: dict[int, list[bytes]] | None = None) -> list[int]:
    """Every process below ``pid`` (through ``table``, by default /proc read now: each process's
    parent), nearest first."""
    children: dict[int, list[int]] = {}
    for child, fields in (process_table() if table is None else table).items():
        try:
            children.setdefault(int(fields[1]), []).append(child)
        except ValueError:
            continue
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def kill_descendants(pid: int) -> None:
    """SIGKILL every process below ``pid``, in whatever session or group: all are stopped first,
    walk after walk until one finds nothing new, so that none forks or is orphaned in between."""
    stopped: set[int] = set()
    for _ in range(100):
        new = [p for p in descendants(pid) if p not in stopped]
        if not new:
            break
        for p in new:
            stopped.add(p)
            try:
                os.kill(p, signal.SIGSTOP)
            except OSError:
                pass
    for p in stopped:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def freeze(pid: int, stop: bool) -> None:
    """Stop (SIGSTOP) or continue (SIGCONT) a guarded child and everything below it: its process group
    and its descendants in other groups; quiet where one is gone. Stopping walks until it finds nothing
    new, as :func:`kill_descendants` does, so that a child forked in between is stopped too."""
    sig = signal.SIGSTOP if stop else signal.SIGCONT
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    done: set[int] = set()
    for _ in range(100 if stop else 1):
        new = [p for p in [pid] + descendants(pid) if p not in done]
        if not new:
            break
        for p in new:
            done.add(p)
            try:
                os.kill(p, sig)
            except OSError:
                pass


def kill_group(pid: int) -> None:
    """Kill a guarded child and everything it started: its process group, and its descendants in
    other sessions or groups (a confined worker keeps them below it as a child subreaper, see
    :mod:`mkbench.sandbox`); quiet if already gone."""
    kill_descendants(pid)
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
