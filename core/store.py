"""Results store: one SQLite file, schema-versioned, committed after every unit of work so that an
interrupted run loses at most the unit in flight. Machine facts are stored apart from run records
(as asv does): a run points at its machine row."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from .errors import BadInput

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS machines (
    id INTEGER PRIMARY KEY, fingerprint TEXT UNIQUE NOT NULL, info TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    started TEXT NOT NULL, finished TEXT, status TEXT NOT NULL,
    config_key TEXT NOT NULL, config TEXT NOT NULL,
    hw TEXT NOT NULL, backend TEXT NOT NULL, method TEXT NOT NULL,
    machine_id INTEGER REFERENCES machines(id), env TEXT NOT NULL, seed INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS units (
    run_id INTEGER NOT NULL REFERENCES runs(id), task TEXT NOT NULL, backend TEXT NOT NULL,
    method TEXT NOT NULL, finished TEXT NOT NULL,
    PRIMARY KEY (run_id, task, backend, method));
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    task TEXT NOT NULL, category TEXT NOT NULL, shape TEXT NOT NULL, shape_role TEXT NOT NULL,
    dtype TEXT NOT NULL, backend TEXT NOT NULL, method TEXT NOT NULL, is_baseline INTEGER NOT NULL,
    source_path TEXT, source_hash TEXT,
    verdict TEXT NOT NULL,
    compile_status TEXT NOT NULL, correct_status TEXT NOT NULL, perf_status TEXT NOT NULL,
    error TEXT,
    max_abs_err REAL, max_rel_err REAL,
    time_median_us REAL, time_iqr_us REAL, time_mean_us REAL, time_stderr_us REAL, time_min_us REAL,
    time_n INTEGER, timer TEXT, interpreted INTEGER,
    speedup_eager REAL, speedup_compile REAL,
    flops REAL, bytes REAL,
    extra TEXT,
    created TEXT NOT NULL,
    UNIQUE (run_id, task, shape, dtype, backend, method));
CREATE INDEX IF NOT EXISTS results_by_run ON results(run_id, task);
"""

RESULT_COLUMNS = (
    "run_id", "task", "category", "shape", "shape_role", "dtype", "backend", "method", "is_baseline",
    "source_path", "source_hash", "verdict", "compile_status", "correct_status", "perf_status", "error",
    "max_abs_err", "max_rel_err", "time_median_us", "time_iqr_us", "time_mean_us", "time_stderr_us",
    "time_min_us", "time_n", "timer", "interpreted", "speedup_eager", "speedup_compile", "flops", "bytes",
    "extra", "created",
)


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass
class RunRecord:
    id: int
    started: str
    finished: str | None
    status: str
    config_key: str
    config: dict
    hw: str
    backend: str
    method: str
    env: dict
    seed: int
    machine: dict


class Store:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        existed = self.path.exists() and self.path.stat().st_size > 0
        if self.path.exists() and self.path.is_dir():
            raise BadInput(f"results store {self.path} is a directory")
        try:
            self.db = sqlite3.connect(self.path, timeout=30)
            self.db.row_factory = sqlite3.Row
            if existed:
                self._check_existing()
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.executescript(_SCHEMA)
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            self.db.commit()
        except sqlite3.DatabaseError as exc:
            raise BadInput(f"results store {self.path} is not a usable mkbench store ({exc}); it was left untouched: "
                           "move it aside or pass --store with another path") from None

    def _check_existing(self) -> None:
        check = self.db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise sqlite3.DatabaseError(f"integrity check: {check}")
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "meta" not in tables:
            raise sqlite3.DatabaseError("no mkbench meta table")
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None or int(row[0]) != SCHEMA_VERSION:
            found = row[0] if row else "none"
            raise sqlite3.DatabaseError(f"schema version {found}, this mkbench reads {SCHEMA_VERSION}")

    def close(self) -> None:
        self.db.close()

    # --- runs ------------------------------------------------------------------------
    def machine_id(self, info: dict) -> int:
        fp = hashlib.sha256(json.dumps(info, sort_keys=True).encode()).hexdigest()[:16]
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO machines (fingerprint, info) VALUES (?, ?)", (fp, json.dumps(info, sort_keys=True)))
        return self.db.execute("SELECT id FROM machines WHERE fingerprint=?", (fp,)).fetchone()[0]

    def start_run(self, config_key: str, config: dict, hw: str, backend: str, method: str,
                  machine: dict, env: dict, seed: int) -> int:
        mid = self.machine_id(machine)
        with self.db:
            cur = self.db.execute(
                "INSERT INTO runs (started, status, config_key, config, hw, backend, method, machine_id, env, seed)"
                " VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
                (now(), config_key, json.dumps(config, sort_keys=True), hw, backend, method, mid, json.dumps(env, sort_keys=True), seed))
        return cur.lastrowid

    def set_run_status(self, run_id: int, status: str, env_update: dict | None = None) -> None:
        with self.db:
            if env_update:
                env = json.loads(self.db.execute("SELECT env FROM runs WHERE id=?", (run_id,)).fetchone()[0])
                env.update(env_update)
                self.db.execute("UPDATE runs SET env=? WHERE id=?", (json.dumps(env, sort_keys=True), run_id))
            finished = now() if status != "running" else None
            self.db.execute("UPDATE runs SET status=?, finished=? WHERE id=?", (status, finished, run_id))

    def _run(self, row: sqlite3.Row) -> RunRecord:
        m = self.db.execute("SELECT info FROM machines WHERE id=?", (row["machine_id"],)).fetchone()
        return RunRecord(row["id"], row["started"], row["finished"], row["status"], row["config_key"],
                         json.loads(row["config"]), row["hw"], row["backend"], row["method"],
                         json.loads(row["env"]), row["seed"], json.loads(m[0]) if m else {})

    def run(self, run_id: int) -> RunRecord:
        row = self.db.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None:
            raise BadInput(f"no run {run_id} in {self.path}")
        return self._run(row)

    def runs(self) -> list[RunRecord]:
        return [self._run(r) for r in self.db.execute("SELECT * FROM runs ORDER BY id")]

    def resumable_run(self, config_key: str) -> RunRecord | None:
        row = self.db.execute(
            "SELECT * FROM runs WHERE config_key=? AND status IN ('running', 'interrupted') ORDER BY id DESC LIMIT 1",
            (config_key,)).fetchone()
        return self._run(row) if row else None

    def latest_run(self, config_key: str) -> RunRecord | None:
        row = self.db.execute("SELECT * FROM runs WHERE config_key=? ORDER BY id DESC LIMIT 1", (config_key,)).fetchone()
        return self._run(row) if row else None

    # --- units and results -------------------------------------------------------------
    def finished_units(self, run_id: int) -> set[tuple[str, str, str]]:
        return {(r[0], r[1], r[2]) for r in self.db.execute("SELECT task, backend, method FROM units WHERE run_id=?", (run_id,))}

    def record_unit(self, run_id: int, task: str, backend: str, method: str, rows: Iterable[dict]) -> None:
        """Write a unit's result rows and its completion marker in one transaction."""
        stamp = now()
        with self.db:
            for row in rows:
                values = dict(row, run_id=run_id, created=stamp)
                values["extra"] = json.dumps(values.get("extra") or {}, sort_keys=True)
                cols = [c for c in RESULT_COLUMNS if c in values]
                self.db.execute(
                    f"INSERT INTO results ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                    [values[c] for c in cols])
            self.db.execute("INSERT INTO units VALUES (?, ?, ?, ?, ?)", (run_id, task, backend, method, stamp))

    def baseline_times(self, run_id: int, task: str) -> dict[tuple[str, str, str], float]:
        """(method, shape, dtype) -> median microseconds of correct, non-interpreted baselines."""
        rows = self.db.execute(
            "SELECT method, shape, dtype, time_median_us FROM results WHERE run_id=? AND task=? AND is_baseline=1"
            " AND verdict='correct' AND time_median_us IS NOT NULL AND interpreted=0", (run_id, task))
        return {(r[0], r[1], r[2]): r[3] for r in rows}

    def results(self, run_ids: Iterable[int] | None = None) -> list[dict[str, Any]]:
        if run_ids is None:
            rows = self.db.execute("SELECT * FROM results ORDER BY run_id, category, task, backend, method, shape, dtype")
        else:
            ids = list(run_ids)
            rows = self.db.execute(
                f"SELECT * FROM results WHERE run_id IN ({', '.join('?' * len(ids))}) ORDER BY run_id, category, task, backend, method, shape, dtype", ids)
        out = []
        for r in rows:
            d = dict(r)
            d["extra"] = json.loads(d["extra"] or "{}")
            out.append(d)
        return out
