"""Child processes of the engine: candidate workers and judges, forked from multiprocessing's fork
server, each spoken to over one pipe with a deadline on every answer.

The fork server is the stdlib's (``multiprocessing.get_context("forkserver")``): it imports the heavy
modules once (torch, Triton, and each backend's own: JAX, CuPy...) and never touches a device, so
each fork starts with them imported but with no CUDA context and no state from any other candidate.
Every child calls :func:`mkbench.procguard.detach_and_guard`, so it and its descendants die with the
orchestrator and are killed as one process group.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import pickle
import signal
import time
from pathlib import Path
from typing import Any

from .. import wire
from ..procguard import kill_group

#: imported by the fork server before any fork; ``mkbench.preload`` does what every child would repeat
_PRELOAD = ["torch", "triton", "triton.language", "mkbench.preload"]
_started_env: dict[str, str | None] | None = None  # what the running fork server imported under
_preloaded: frozenset[str] = frozenset()  # and the modules it imported
#: a server started ahead of the caller that knows its backend (:func:`start_ahead`), until the next
#: :func:`context` call claims it: the process environment it was started in, and what of it no child reads
_ahead: tuple[dict[str, str], frozenset[str]] | None = None


def environ_without(ignored: frozenset[str]) -> dict[str, str]:
    """The process environment but ``ignored``: what a child started now inherits that it may read."""
    return {k: v for k, v in os.environ.items() if k not in ignored}


def start_ahead(env: dict[str, str], ignored: frozenset[str] = frozenset()) -> None:
    """Starts the fork server before its caller knows which backend it serves (`mkbench run`'s head start,
    :mod:`.head_start`): the base modules, ``env`` applied while they import. The next :func:`context`
    call keeps it if that call's modules are among those imported and the process environment is still
    the one the server was started in (but ``ignored``, which no child reads); else it is replaced at once
    (killed, not waited for while it imports)."""
    global _ahead
    context((), env)
    _ahead = (environ_without(ignored), ignored)


def _stop_server(kill: bool) -> None:
    from multiprocessing import forkserver
    server = forkserver._forkserver
    if kill and server._forkserver_pid is not None:
        try:  # a server still importing would be waited for until its imports end
            os.kill(server._forkserver_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    server._stop()


def context(extra_modules: tuple[str, ...] = (), env: dict[str, str] | None = None):
    """The fork-server context. The first call starts the server: modules named then are preloaded,
    with ``env`` applied while they import (Triton keeps what TRITON_INTERPRET said when it was
    imported in places, so the server must import it with the device's value, not whatever the
    orchestrator's caller had set). A later call whose ``env`` differs from the one the running server
    imported under restarts it: one process evaluating on the CPU and then on a GPU (a test session)
    would otherwise fork GPU workers whose Triton was imported in interpreter mode. The first call after
    :func:`start_ahead` also restarts it for modules it did not import, or for a changed environment."""
    global _started_env, _preloaded, _ahead
    ctx = multiprocessing.get_context("forkserver")
    from multiprocessing import forkserver
    env = env or {}
    ahead, _ahead = _ahead, None
    if _started_env is not None:
        stale = any(_started_env.get(k, os.environ.get(k)) != v for k, v in env.items())
        if ahead is not None:
            wanted = {m for m in extra_modules if importlib.util.find_spec(m.split(".")[0])}
            stale = stale or not wanted <= _preloaded or environ_without(ahead[1]) != ahead[0]
        if stale:
            _stop_server(kill=ahead is not None)
            _started_env = None
    if _started_env is None:
        mods = [m for m in dict.fromkeys(_PRELOAD + list(extra_modules)) if importlib.util.find_spec(m.split(".")[0])]
        ctx.set_forkserver_preload(mods)
        _preloaded = frozenset(mods)
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            forkserver.ensure_running()
            _started_env = {k: os.environ.get(k) for k in ("TRITON_INTERPRET", *env)}
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    return ctx


class Timeout(Exception):
    pass


class Died(Exception):
    def __init__(self, desc: str):
        super().__init__(desc)
        self.desc = desc


def describe_exit(code: int | None) -> str:
    if code is None:
        return "no exit code"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class Child:
    """One guarded child process and its pipe. ``trusted`` children (judges) are read with the same
    plain-data unpickler as untrusted ones: the protocol never needs more."""

    def __init__(self, target, args: tuple, modules: tuple[str, ...] = (), ctx=None):
        ctx = ctx or context(modules)
        self.conn, theirs = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=target, args=(theirs, *args))
        self.proc.start()
        theirs.close()
        self.pid = self.proc.pid

    def send(self, cmd: dict) -> None:
        try:
            self.conn.send_bytes(pickle.dumps(cmd, protocol=pickle.HIGHEST_PROTOCOL))
        except (BrokenPipeError, OSError):
            raise Died(self.exit_desc()) from None

    def recv(self, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout()
            if self.conn.poll(min(left, 0.5)):
                try:
                    return wire.recv(self.conn)
                except EOFError:
                    raise Died(self.exit_desc()) from None
            if not self.proc.is_alive() and not self.conn.poll(0):
                raise Died(self.exit_desc())

    def request(self, cmd: dict, timeout: float) -> Any:
        self.send(cmd)
        return self.recv(timeout)

    def exit_desc(self) -> str:
        self.proc.join(2)
        return describe_exit(self.proc.exitcode)

    def ask_stop(self) -> None:
        """Ask the child to stop, without waiting for it (:meth:`stop` waits)."""
        if self.proc.is_alive():
            try:
                self.conn.send_bytes(pickle.dumps({"op": "stop"}))
            except OSError:
                pass

    def stop(self, grace: float = 5.0) -> None:
        """Ask politely, then kill the process group (the child and anything it started)."""
        if self.proc.is_alive():
            self.ask_stop()
            self.proc.join(grace)
        self.kill()

    def send_kill(self) -> None:
        """Kill the process group, without waiting for the child to be gone (:meth:`kill` waits)."""
        if self.pid:
            kill_group(self.pid)

    def kill(self) -> None:
        if self.pid:
            kill_group(self.pid)
        self.proc.join(5)
        try:
            self.conn.close()
        except OSError:
            pass


def log_tail(path: Path | None, n: int = 1500) -> str:
    if path is None or not Path(path).exists():
        return ""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(f.tell() - n, 0))
        return f.read().decode("utf-8", "replace").strip()
