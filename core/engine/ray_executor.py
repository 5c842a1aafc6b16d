"""The Ray executor: the same lanes, spread over a Ray cluster.

* Each GPU is a Ray actor (``num_gpus=1``; Ray sets its ``CUDA_VISIBLE_DEVICES``) that hosts one
  :class:`~.device.Device`: its lanes, judges, exclusive timing and memory budget, exactly as on one
  host. The actor takes as many concurrent calls as it has lanes; Ray queues the rest.
* The prepare step (reading, static scans, CPU builds) runs as Ray tasks.
* Only the driver writes the store: actors return observations (frozen plain data,
  :mod:`.observation`), the driver turns them into rows. Resume works as with the local executor,
  since the store is the driver's.

Ray is the scheduler: nothing here queues work of its own. The driver starts a local Ray instance
when no ``--address`` is given (``ray.init``), and Ray ends the actors it started with the driver.
On a cluster, task files, candidate files and the mkbench checkout must sit at the same paths on
every node (a shared filesystem, or a Ray ``runtime_env``): units carry paths, not file contents.
"""

from __future__ import annotations

import os
from typing import Iterable, Iterator

from .observation import Observation
from .plan import Unit
from .prepare import apply, prepare
from .settings import EvalSettings, Sharing


class _DeviceActor:
    def __init__(self, kind: str, lanes: int, env: dict, modules: tuple, memory_bytes: int | None, label: str,
                 sharing: Sharing = Sharing(), server_env: dict | None = None):
        from . import procs
        from .device import Device
        procs.context(modules, {"TRITON_INTERPRET": "1" if kind == "cpu" else "0", **(server_env or {})})
        self.device = Device(kind, None, lanes, env, modules, memory_bytes, sharing)
        self.device.name = label

    def evaluate(self, unit: Unit, settings: EvalSettings, log_path, env: dict) -> Observation:
        from pathlib import Path
        return self.device.evaluate(unit, settings, Path(log_path) if log_path else None, env)

    def states(self) -> list[str]:
        return self.device.states()

    def close(self) -> None:
        self.device.close(kill=True)


class RayExecutor:
    name = "ray"

    def __init__(self, address: str | None, hw, probe: dict, options, settings: EvalSettings, log_path, unit_env,
                 modules: tuple[str, ...], workers: int, server_env: dict[str, str] | None = None):
        import ray
        self.ray = ray
        if not ray.is_initialized():
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(num_cpus=workers, log_to_driver=False, include_dashboard=False)
        self.settings, self.log_path, self.unit_env = settings, log_path, unit_env
        self._prepare = ray.remote(num_cpus=1)(prepare)
        if hw.device == "cuda":
            gpus = int(ray.cluster_resources().get("GPU", 0))
            count = gpus if options.gpus == "all" else len(options.gpus.split(","))
            if count < 1 or count > gpus:
                from ..errors import BadInput
                raise BadInput(f"--gpus {options.gpus}: the Ray cluster offers {gpus} GPU(s)")
            from .device import default_lanes
            # as if the GPUs shared this host's driver: a cluster of several hosts gets fewer lanes than it could
            lanes = options.lanes or default_lanes(os.cpu_count() or 4, count)
            kind, env, memory = "cuda", {"TRITON_INTERPRET": "0"}, probe.get("memory_bytes")
            resources = {"num_gpus": 1}
        else:
            count, lanes, kind, env, memory = 1, options.lanes or os.cpu_count() or 1, hw.device, {}, None
            resources = {}
        from .device import timing_queue
        queue = timing_queue(options.sharing, lanes)
        # a call per unit in flight (its lanes' and those waiting to be timed without one), and the state calls
        actor = ray.remote(num_cpus=1, max_concurrency=lanes + queue + 2, **resources)(_DeviceActor)
        self.actors = [actor.remote(kind, lanes, env, modules, memory, f"ray-{kind}:{i}", options.sharing, server_env)
                       for i in range(count)]
        self.load = [0] * count
        self._actor_of: dict = {}
        self._states: list[str] = []

    def lane_states(self) -> list[str]:
        return self._states

    def run(self, units: Iterable[Unit]) -> Iterator[tuple[Unit | None, Observation | None]]:
        ray = self.ray
        pending: dict = {}
        try:
            for unit in units:
                if not unit.needs_worker:
                    yield unit, None
                elif unit.backend.is_baseline or unit.source is None:
                    pending[self._evaluate(unit)] = ("evaluate", unit)
                else:
                    pending[self._prepare.remote(unit)] = ("prepare", unit)
            state_ref = None
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                if state_ref is None:
                    state_ref = [a.states.remote() for a in self.actors]
                ready, _ = ray.wait(state_ref, num_returns=len(state_ref), timeout=0)
                if len(ready) == len(state_ref):
                    self._states = [s for part in ray.get(state_ref) for s in part]
                    state_ref = None
                if not done:
                    yield None, None
                for ref in done:
                    step, unit = pending.pop(ref)
                    if step == "prepare":
                        try:
                            apply(unit, ray.get(ref))
                        except Exception as exc:
                            unit.invalid = f"{unit.source}: could not be read or parsed ({type(exc).__name__}: {exc})"
                        if unit.needs_worker:
                            pending[self._evaluate(unit)] = ("evaluate", unit)
                        else:
                            yield unit, None
                    else:
                        self.load[self._actor_of.pop(ref)] -= 1
                        yield unit, ray.get(ref)
        finally:
            for ref in list(pending):
                ray.cancel(ref, force=True)
            for a in self.actors:
                try:
                    ray.get(a.close.remote(), timeout=10)
                except Exception:
                    pass
                ray.kill(a)

    def _evaluate(self, unit: Unit):
        i = min(range(len(self.actors)), key=lambda k: self.load[k])
        self.load[i] += 1
        path = self.log_path(unit)
        ref = self.actors[i].evaluate.remote(unit, self.settings, str(path) if path else None, self.unit_env(unit))
        self._actor_of[ref] = i
        return ref
