"""A lane's trusted judge process, seen from the lane: started when first needed, asked to judge an
answer, told to let go of a unit's memory, replaced when it hangs or dies.

The judge only judges (:mod:`mkbench.judge`): it regenerates a step's inputs from its seed and
checks the outputs. A contract that re-runs the candidate (``call``) is relayed to the unit's worker
here, so the judge never imports candidate code.
"""

from __future__ import annotations

import threading
from typing import Callable

from .. import judge as judge_mod
from .. import transfer
from .clock import tree_cpu
from .procs import Child, Died, Timeout
from .session import Abnormal, WorkerSession


class JudgeClient:
    def __init__(self, env: dict[str, str], device_kind: str, modules: tuple[str, ...] = (),
                 stopped: Callable[[], bool] = lambda: False):
        self.env, self.device_kind, self.modules, self.stopped = env, device_kind, modules, stopped
        self._child: Child | None = None
        self._cpu_gone = 0.0  # CPU seconds of this lane's judges that have exited
        self._cpu_at_stop: float | None = None  # the running judge's, as it was told to stop
        # close() runs on the lane's thread (a judge that hung or died) and on the one stopping the run
        self._closing = threading.Lock()

    def cpu(self) -> float:
        """CPU seconds this lane's judges have used, the one running and those replaced."""
        child = self._child  # read once: another thread may close the judge meanwhile
        return round(self._cpu_gone + ((tree_cpu(child.pid) or 0.0) if child is not None else 0.0), 3)

    def process(self) -> Child:
        if self.stopped():
            raise Abnormal("error", "the run was stopped")
        if self._child is None or not self._child.proc.is_alive():
            self._child = Child(judge_mod.serve, (self.env, self.device_kind), self.modules)
        return self._child

    def ask(self, request: dict, worker: WorkerSession, timeout: float, answer: str = "judged") -> dict:
        """The judge's answer (of kind ``answer``) to ``request``, relaying its ``call``s to ``worker``."""
        j = self.process()
        made: list[str] = []
        try:
            j.send(request)
            while True:
                # the judge's time is the unit's: it gets what is left of the unit's limit too
                msg = worker.within(timeout, j.recv, "judge")
                kind = msg.get("kind")
                if kind == answer:
                    return msg
                if kind == "judge_error":
                    raise Abnormal("error", "the judge failed: " + str(msg.get("message")))
                if kind == "call":  # the contract re-runs the candidate
                    made += transfer.shm_names(msg["args"])
                    reply = worker.request({"op": "call", "args": msg["args"]}, timeout)
                    if reply.get("kind") == "ran" and not reply.get("structure"):
                        made += transfer.shm_names(reply["outputs"] + reply["inputs_after"])
                        j.send({"kind": "call_result", "outputs": reply["outputs"]})
                    else:
                        j.send({"kind": "call_failed", "message": reply.get("message") or reply.get("structure")})
                else:
                    raise Abnormal("error", f"the judge answered {str(kind)[:40]!r}")
        except (Timeout, Died) as exc:
            self.close()  # a judge that hung or died is replaced for the next unit
            if isinstance(exc, Died) and worker.alive():
                raise Abnormal("error", f"the judge died ({exc.desc})") from None
            raise
        finally:
            transfer.unlink(made)

    def release(self, timeout: float) -> int | None:
        """The judge lets go of the unit's memory before the unit's budget is given back (a judge
        that does not answer is replaced). Returns the most device memory the judge's allocator held
        since its last release (None: not known)."""
        if self._child is None or not self._child.proc.is_alive():
            return None
        try:
            answer = self._child.request({"op": "release"}, timeout)
            if answer.get("kind") != "released":
                raise ValueError("unexpected answer")
        except Exception:  # noqa: BLE001 - a judge that cannot release is not trusted with the next unit
            self.close()
            return None
        peak = answer.get("peak_bytes")
        return peak if isinstance(peak, int) and peak >= 0 else None

    def ask_stop(self) -> None:
        """Tell the judge to stop, without waiting for it (:meth:`close` waits)."""
        child = self._child
        if child is not None:
            # its CPU seconds read first: by the time close() waits for it, it may have exited, and an exited
            # process's seconds cannot be read (the run's judges' CPU was 0 where the device waited for
            # other processes between the two)
            self._cpu_at_stop = tree_cpu(child.pid)
            child.ask_stop()

    def close(self) -> None:
        with self._closing:
            child, self._child = self._child, None
            if child is not None:
                cpu = tree_cpu(child.pid)
                self._cpu_gone += (cpu if cpu is not None else self._cpu_at_stop) or 0.0
                child.stop(grace=2)
            self._cpu_at_stop = None
