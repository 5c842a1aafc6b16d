"""Results from several stores and runs, merged without losing where each row came from.

Each run keeps its own environment and machine record. Rows are tagged with the store they came
from, the run, the hardware profile and the device name, so results measured on different
profiles are never pooled silently: every rate is grouped by hardware, and comparisons across
hardware happen only in the cross-hardware analysis, by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import BadInput
from ..store import Store
from ..store_digest import Integrity


@dataclass
class RunInfo:
    key: str  # "<store label>#<run id>", unique across the merged stores
    store: str
    run_id: int
    hw: str
    backend: str
    method: str
    status: str
    started: str
    finished: str | None
    device_name: str
    env: dict[str, Any]
    machine: dict[str, Any]
    seed: int | None = None
    config: dict[str, Any] = field(default_factory=dict)  # the run's configuration as stored


@dataclass
class ResultSet:
    runs: list[RunInfo]
    rows: pd.DataFrame  # one row per (run, task, shape, dtype, backend, method)
    notes: list[str] = field(default_factory=list)
    integrity: list[Integrity] = field(default_factory=list)  # per store: what verifying its digests found

    def only_tasks(self, names: list[str]) -> "ResultSet":
        """The same runs, with rows of these tasks only (a run's other tasks drop out of every rate)."""
        if not len(self.rows):
            return self
        unknown = sorted(set(names) - set(self.rows["task"]))
        if unknown:
            raise BadInput(f"no results for task(s) {', '.join(unknown)} in the selected runs")
        kept = self.rows[self.rows["task"].isin(names)].reset_index(drop=True)
        notes = [f"restricted to {len(names)} task(s): {', '.join(sorted(names))}"]
        for run in self.runs:
            absent = sorted(set(names) - set(kept.loc[kept["run_key"] == run.key, "task"]))
            if absent:  # said, because the run's rates then stand on fewer tasks than the others'
                notes.append(f"run {run.key} ({run.status}) has no results for {', '.join(absent)}")
        return ResultSet(self.runs, kept, self.notes + notes, self.integrity)

    @property
    def hardware(self) -> list[str]:
        return sorted(self.rows["hw"].unique()) if len(self.rows) else []

    def failed_baselines(self) -> dict[tuple[str, str], list[str]]:
        """(hardware, task) -> the baselines (eager, torch.compile) whose answer the task's contract
        rejected there on some shape and dtype. PyTorch's own float32 can fail a contract written
        against a float64 reference (a deep model's accumulated rounding, dropout in training mode,
        an output of rounding noise): there a candidate's ``incorrect`` says nothing of it."""
        if not len(self.rows):
            return {}
        rows = self.rows
        bad = rows[rows["is_baseline"].astype(bool) & (rows["verdict"] == "incorrect")]
        out: dict[tuple[str, str], list[str]] = {}
        for (hw, task), g in bad.groupby(["hw", "task"], sort=True):
            out[(hw, task)] = sorted(g["method"].unique())
        return out


def _label(path: Path, used: set[str]) -> str:
    label = path.parent.name if path.stem in ("results", "mkbench") else path.stem
    base, n = label, 2
    while label in used:
        label, n = f"{base}-{n}", n + 1
    used.add(label)
    return label


def load_results(stores: list[Path], run_ids: dict[int, list[int]] | list[int] | None = None,
                 include_interrupted: bool = True) -> ResultSet:
    """Rows of every run in ``stores``, or of the runs ``run_ids`` names: a list (one store), or a
    map from a store's position in ``stores`` to its run ids (stores not in the map: every run)."""
    if not stores:
        raise BadInput("no results store given")
    if isinstance(run_ids, list):
        if len(stores) > 1:
            raise BadInput("a list of run ids selects runs of a single store")
        run_ids = {0: run_ids}
    run_ids = run_ids or {}
    runs: list[RunInfo] = []
    frames, integrity = [], []
    used: set[str] = set()
    for position, path in enumerate(stores):
        path = Path(path)
        if not path.exists():
            raise BadInput(f"no results store at {path}")
        store = Store(path)
        try:
            label = _label(path, used)
            wanted = run_ids.get(position)
            records = [store.run(r) for r in wanted] if wanted else store.runs()
            integrity.append(store.integrity([rec.id for rec in records]))
            for rec in records:
                if rec.status != "finished" and not include_interrupted:
                    continue
                key = f"{label}#{rec.id}"
                runs.append(RunInfo(key, str(path), rec.id, rec.hw, rec.backend, rec.method, rec.status, rec.started,
                                    rec.finished, str(rec.machine.get("device_name") or rec.machine.get("cpu") or "?"),
                                    rec.env, rec.machine, rec.seed, rec.config or {}))
                rows = store.results([rec.id])
                if rows:
                    df = pd.DataFrame(rows)
                    df["run_key"] = key
                    df["hw"] = rec.hw
                    df["device_name"] = runs[-1].device_name
                    frames.append(df)
        finally:
            store.close()
    if not runs:
        raise BadInput("the given stores hold no runs")
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    notes = []
    for hw in sorted({r.hw for r in runs}):
        devices = sorted({r.device_name for r in runs if r.hw == hw})
        if len(devices) > 1:
            notes.append(f"profile {hw} was measured on several devices: {', '.join(devices)}")
    return ResultSet(runs, rows, notes, integrity)
