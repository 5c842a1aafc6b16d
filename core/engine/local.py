"""The local executor: one host's devices. Candidates are prepared in a process pool sized to the
CPU cores (``--workers``), their JIT kernels compiled ahead in as many throwaway workers
(:mod:`.compile_ahead`), then evaluated in each device's lanes (``--lanes``), the least loaded device
first. All three are the standard library's executors (``concurrent.futures``); the fork server
starts their processes.

``run`` yields ``(unit, observation)`` as units finish, in any order, and ``(None, None)`` about once
a second while nothing finishes, so the caller can renew its heartbeat and redraw its progress.
"""

from __future__ import annotations

import concurrent.futures as cf
import heapq
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..procguard import kill_group
from . import compile_ahead, procs
from .device import Device
from .observation import Observation
from .plan import Unit
from .prepare import apply, pool_initializer, prepare
from .settings import EvalSettings


class LocalExecutor:
    name = "local"

    def __init__(self, devices: list[Device], workers: int, settings: EvalSettings,
                 log_path: Callable[[Unit], Path | None], unit_env: Callable[[Unit], dict[str, str]],
                 modules: tuple[str, ...] = (), compile_workers: int | None = None):
        self.devices, self.workers, self.settings = devices, max(workers, 1), settings
        # --compile-workers N: N at once; by default a floor, and more while the host has cores to spare
        floor = compile_workers or compile_ahead.default_workers(self.workers)
        self.compile_gate = compile_ahead.Gate(floor, compile_workers or compile_ahead.default_ceiling(self.workers))
        self.log_path, self.unit_env, self.modules = log_path, unit_env, modules
        self._load = {d.name: 0 for d in devices}
        self._ahead: compile_ahead.CompileAhead | None = None  # the last run's compile-ahead pool

    def timing_phases(self) -> dict[str, float]:
        """Every device's timing phases together (see device.Device.timing_phases)."""
        every = [d.timing_phases() for d in self.devices]
        keys = ("phases", "drain_s", "held_s", "deferred_s", "withdrawn")
        return {k: round(sum(p.get(k, 0) for p in every), 3) for k in keys}

    def compile_pool(self) -> dict[str, int]:
        """The compile-ahead pool's floor, ceiling and the most workers it ran at once; the workers it
        started and the units they compiled (kept workers serve several)."""
        g, ahead = self.compile_gate, self._ahead
        return {"floor": g.floor, "ceiling": g.ceiling, "peak": g.peak,
                **({"started": ahead.started, "units": ahead.units} if ahead is not None else {})}

    def baseline_workers(self) -> dict[str, int]:
        """Every device's :meth:`.kept.BaselineWorkers.counts` added up: workers started, the units they served
        (kept workers serve several), and those stopped holding memory."""
        every = [d.baseline_workers.counts() for d in self.devices]
        return {k: sum(c[k] for c in every) for k in (every[0] if every else {})}

    def judge_cpu(self) -> float:
        """CPU seconds every device's judges have used."""
        return round(sum(d.judge_cpu() for d in self.devices), 3)

    def lane_states(self) -> list[str]:
        return [s for d in self.devices for s in d.states()]

    def run(self, units: Iterable[Unit]) -> Iterator[tuple[Unit | None, Observation | None]]:
        pool = cf.ProcessPoolExecutor(self.workers, mp_context=procs.context(self.modules),
                                      initializer=pool_initializer)
        lanes = {d.name: cf.ThreadPoolExecutor(d.slots, thread_name_prefix=f"mkbench-{d.name}")
                 for d in self.devices}
        self._ahead = ahead = compile_ahead.CompileAhead([d.env for d in self.devices], self.settings, self.modules,
                                           self.compile_gate)
        pending: dict[cf.Future, tuple[str, Unit]] = {}
        # Units ready for a lane, by plan position: a lane takes the earliest, so a task's baseline and
        # its candidate run near each other (baselines need no preparing; queued first, they would all
        # run before any candidate, and a run stopped part-way would hold no candidate at all).
        ready: list[tuple[int, Unit]] = []
        position: dict[int, int] = {}
        capacity = sum(d.slots for d in self.devices)  # the lanes, and the units waiting to be timed without one

        def fill() -> None:
            while ready and sum(self._load.values()) < capacity:
                unit = heapq.heappop(ready)[1]
                pending[self._evaluate(lanes, unit)] = ("evaluate", unit)

        try:
            for k, unit in enumerate(units):
                position[id(unit)] = k
                if not unit.needs_worker:
                    yield unit, None
                elif unit.backend.is_baseline or unit.source is None:
                    heapq.heappush(ready, (k, unit))
                else:
                    pending[pool.submit(prepare, unit)] = ("prepare", unit)
            while pending or ready:
                fill()
                done, _ = cf.wait(pending, timeout=1.0, return_when=cf.FIRST_COMPLETED)
                if not done:
                    yield None, None
                finished = []
                # in plan order, not the set's: with one prepare worker and one lane, units run in plan order
                for fut in [f for f in pending if f in done]:
                    step, unit = pending.pop(fut)
                    if step == "prepare":
                        try:
                            apply(unit, fut.result())
                        except Exception as exc:  # the pool process died (parser exhausted, killed)
                            unit.invalid = f"{unit.source}: could not be read or parsed ({type(exc).__name__}: {exc})"
                        if not unit.needs_worker:
                            finished.append((unit, None))
                        elif compile_ahead.where(unit, self.settings.compile_ahead) == "pool":
                            pending[ahead.submit(unit, self.log_path(unit), self.unit_env(unit))] = ("compile", unit)
                        else:
                            heapq.heappush(ready, (position[id(unit)], unit))
                    elif step == "compile":
                        try:
                            unit.compiled_ahead = fut.result()
                        except Exception:  # noqa: BLE001 - nothing compiled ahead: the first call compiles
                            pass
                        heapq.heappush(ready, (position[id(unit)], unit))
                    else:
                        self._load[unit.device_name] -= 1
                        finished.append((unit, fut.result()))
                fill()  # the lanes first, then the rows are written
                yield from finished
        finally:
            ahead.close()
            for d in self.devices:  # every device's processes told to stop before any is waited for
                d.ask_stop(kill=True)
            for d in self.devices:
                d.close(kill=True)
            for ex in lanes.values():
                ex.shutdown(wait=False, cancel_futures=True)
            for p in list(getattr(pool, "_processes", {}).values()):  # nvcc in flight: kill, do not wait
                kill_group(p.pid)
            pool.shutdown(wait=False, cancel_futures=True)

    def _evaluate(self, lanes: dict, unit: Unit) -> cf.Future:
        device = min(self.devices, key=lambda d: self._load[d.name])
        self._load[device.name] += 1
        unit.device_name = device.name
        return lanes[device.name].submit(device.evaluate, unit, self.settings, self.log_path(unit), self.unit_env(unit),
                                         device.ticket())  # here, in plan order: the lane goes to the earliest
