"""Workers kept between units: a compile-ahead worker (:mod:`.compile_ahead`) or a trusted baseline's
worker on a lane (:class:`BaselineWorkers`), each with its own log, copied into the log of every unit it
serves (:class:`Kept`).

A worker's start (fork, confinement, CUDA context) is most of what a lane does for an eager baseline's
unit, and CUDA contexts are made one at a time by the host's driver: on a 4-GPU H200 host with 16 lanes
a baseline unit's worker took 3.3 s to start of the 6.5 s it held its lane, and 6.8 s (9.6 s) when twice
(four times) as many workers started at once (reports/2026-11-28-kept-workers, call 41). A baseline runs
the task's own reference code, the engine's, not a candidate's: nothing it leaves behind can be a cheat,
so its worker may serve the next baseline unit of the same environment. A candidate's worker never does.
"""

from __future__ import annotations

import threading
from pathlib import Path

from .procs import Child
from .session import WorkerSession

#: units one kept worker serves before it is replaced: what a long-lived process gathers (imported
#: modules, the allocator's and the JIT's caches) stays bounded
WORKER_UNITS = 16
#: the most of a worker's log copied into a unit's log for one unit (its tail)
LOG_COPY_BYTES = 64 << 10
#: environment variables that name a folder of the unit's own (its build folder, core/engine/runner.py unit_env:
#: writable by its workers alone, so that no other candidate can plant a build under its sources' key). A kept
#: worker serves several units, so it never gets one: it gets a folder of its own instead, which no unit reads,
#: and they are not part of its key. Where a compile-ahead worker is not shared (a CUDA candidate's extension,
#: built ahead with ``--compile-ahead pool``), the folder stays in its environment and it serves one unit.
PER_UNIT_DIRS = ("TORCH_EXTENSIONS_DIR",)
#: seconds a kept baseline worker may take to let go of its unit (the allocator's cache emptied)
RESET_S = 30.0
#: the most device memory a worker may still hold reserved after its reset and be kept: an idle worker is
#: outside the memory budget (its context aside), so one whose unit left allocations alive (a module-level
#: tensor, a cache of the reference's) is stopped instead; cuBLAS's workspaces stay reserved, tens of MiB
RESERVED_MAX = 256 << 20


def env_key(env: dict[str, str], own: list[str] | tuple[str, ...] = ()) -> tuple:
    """What a worker's environment must equal for it to serve a unit: the unit's, less ``own``."""
    return tuple(sorted((k, v) for k, v in env.items() if k not in own))


def claim(idle: list, key: tuple) -> tuple:
    """From ``idle`` (changed in place): the worker whose key is ``key``, or None, and the workers found dead
    (killed while idle: the caller stops them and starts others)."""
    dead = [kept for kept in idle if not kept.session.alive()]
    idle[:] = [kept for kept in idle if kept not in dead]
    found = next((kept for kept in idle if kept.key == key), None)
    if found is not None:
        idle.remove(found)
    return found, dead


def own_place(unit_log: Path | None, env: dict[str, str], own: list[str], logs: str, folder: str, n: int):
    """A new kept worker's log (``<unit log's folder>/<logs>/worker-<n>.log``, None without a unit log) and its
    environment, the folders ``own`` named replaced by one of its own (``<folder>-<n>``) that no unit reads."""
    log = None
    if unit_log is not None:
        log = unit_log.parent / logs / f"worker-{n}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
    return log, dict(env, **{v: str(Path(env[v]).parent / f"{folder}-{n}") for v in own})


class Kept:
    """A worker between units: its session, the environment it was started with (its key), how many units
    it has served, its own log, and what it is (``what``: said in the header of each unit's copy)."""

    def __init__(self, session: WorkerSession, key: tuple, log: Path | None, what: str):
        self.session, self.key, self.log, self.what, self.served = session, key, log, what, 0
        self.mark = 0  # the worker's log size when its current unit began

    def log_size(self) -> int:
        try:
            return self.log.stat().st_size if self.log is not None else 0
        except OSError:
            return 0

    def copy_log(self, since: int, unit_log: Path | None) -> None:
        """What the worker wrote from byte ``since`` on, appended to the unit's log under a header."""
        if self.log is None or unit_log is None:
            return
        try:
            with open(self.log, "rb") as f:
                f.seek(max(since, self.log_size() - LOG_COPY_BYTES))
                text = f.read().decode("utf-8", "replace")
            with open(unit_log, "a", encoding="utf-8") as out:
                out.write(f"--- {self.what}: worker {self.session.child.pid}, its unit {self.served + 1} of at most "
                          f"{WORKER_UNITS} (its whole log: {self.log})\n{text}")
                if text and not text.endswith("\n"):
                    out.write("\n")
        except OSError:
            pass


def keeps_worker(unit) -> bool:
    """Whether ``unit``'s worker may serve later units: a baseline whose backend says its calls leave
    nothing behind that the next unit could see (``Backend.reuse_worker``), of a task whose reference keeps
    no state between calls (a stateful one's module could carry it into a retry of its unit)."""
    backend = unit.backend
    return bool(backend.is_baseline and getattr(backend, "reuse_worker", False)
                and not getattr(unit.task, "stateful_reference", None))


class BaselineWorkers:
    """One device's kept baseline workers. :meth:`take` gives a unit an idle worker started with the same
    environment, or a new one; :meth:`give` takes it back after the unit, and keeps it (its unit let go of:
    the worker's ``reset``) if the unit ended cleanly and it has served fewer than ``WORKER_UNITS`` units.
    At most ``idle_max`` are kept idle: each holds a CUDA context outside the memory budget."""

    def __init__(self, idle_max: int):
        self.idle_max = max(idle_max, 0)
        self._idle: list[Kept] = []
        self._lock = threading.Lock()
        self.started = self.units = 0
        self.holding = 0  # workers stopped because their reset left more than RESERVED_MAX reserved
        self.closing = False

    def take(self, start, env: dict[str, str], log_path: Path | None, unit_limit: float | None) -> Kept:
        """An idle worker whose key is ``env``'s, its session renewed for this unit (its clock, its limit), or
        one started by ``start(env, log)`` with a log and a build folder of its own."""
        own = [v for v in PER_UNIT_DIRS if v in env]
        key = env_key(env, own)
        with self._lock:
            found, dead = claim(self._idle, key)
            if found is None:
                self.started += 1
                n = self.started
        for kept in dead:
            kept.session.stop()
        if found is not None:
            found.session = found.session.renewed(unit_limit)
            found.mark = found.log_size()
            return found
        log, env = own_place(log_path, env, own, "baseline-workers", "baseline-worker", n)
        return Kept(start(env, log), key, log, "baseline worker")

    def give(self, kept: Kept, clean: bool, unit_log: Path | None) -> None:
        """``kept`` back after its unit: its log's part copied to the unit's, then kept, if its reset let go of
        the unit's memory (at most ``RESERVED_MAX`` still reserved), or stopped. The reset is lane time, on
        the unit's ``stop`` step."""
        kept.copy_log(kept.mark, unit_log)
        kept.served += 1
        with self._lock:
            self.units += 1
            keep = clean and kept.served < WORKER_UNITS and not self.closing and self.idle_max > 0
        if keep:
            try:
                reply = kept.session.request({"op": "reset"}, RESET_S)
                keep = reply.get("kind") == "reset"
                if keep and int(reply.get("reserved_bytes") or 0) > RESERVED_MAX:
                    keep = False
                    with self._lock:
                        self.holding += 1
            except Exception:  # noqa: BLE001 - a worker that cannot let go is stopped, not kept
                keep = False
        evicted = []
        if keep:
            with self._lock:
                if self.closing:
                    evicted.append(kept)
                else:
                    self._idle.append(kept)
                    while len(self._idle) > self.idle_max:
                        evicted.append(self._idle.pop(0))
        else:
            evicted.append(kept)
        for k in evicted:
            k.session.stop()

    def idle_children(self) -> list[Child]:
        with self._lock:
            return [kept.session.child for kept in self._idle]

    def close(self) -> None:
        """Every idle worker stopped; none is kept from now on."""
        with self._lock:
            self.closing = True
            idle, self._idle = self._idle, []
        for kept in idle:
            kept.session.stop()

    def counts(self) -> dict[str, int]:
        """Workers started, units served (the pool's reuse), and workers stopped holding memory."""
        return {"started": self.started, "units": self.units, "holding": self.holding}
