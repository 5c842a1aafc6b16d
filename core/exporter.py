"""Results out of a store as files: one JSON document (``mkbench run --json``, ``mkbench report
--format json``), JSON Lines or CSV rows (``mkbench export``). One exporter, so the three agree:
every row is the store's row (read through ``Store.results()``, so new columns come along
without code here) plus its run's environment, and every run is described the same way. Every row
carries ``integrity`` (``verified``, ``unverified``, ``tampered``: :mod:`mkbench.store_digest`); a
tampered row's ``verdict`` is ``tampered``, its stored one under ``stored_verdict``.

* :func:`json_document`: ``{"schema_version", "integrity", "runs": [run record...], "results": [row...]}``;
* :func:`write_jsonl`: one row per line, each with ``schema_version`` and its run's record under
  ``run`` (ready for ``pandas.read_json(lines=True)``);
* :func:`write_csv`: one row per line, the environment flattened into columns
  (:func:`environment_columns`) plus ``run_environment_json``; ``extra`` as JSON.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Iterable, Mapping, TextIO

from .store import SCHEMA_VERSION, RunRecord, Store

#: row columns ``mkbench export`` can filter on
ROW_FILTERS = ("task", "category", "backend", "method", "verdict", "dtype")


def run_record(run: RunRecord) -> dict[str, Any]:
    """Everything the store knows about a run, as exported."""
    return {"id": run.id, "started": run.started, "finished": run.finished, "status": run.status, "hw": run.hw,
            "backend": run.backend, "method": run.method, "config": run.config, "seed": run.seed,
            "environment": run.env, "machine": run.machine}


def environment_columns(run: RunRecord) -> dict[str, Any]:
    """The facts about a run's environment that a flat table needs next to each row."""
    env, machine = run.env, run.machine
    pk = env.get("packages", {})
    return {
        "run_hw": run.hw, "run_started": run.started, "run_status": run.status, "run_seed": run.seed,
        "device_name": machine.get("device_name"), "driver": machine.get("driver"), "hostname": machine.get("hostname"),
        "torch": pk.get("torch"), "triton": pk.get("triton"), "python": env.get("python"),
        "mkbench_revision": env.get("git_revision"), "mkbench_source_digest": env.get("source_digest"),
    }


def select_rows(store: Store, run_ids: Iterable[int] | None = None, *, hw: Iterable[str] = (),
                filters: Mapping[str, Iterable[str]] | None = None,
                baselines: bool = True) -> tuple[list[dict[str, Any]], dict[int, RunRecord]]:
    """(rows, runs by id): the rows of the given runs (default: every run), of runs on the given
    hardware profiles only, with every ``filters`` column among its listed values, baselines
    included unless ``baselines`` is False."""
    runs = [store.run(r) for r in run_ids] if run_ids else store.runs()
    hw = set(hw)
    by_id = {r.id: r for r in runs if not hw or r.hw in hw}
    wanted = {k: set(v) for k, v in (filters or {}).items() if v}
    rows = []
    for row in store.results(list(by_id)) if by_id else []:
        if not baselines and row["is_baseline"]:
            continue
        if any(row.get(column) not in values for column, values in wanted.items()):
            continue
        rows.append(row)
    return rows, by_id


def json_document(store: Store, run_ids: list[int]) -> dict[str, Any]:
    rows, runs = select_rows(store, run_ids)
    return {"schema_version": SCHEMA_VERSION, "integrity": store.integrity(run_ids).as_dict(),
            "runs": [run_record(runs[r]) for r in run_ids], "results": rows}


def write_json(store: Store, run_ids: list[int], path: Path) -> None:
    """The runs and their rows as one JSON document (what ``mkbench run --json`` writes)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(json_document(store, run_ids), indent=1, sort_keys=True, default=str))


def write_jsonl(rows: list[dict[str, Any]], runs: Mapping[int, RunRecord], out: TextIO) -> None:
    for row in rows:
        run = runs[row["run_id"]]
        record = dict(row, **environment_columns(run), schema_version=SCHEMA_VERSION, run=run_record(run))
        out.write(json.dumps(record, sort_keys=True, default=str) + "\n")


def write_csv(rows: list[dict[str, Any]], runs: Mapping[int, RunRecord], out: TextIO) -> None:
    if not rows:
        return
    flat = []
    for row in rows:
        run = runs[row["run_id"]]
        flat.append(dict(row, **environment_columns(run), extra=json.dumps(row["extra"], sort_keys=True),
                         run_environment_json=json.dumps(run_record(run), sort_keys=True, default=str)))
    fields = list(dict.fromkeys(k for r in flat for k in r))  # every column any row has, in first-seen order
    writer = csv.DictWriter(out, fieldnames=fields)
    writer.writeheader()
    writer.writerows(flat)


__all__ = ["ROW_FILTERS", "environment_columns", "json_document", "run_record", "select_rows", "write_csv",
           "write_json",
           "write_jsonl"]
