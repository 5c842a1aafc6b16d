"""Spawning and supervising one worker process.

A worker is spawned with its environment, imports torch, then waits for its one job on a second
pipe, so the pipeline can start the next unit's worker as soon as the current unit's job is
handed over: the import (seconds per unit on a GPU machine) overlaps with the current unit's
compile and correctness steps instead of adding to the run. Each worker still serves exactly one
job. The worker reports over a one-way pipe; the parent enforces a deadline that restarts at
every message with the limit of the step in progress. A worker that exits without saying "done"
crashed (its exit code or signal and the tail of its log say how); one that misses a deadline is
killed and timed out. Either way only that worker's unit is affected.
"""

from __future__ import annotations

import multiprocessing
import pickle
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import worker

KNOWN_KINDS = {"compile_checks", "stage", "begin", "compile", "check", "timed", "poisoned", "fatal", "done", "probe"}


@dataclass
class Limits:
    """Seconds allowed for one step: the whole compile, or one (shape, dtype) check or timing."""

    compile: float = 300.0
    correctness: float = 180.0
    timing: float = 180.0
    start: float = 120.0  # spawning and importing before the first message

    def for_stage(self, stage: str | None) -> float:
        return {"compile": self.compile, "correctness": self.correctness, "timing": self.timing}.get(stage or "", self.start)


@dataclass
class WorkerOutcome:
    messages: list[dict[str, Any]] = field(default_factory=list)
    finished: bool = False      # the worker said "done"
    timed_out: bool = False
    crashed: bool = False
    exit_desc: str = ""
    stage: str | None = None    # stage in progress when it ended
    combo: list | None = None   # (shape, dtype) in progress when it ended
    log_tail: str = ""


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "no exit code"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _tail(path: Path | None, n: int = 1500) -> str:
    if path is None or not path.exists():
        return ""
    data = path.read_bytes()[-n:]
    return data.decode("utf-8", "replace").strip()


class StartedWorker:
    """A spawned worker with its environment set and torch imported, waiting for one job."""

    def __init__(self, env: dict[str, str]):
        ctx = multiprocessing.get_context("spawn")
        self.env = dict(env)
        self.recv, send = ctx.Pipe(duplex=False)
        jobs_recv, self.jobs = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=worker.entry, args=(send, jobs_recv, self.env), daemon=True)
        self.proc.start()
        send.close()  # the parent keeps only the reading end, so EOF means the worker is gone
        jobs_recv.close()

    def discard(self) -> None:
        """Stop a worker that will not get a job (end of run, or a unit needing another environment)."""
        for conn in (self.jobs, self.recv):
            conn.close()
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(10)


def run_worker(job: dict, env: dict[str, str], limits: Limits, log_path: Path | None = None,
               on_message: Callable[[dict], None] | None = None, started: StartedWorker | None = None,
               on_started: Callable[[], None] | None = None) -> WorkerOutcome:
    """Run ``job`` in ``started`` (when it has this environment and is alive) or in a new worker;
    ``on_started`` is called once the job is handed over (the pipeline starts the next worker there)."""
    if started is not None and (started.env != dict(env) or not started.proc.is_alive()):
        started.discard()
        started = None
    w = started or StartedWorker(env)
    proc, recv = w.proc, w.recv
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        w.jobs.send((pickle.dumps(job), str(log_path) if log_path else None))
    except (BrokenPipeError, OSError):
        pass  # it died while importing: judged below by its exit, like any crash
    w.jobs.close()
    if on_started:
        on_started()
    out = WorkerOutcome()
    deadline = time.monotonic() + limits.start
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                out.timed_out = True
                break
            if recv.poll(min(remaining, 0.5)):
                try:
                    msg = recv.recv()
                except (EOFError, OSError):
                    break
                except Exception as exc:  # garbage on the channel is the worker's fault
                    out.messages.append({"kind": "fatal", "message": f"unreadable worker message: {exc}"})
                    break
                if not isinstance(msg, dict) or msg.get("kind") not in KNOWN_KINDS:
                    out.messages.append({"kind": "fatal", "message": f"invalid worker message: {str(msg)[:200]}"})
                    break
                out.messages.append(msg)
                if on_message:
                    on_message(msg)
                kind = msg["kind"]
                if kind == "stage":
                    out.stage, out.combo = msg["stage"], None
                elif kind == "begin":
                    out.combo = msg["combo"]
                elif kind in ("check", "timed", "compile"):
                    out.combo = None
                if kind == "done":
                    out.finished = True
                    break
                if kind in ("fatal", "poisoned"):
                    break
                deadline = time.monotonic() + limits.for_stage(out.stage)
            elif not proc.is_alive():
                # Drain anything sent just before exiting.
                while recv.poll(0):
                    try:
                        out.messages.append(recv.recv())
                    except (EOFError, OSError):
                        break
                break
    finally:
        if out.timed_out or (proc.is_alive() and not out.finished):
            proc.kill()
        proc.join(10)
        if proc.is_alive():
            proc.kill()
            proc.join(5)
        recv.close()
    if not out.finished and not out.timed_out:
        out.crashed = not any(m.get("kind") in ("fatal", "poisoned") for m in out.messages)
        out.exit_desc = _describe_exit(proc.exitcode)
    out.log_tail = _tail(log_path)
    return out
