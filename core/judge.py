"""The judge: reference computation and contract checks, in a process that never imports candidate
code.

A candidate runs in its own worker process and can patch anything there (the contract classes
through ``sys.modules``, torch itself). So the verdict is not computed there: the worker hands its
outputs, and its copy of the inputs after the call, to the judge (:mod:`mkbench.transfer`); the judge
regenerates the inputs from the seed, runs the task's reference, checks the structure of the outputs,
whether the candidate modified an input, and the task's contract. Nothing the candidate imports or
patches reaches this process.

:class:`Judge` is the logic (``mkbench validate`` uses it in-process); :func:`serve` is the judge
process's loop. A contract that re-runs the candidate (the random tasks check that the same seed gives
the same draw) asks for it through ``run_candidate``: in the judge process that is a round trip
through the orchestrator to the worker, with tensors handed over the same way.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

import torch

from .contracts import CheckContext, CheckResult, upcast, use_ieee_float32
from .inputs import clone_args, generate, normalize, same
from .task import DTYPES, Shape, Task, load_task_file


@dataclass
class Judgement:
    ok: bool
    message: str = ""
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    note: str = ""  # how the verdict was reached, where it differs from the contract's description
    #: what the verdict did not rest on but a reader should see (outputs moved between devices to be compared)
    warning: str = ""
    #: the reference's answer, where every element of every output is one value (:func:`constant_answer`)
    constant: str = ""
    #: seconds of this check by part (:class:`Laps`): where a judge's time goes, for ``analyze engine``
    seconds: dict[str, float] | None = None

    def as_dict(self) -> dict:
        return {"ok": self.ok, "message": self.message, "max_abs_err": self.max_abs_err,
                "max_rel_err": self.max_rel_err,
                "note": self.note, "warning": self.warning, "constant": self.constant,
                **({"seconds": self.seconds} if self.seconds else {})}


#: the parts of a check, in :class:`Laps`: reading the worker's outputs and inputs after the call, a
#: CUDA tensor's IPC handles opened (``import_map``), copied (``import_copy``), closed (``import_unmap``),
#: the rest (``import``: descriptors, shared memory); regenerating the inputs (``inputs``), the structure of
#: the reference's outputs at the task's dtype (``structure``, once per combination), the reference at
#: the contract's precision (``reference``), the inputs after the call against the pristine ones
#: (``mutation``), the contract's comparison (``compare``), emptying the allocator's cache (``free``:
#: before a check of another combination)
JUDGE_PARTS = ("import_map", "import_copy", "import_unmap", "import", "inputs", "structure", "reference",
               "mutation", "compare", "free")


class Laps:
    """Seconds of one check by part. On a GPU each lap ends with a synchronisation, so a part holds its
    own device work and not the queue it left to the next one. The judge is never timed and waits for
    the device at the end of every check anyway: the extra waits cost it the overlap of a few launches."""

    def __init__(self, device: str):
        self.device = device
        self.seconds: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, part: str) -> None:
        if self.device == "cuda":
            torch.cuda.synchronize()
        now = time.perf_counter()
        self.seconds[part] = round(self.seconds.get(part, 0.0) + now - self._t, 4)
        self._t = now


#: what a judge's allocator may keep when its next check is of another (task, shape, dtype); between checks
#: of the same combination it keeps what it has, since the next check needs the same blocks again
KEEP_RESERVED_BYTES = 4 * 2**30


class CandidateCallFailed(Exception):
    """A contract's re-run of the candidate failed (raised, crashed, or was refused)."""


class Judge:
    """Judges a candidate's outputs for one (task, shape, dtype, seed) against the reference."""

    CACHE_ENTRIES = 4  # pristine inputs of the last few seeds: a timing pool is judged before and after

    def __init__(self, device: str):
        self.device = device
        self._pristine: OrderedDict[tuple, tuple] = OrderedDict()
        self._structure: dict[tuple, tuple] = {}
        self._data_dependent: set[tuple] = set()  # (task, shape, dtype) whose output shapes vary with the data

    def release(self) -> None:
        from .transfer import forget_areas
        forget_areas()  # a worker's transfer area is mapped for one unit (mkbench.transfer.TransferArea)
        forget_export_pool()  # its blocks go with the cache below
        self._pristine.clear()
        if self.device == "cuda":
            torch.cuda.empty_cache()

    def pristine(self, task: Task, shape: Shape, dtype_name: str, seed: int) -> tuple:
        key = (task.source or task.name, shape.name, dtype_name, seed)
        if any(k[:3] != key[:3] for k in self._pristine):  # another task or combination: the old ones are done
            self._pristine.clear()
        if key in self._pristine:
            self._pristine.move_to_end(key)
            return self._pristine[key]
        values = generate(task, shape, dtype_name, seed, self.device)
        self._pristine[key] = values
        while len(self._pristine) > self.CACHE_ENTRIES:
            self._pristine.popitem(last=False)
        return values

    def expected_structure(self, task: Task, shape: Shape, dtype_name: str, pristine: tuple) -> tuple:
        """Shapes, dtypes and devices of the reference's outputs at the task's dtype: computed once
        per (task, shape, dtype) instead of once per check, except where they turned out to depend
        on the data (:meth:`structure_problem`): then for these inputs."""
        key = (task.source or task.name, shape.name, dtype_name)
        if key in self._data_dependent:
            return _structure_of(task, pristine)
        if key not in self._structure:
            self._structure[key] = _structure_of(task, pristine)
        return self._structure[key]

    def repeats(self, task: Task, shape: Shape, dtype_name: str, seed: int) -> dict:
        """Whether the reference's answer to one input changes when it is asked twice in a row, from
        its initial state (a fresh copy of the task): what makes a stateful task's candidate that
        repeats its earlier answers bit for bit a cache, not a model whose state does not matter."""
        if task.source:
            task = load_task_file(task.source, fresh=True)
        pristine = self.pristine(task, shape, dtype_name, seed)
        precision = task.contract.reference_precision
        first, _ = self._reference(task, pristine, precision, dtype_name)
        second, _ = self._reference(task, pristine, precision, dtype_name)
        diff = max((float((a.double() - b.double()).abs().max()) if a.numel() else 0.0
                    for a, b in zip(first, second) if a.shape == b.shape), default=0.0)
        changed = len(first) != len(second) or any(a.shape != b.shape or not same(a, b) for a, b in zip(first, second))
        return {"changes": changed, "max_abs_diff": diff}

    def structure_problem(self, task: Task, shape: Shape, dtype_name: str, pristine: tuple,
                          outputs: tuple) -> tuple[str | None, tuple]:
        """(what is wrong with the outputs' structure, the reference's structure it was judged
        against) for these inputs. A
        mismatch with the cached structure is checked against the structure of this seed's own
        reference before it is reported: an output whose length depends on the data (masked_select
        keeps as many elements as the mask has) differs from seed to seed, and a cached length from
        another seed once made every candidate, eager included, fail on its second seed."""
        anywhere = task.harness_in_call  # where a harness puts its results is its business (see check)
        expected = self.expected_structure(task, shape, dtype_name, pristine)
        problem = structure_problem(outputs, expected, anywhere)
        key = (task.source or task.name, shape.name, dtype_name)
        if problem is None or key in self._data_dependent:
            return problem, expected
        own = _structure_of(task, pristine)
        if own == expected:
            return problem, expected
        self._data_dependent.add(key)
        return structure_problem(outputs, own, anywhere), own

    def check(self, task: Task, shape: Shape, dtype_name: str, seed: int, outputs: tuple,
              inputs_after: tuple | None = None,
              run_candidate: Callable[..., tuple] | None = None, constant: bool = False,
              laps: Laps | None = None) -> Judgement:
        """``constant``: also say whether the reference's answer is one value (:func:`constant_answer`),
        which only the correctness seeds ask: it costs a reduction and a read per output. ``laps``: the
        clock the check's parts go on (one is started here without it)."""
        laps = laps or Laps(self.device)
        pristine = self.pristine(task, shape, dtype_name, seed)
        laps.lap("inputs")
        if inputs_after is not None:
            if len(inputs_after) != len(pristine):
                return Judgement(False,
                                 f"the worker handed back {len(inputs_after)} inputs, the task has {len(pristine)}")
            for i, (after, clean) in enumerate(zip(inputs_after, pristine)):
                if isinstance(clean, torch.Tensor) and not (isinstance(after, torch.Tensor)
                                                            and same(after.to(clean.device), clean)):
                    return Judgement(False, f"candidate modified input[{i}]", seconds=laps.seconds)
        laps.lap("mutation")
        problem, expected = self.structure_problem(task, shape, dtype_name, pristine, outputs)
        laps.lap("structure")
        if problem:
            return Judgement(False, problem, seconds=laps.seconds)
        warning = ""
        if task.harness_in_call:
            # An imported harness collects results inside the call, wherever it likes (KernelBench-X
            # moves the reference's to the host): its outputs are compared by value, as it compares
            # them, on the reference's device. The move is said beside the verdict, not in it.
            warning = device_moved_warning(outputs, expected) or ""
            outputs = tuple(o.to(e[2]) if o.device.type != e[2] else o for o, e in zip(outputs, expected))
        contract = task.contract
        cache: dict = {}

        def reference(_p=pristine, _c=cache):
            if "ref" not in _c:
                laps.lap("compare")
                _c["ref"], _c["note"] = self._reference(task, _p, contract.reference_precision, dtype_name)
                laps.lap("reference")
            return _c["ref"]

        def candidate(*args):
            if run_candidate is None:
                raise CandidateCallFailed("this contract re-runs the candidate, which is not reachable here")
            return run_candidate(*args)

        ctx = CheckContext(dtype=DTYPES[dtype_name], inputs=pristine, outputs=outputs, reference=reference,
                           candidate=candidate, make_inputs=lambda s: generate(task, shape, dtype_name, s, self.device))
        try:
            res: CheckResult = contract.check(ctx)
        except CandidateCallFailed as exc:
            return Judgement(False, f"re-running the candidate for the contract failed: {exc}", seconds=laps.seconds)
        said = constant_answer(cache["ref"]) if constant and "ref" in cache else ""
        laps.lap("compare")  # synchronised: the contract's device work is in it
        return Judgement(bool(res.ok), res.message, res.max_abs_err, res.max_rel_err, cache.get("note", ""), warning,
                         said, seconds=laps.seconds)

    def _reference(self, task: Task, pristine: tuple, precision: torch.dtype | None,
                   dtype_name: str) -> tuple[tuple, str]:
        """The reference's outputs at the contract's precision, or at the task's own dtype when the
        reference cannot run there (imported models keep plain float32 tensors that ``.to(float64)``
        does not convert, e.g. KernelBench's RNN hidden states; a float64 copy of a large model's
        activations may not fit): then as KernelBench computes it, and the judgement says so."""
        with torch.no_grad():
            try:
                return normalize(task.reference(*upcast(pristine, precision))), ""
            except Exception as exc:
                if precision is None or precision == DTYPES[dtype_name]:
                    raise
                reason = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
            if self.device == "cuda":
                torch.cuda.empty_cache()
            out = normalize(task.reference(*clone_args(pristine)))
        return out, f"reference computed at {dtype_name}: at {str(precision).removeprefix('torch.')} it raised {reason}"


_export_pool = None  # torch.cuda.MemPool of the judge's copies for a worker (copies_for_worker)


def copies_for_worker(args: tuple, device: str) -> tuple:
    """Copies of ``args`` for a worker to map (a contract's re-run of the candidate). A CUDA IPC handle
    maps the whole allocation its tensor lies in, and torch's allocator packs small tensors into shared
    2 MiB (and 1-10 MiB ones into 20 MiB) allocations: a copy made beside the judge's own pristine inputs
    and references would hand the candidate's process a writable window onto them. On a GPU the copies
    are made in a memory pool of their own, whose allocations hold nothing else; :func:`forget_export_pool`
    gives its memory back with the unit's."""
    global _export_pool
    if device != "cuda":
        return clone_args(args)
    if _export_pool is None:
        _export_pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(_export_pool):
        return clone_args(args)


def forget_export_pool() -> None:
    global _export_pool
    _export_pool = None


def constant_answer(outputs: tuple) -> str:
    """``"0"`` (say) where every element of every output is that one value, else ``""``. An imported task
    can compute nothing its answer depends on: KernelBench's level-2 problem 83 takes a minimum with 0
    and clamps to [0, 1], so its answer is all zeros whatever the input, and a candidate that returns
    zeros without the convolution is right and faster than the convolution's roofline floor allows."""
    values = set()
    for o in outputs:
        if not isinstance(o, torch.Tensor) or o.numel() < 2 or o.is_complex():
            return ""
        low, high = torch.aminmax(o.detach().reshape(-1).to(torch.float64) if o.dtype == torch.bool else o.detach())
        low, high = torch.stack([low, high]).tolist()  # one read back from the device, not two
        if not low == high:  # NaN never equals itself: not constant
            return ""
        values.add(repr(low))
    return ", ".join(sorted(values))


def _structure_of(task: Task, pristine: tuple) -> tuple:
    if task.stateful_reference and task.source:
        # probed on a copy: a call of the judge's own copy would put its state one call ahead of
        # the candidate's (where the contract's reference runs at the task's dtype, on the same model)
        task = load_task_file(task.source, fresh=True)
    with torch.no_grad():
        out = normalize(task.reference(*clone_args(pristine)))
    return tuple((tuple(o.shape), o.dtype, o.device.type) for o in out)


def output_digest(outputs: tuple) -> str:
    """The outputs' shapes, dtypes and bytes (:func:`mkbench.transfer.tensor_digest`) in one string:
    the same answer given twice, bit for bit, gives the same string."""
    from .transfer import tensor_digest
    return ";".join(f"{tuple(o.shape)}:{o.dtype}:{tensor_digest(o.detach().contiguous().cpu())}" for o in outputs)


def device_moved_warning(outputs: tuple, expected: tuple) -> str | None:
    """For a task whose harness collects its results in the call (``Task.harness_in_call``): which
    outputs came back on another device type than the reference's (``expected``: (shape, dtype,
    device type) per output), or None. Not a problem (the harness may put them anywhere, and they
    are compared by value on the reference's device), but worth seeing on the row: a candidate that
    hands back host tensors where the reference's are on the GPU pays a copy inside its timed call."""
    moved = [f"output[{i}] on {o.device.type}, the reference's on {e[2]}"
             for i, (o, e) in enumerate(zip(outputs, expected)) if o.device.type != e[2]]
    if not moved:
        return None
    return "; ".join(moved) + ": moved to the reference's device and compared by value"


def structure_problem(out: tuple, expected: tuple, any_device: bool = False) -> str | None:
    """What the judge can see of an output's structure against the reference's (shape, dtype, device
    type) per output: count, type, shape, dtype, and device type unless ``any_device``. (Whether an
    output aliases an input's storage is visible only where both live: the worker reports that.)"""
    if len(out) != len(expected):
        return f"returned {len(out)} outputs, expected {len(expected)}"
    for i, (o, (shape, dtype, device)) in enumerate(zip(out, expected)):
        if type(o) is not torch.Tensor:
            return f"output[{i}] is {type(o).__name__}, expected a plain torch.Tensor"
        if tuple(o.shape) != shape:
            return f"output[{i}] has shape {tuple(o.shape)}, expected {shape}"
        if o.dtype != dtype:
            return f"output[{i}] has dtype {o.dtype}, expected {dtype}"
        if o.device.type != device and not any_device:
            return f"output[{i}] is on {o.device.type}, expected {device}"
    return None


# --- the judge process ---------------------------------------------------------------------------

def peak_reserved(reset: bool) -> int | None:
    """The most device memory torch's caching allocator has held in this process since it started, or
    since the last reset (``reset`` starts the next count); None where no CUDA context was made (the
    CPU, or a worker that never used the device). CUDA contexts are not included."""
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        return None
    peak = int(torch.cuda.max_memory_reserved())
    if reset:
        torch.cuda.reset_peak_memory_stats()
    return peak


def serve(conn, env: dict[str, str], device: str) -> None:
    """The judge process: answer ``check`` requests from the orchestrator until ``stop`` or EOF.

    Requests and answers are plain data (:mod:`mkbench.wire`); tensors arrive as descriptors. A
    contract's re-run of the candidate is sent up as ``{"kind": "call", "args": [...]}`` and
    answered with ``call_result`` (descriptors of the outputs) or ``call_failed``.
    """
    os.environ.update(env)
    from . import procguard, transfer, wire
    procguard.detach_and_guard()
    if device == "cuda":
        from .timing import wait_untimed
        wait_untimed()  # never timed: with --untimed-wait block its waits for the device leave the core free
        torch.cuda.set_device(0)
        use_ieee_float32()
    judge = Judge(device)
    last: tuple | None = None  # the (task, shape, dtype) of the last check
    tasks: dict[str, Task] = {}
    owners: dict[str, Any] = {}  # a stateful task's file -> the unit its copy's state belongs to

    def task_for(req: dict) -> Task:
        path = req["task"]
        task = tasks.get(path) or tasks.setdefault(path, load_task_file(path))
        if task.stateful_reference and (path not in owners or owners[path] != req.get("unit")):
            # A lane's judge serves unit after unit, and each unit's worker builds its model anew:
            # the reference starts from its initial state for each unit too, or an honest candidate
            # is judged against a state that earlier units' checks moved on.
            task = tasks[path] = load_task_file(path, fresh=True)
            owners[path] = req.get("unit")
        return task

    while True:
        try:
            req = wire.recv(conn)
        except (EOFError, wire.WireError):
            break
        if req.get("op") == "stop":
            break
        if req.get("op") == "release":
            # The unit is done and gives its memory budget back: what this judge keeps (inputs, the
            # allocator's cache) must go with it, or the lanes' judges hold memory no budget counts.
            judge.release()
            # its peak since the last release: this unit's (or, for a unit that left its lane to be
            # timed, its part on this lane), for the engine's memory plan (mkbench analyze engine)
            wire.send(conn, {"kind": "released", "peak_bytes": peak_reserved(reset=True)})
            continue
        try:
            if req.get("op") == "repeats":
                task = load_task_file(req["task"])
                wire.send(conn, {"kind": "repeated", **judge.repeats(task, task.shape(req["shape"]), req["dtype"],
                                                                      int(req["seed"]))})
                continue
            if req.get("op") == "digest":
                try:
                    digests = [output_digest(transfer.materialize_all(o, device)) for o in req["outputs"]]
                except (ValueError, TypeError) as exc:
                    wire.send(conn, {"kind": "digested", "digests": None, "message": str(exc)})
                    continue
                wire.send(conn, {"kind": "digested", "digests": digests})
                continue
            task = task_for(req)
            shape = task.shape(req["shape"])
            laps = Laps(device)
            combination = (req["task"], req["shape"], req["dtype"])
            if device == "cuda" and combination != last and torch.cuda.memory_reserved() > KEEP_RESERVED_BYTES:
                # A judge lives as long as its lane: what its allocator keeps after a float64 reference of
                # a large shape would add up over the lanes (8 judges held 7-12 GiB each on an H100), and
                # blocks of another size mostly go unused. Emptied after every check instead, the same
                # blocks were asked of the driver again at the next check of the same combination, while
                # other lanes' processes waited on it too: on an H100 main job, 0.7 s per candidate unit
                # emptying and 3.7 s importing outputs (reports/2026-11-28-calls/call10-h100).
                torch.cuda.empty_cache()
                laps.lap("free")
            last = combination
            try:
                outputs = transfer.materialize_all(req["outputs"], device, laps.lap)
                after = transfer.materialize_all(req["inputs_after"], device, laps.lap) \
                    if req.get("inputs_after") is not None else None
            except (ValueError, TypeError) as exc:
                wire.send(conn,
                          {"kind": "judged",
                           **Judgement(False, f"the worker's outputs could not be read: {exc}").as_dict()})
                continue
            laps.lap("import")

            def run_candidate(*args, _device=device):
                held = copies_for_worker(args, _device)  # the worker maps these: copies, so it cannot touch ours
                wire.send(conn, {"kind": "call", "args": transfer.export_all(held)})
                answer = wire.recv(conn)
                if answer.get("kind") != "call_result":
                    raise CandidateCallFailed(str(answer.get("message", "no result")))
                try:
                    return transfer.materialize_all(answer["outputs"], _device)
                except (ValueError, TypeError) as exc:
                    raise CandidateCallFailed(f"its outputs could not be read: {exc}") from None

            verdict = judge.check(task, shape, req["dtype"], int(req["seed"]), outputs, after, run_candidate,
                                  constant=bool(req.get("constant")), laps=laps)
            digest = output_digest(outputs) if req.get("digest") else None
            laps.lap("compare")
            del outputs, after
            verdict.seconds = laps.seconds
            wire.send(conn, {"kind": "judged", **verdict.as_dict(), **({"digest": digest} if digest else {})})
        except (EOFError, OSError):
            break
        except Exception as exc:  # the harness's own failure (a task file, memory): the unit says so
            import traceback
            wire.send(conn,
                      {"kind": "judge_error",
                       "message": f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}"})
    conn.close()
    os._exit(0)


def check_callable(task: Task, fn: Callable[..., Any], shape: Shape, dtype_name: str, seeds: int, run_seed: int,
                   device: str = "cpu") -> Judgement:
    """Judge an in-process callable over ``seeds`` seeds, as a lane does for a candidate in its worker:
    ``mkbench validate`` uses it for references and negative controls, which need no isolation."""
    from .inputs import seed_for
    judge = Judge(device)
    worst = Judgement(True, "", 0.0, 0.0)
    for k in range(seeds):
        seed = seed_for(run_seed, task.name, shape.name, dtype_name, k)
        inputs = generate(task, shape, dtype_name, seed, device)
        with torch.no_grad():
            out = normalize(fn(*inputs))
        problem = alias_problem(out, inputs)
        if problem:
            return Judgement(False, f"seed {k}: {problem}")
        res = judge.check(task, shape, dtype_name, seed, out, inputs, lambda *a: normalize(fn(*a)))
        if not res.ok:
            return Judgement(False, f"seed {k}: {res.message}", res.max_abs_err, res.max_rel_err)
        worst = Judgement(True, "", max(worst.max_abs_err or 0.0, res.max_abs_err or 0.0),
                          max(worst.max_rel_err or 0.0, res.max_rel_err or 0.0))
    return worst


def alias_problem(out: tuple, inputs: tuple) -> str | None:
    """An output that is not a plain tensor, or shares an input's storage (visible only in the process
    holding both)."""
    ptrs = {v.untyped_storage().data_ptr() for v in inputs if isinstance(v, torch.Tensor) and v.numel()}
    for i, o in enumerate(out):
        if type(o) is not torch.Tensor:
            return f"output[{i}] is {type(o).__name__}, expected a plain torch.Tensor"
        if o.numel() and o.untyped_storage().data_ptr() in ptrs:
            return f"output[{i}] aliases an input's storage"
    return None
