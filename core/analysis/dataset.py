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


@dataclass
class ResultSet:
    runs: list[RunInfo]
    rows: pd.DataFrame  # one row per (run, task, shape, dtype, backend, method)
    notes: list[str] = field(default_factory=list)

    @property
    def hardware(self) -> list[str]:
        return sorted(self.rows["hw"].unique()) if len(self.rows) else []


def _label(path: Path, used: set[str]) -> str:
    label = path.parent.name if path.stem in ("results", "mkbench") else path.stem
    base, n = label, 2
    while label in used:
        label, n = f"{base}-{n}", n + 1
    used.add(label)
    return label


def load_results(stores: list[Path], run_ids: list[int] | None = None, include_interrupted: bool = True) -> ResultSet:
    """Rows of every run in ``stores`` (or of ``run_ids``, only with a single store)."""
    if not stores:
        raise BadInput("no results store given")
    if run_ids and len(stores) > 1:
        raise BadInput("--run selects runs of a single store; give one --store or none of --run")
    runs: list[RunInfo] = []
    frames = []
    used: set[str] = set()
    for path in stores:
        path = Path(path)
        if not path.exists():
            raise BadInput(f"no results store at {path}")
        store = Store(path)
        try:
            label = _label(path, used)
            records = [store.run(r) for r in run_ids] if run_ids else store.runs()
            for rec in records:
                if rec.status != "finished" and not include_interrupted:
                    continue
                key = f"{label}#{rec.id}"
                runs.append(RunInfo(key, str(path), rec.id, rec.hw, rec.backend, rec.method, rec.status, rec.started,
                                    rec.finished, str(rec.machine.get("device_name") or rec.machine.get("cpu") or "?"),
                                    rec.env, rec.machine, rec.seed))
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
    return ResultSet(runs, rows, notes)
