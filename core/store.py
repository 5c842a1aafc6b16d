"""Results store: one SQLite file, schema-versioned, committed after every unit of work so that an
interrupted run loses at most the unit in flight. Machine facts are stored apart from run records
(as asv does): a run points at its machine row.

A run in progress has one owner (``host:pid``) that renews a heartbeat: a second ``--resume`` refuses
while the owner is alive and takes the run over, atomically, once it is dead. Baseline results are
cached across runs (``baseline_cache``), keyed by the task's source, the shape, the dtype and the
environment they were measured in, so ten methods evaluated against eager time eager once.

Every row the orchestrator writes carries a keyed digest of its content (:mod:`mkbench.store_digest`
says why and where the key is); :meth:`Store.results` and :meth:`Store.integrity` verify them, and a
row changed behind mkbench's back reads as verdict ``tampered``, never as its stored verdict.

Version 1 and 2 stores (before ownership and the cache; before digests) are read as they are and
upgraded in place only when written to: reports over committed stores never modify them. The
upgrade to version 3 seals the rows it finds as ``legacy`` (unverified, but changes after it show).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import socket
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from . import store_digest as sd
from .errors import BadInput
from .metrics import speedup
from .verdicts import Verdict, counts_as_correct

SCHEMA_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
HEARTBEAT_STALE_S = 30.0  # an owner silent this long is presumed dead (other hosts; same host: its pid)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS machines (
    id INTEGER PRIMARY KEY, fingerprint TEXT UNIQUE NOT NULL, info TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    started TEXT NOT NULL, finished TEXT, status TEXT NOT NULL,
    config_key TEXT NOT NULL, config TEXT NOT NULL,
    hw TEXT NOT NULL, backend TEXT NOT NULL, method TEXT NOT NULL,
    machine_id INTEGER REFERENCES machines(id), env TEXT NOT NULL, seed INTEGER NOT NULL,
    owner TEXT, heartbeat REAL, digest TEXT);
CREATE TABLE IF NOT EXISTS units (
    run_id INTEGER NOT NULL REFERENCES runs(id), task TEXT NOT NULL, backend TEXT NOT NULL,
    method TEXT NOT NULL, finished TEXT NOT NULL, digest TEXT,
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
    created TEXT NOT NULL, digest TEXT,
    UNIQUE (run_id, task, shape, dtype, backend, method));
CREATE INDEX IF NOT EXISTS results_by_run ON results(run_id, task);
CREATE TABLE IF NOT EXISTS baseline_cache (
    task TEXT NOT NULL, task_digest TEXT NOT NULL, backend TEXT NOT NULL, shape TEXT NOT NULL, dtype TEXT NOT NULL,
    env_key TEXT NOT NULL, env TEXT NOT NULL, row TEXT NOT NULL, run_id INTEGER NOT NULL, measured TEXT NOT NULL,
    digest TEXT, PRIMARY KEY (task, task_digest, backend, shape, dtype, env_key));
"""
# (table, column) added by the upgrade from each version (tables a version lacked come from _SCHEMA)
_MIGRATIONS = {1: [("runs", "owner TEXT"), ("runs", "heartbeat REAL")],
               2: [(t, "digest TEXT") for t in ("runs", "units", "results", "baseline_cache")]}


class RunOwned(BadInput):
    """A second process asked for a run that a live process owns."""

RESULT_COLUMNS = (
    "run_id", "task", "category", "shape", "shape_role", "dtype", "backend", "method", "is_baseline",
    "source_path", "source_hash", "verdict", "compile_status", "correct_status", "perf_status", "error",
    "max_abs_err", "max_rel_err", "time_median_us", "time_iqr_us", "time_mean_us", "time_stderr_us",
    "time_min_us", "time_n", "timer", "interpreted", "speedup_eager", "speedup_compile", "flops", "bytes",
    "extra", "created",
)
#: the columns each table's digest covers (a run's: with its machine's record, which reports show)
DIGESTED = {
    "results": RESULT_COLUMNS,
    "units": ("run_id", "task", "backend", "method", "finished"),
    "baseline_cache": ("task", "task_digest", "backend", "shape", "dtype", "env_key", "env", "row", "run_id",
                       "measured"),
    "runs": ("id", "started", "finished", "status", "config_key", "config", "hw", "backend", "method", "env", "seed",
             "machine"),
}
_CONTENT = {t: f"SELECT t.rowid AS rowid_, t.* FROM {t} t" for t in DIGESTED}
_CONTENT["runs"] = ("SELECT t.rowid AS rowid_, t.*, m.info AS machine FROM runs t "
                    "LEFT JOIN machines m ON m.id = t.machine_id")


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
    owner: str | None = None
    heartbeat: float | None = None


class Store:
    def __init__(self, path: str | Path, adopt: bool = False):
        """``adopt``: a store whose key is not on this machine is taken over (:meth:`_adopt`), where it
        would be refused at its first write."""
        self.path = Path(path)
        self.adopted_now: str | None = None  # the line saying so, where this process adopted the store
        existed = self.path.exists() and self.path.stat().st_size > 0
        self._key: bytes | None = None  # the signing key, once this process has written
        if self.path.exists() and not self.path.is_file():
            kind = "a directory" if self.path.is_dir() else "not a regular file"
            raise BadInput(f"results store {self.path} is {kind}")
        if not self.path.parent.is_dir():  # sqlite's own word for it is "unable to open database file"
            raise BadInput(f"results store {self.path}: no directory {self.path.parent}")
        try:
            self.db = sqlite3.connect(self.path, timeout=30)
            self.db.row_factory = sqlite3.Row
            self.version = self._check_existing() if existed else None
            if self.version is None:
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.executescript(_SCHEMA)
                self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                self.db.commit()
                self.version = SCHEMA_VERSION  # its key and id come with its first row (_signing_key)
        except sqlite3.DatabaseError as exc:
            raise BadInput(f"results store {self.path} is not a usable mkbench store ({exc}); it was left untouched: "
                           "move it aside or pass --store with another path") from None
        except OSError as exc:
            raise BadInput(f"results store {self.path}: {exc.strerror or exc}") from None
        if adopt and self.version == SCHEMA_VERSION:
            store_id = self._meta(sd.STORE_ID_KEY)
            if store_id is not None and sd.load_key(store_id) is None:
                try:
                    self._adopt(store_id)
                except sqlite3.DatabaseError as exc:
                    raise BadInput(f"results store {self.path} could not be adopted ({exc}); it was left as it "
                                   "was") from None

    def _check_existing(self) -> int:
        check = self.db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":  # SQLite's report spans lines (one per damaged page): the first few, on one line
            found = [line.strip() for line in check.splitlines() if line.strip() and not line.startswith("***")]
            raise sqlite3.DatabaseError(f"integrity check: {'; '.join(found[:3])[:300]}")
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "meta" not in tables:
            raise sqlite3.DatabaseError("no mkbench meta table")
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None or not row[0].isdigit() or int(row[0]) not in READABLE_VERSIONS:
            found = row[0] if row else "none"
            raise sqlite3.DatabaseError(f"schema version {found}, this mkbench reads "
                                        f"{', '.join(map(str, READABLE_VERSIONS))}")
        return int(row[0])

    def _writable(self) -> None:
        """Upgrade an older store before the first write (reads never change the file)."""
        if self.version == SCHEMA_VERSION:
            return
        self.db.executescript(_SCHEMA)  # tables the old version lacked (it commits: nothing else is pending)
        with self.db:
            for version in range(self.version, SCHEMA_VERSION):
                for table, column in _MIGRATIONS[version]:
                    if column.split()[0] not in {r[1] for r in self.db.execute(f"PRAGMA table_info({table})")}:
                        self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
            self.db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
            self.version = SCHEMA_VERSION
            self._seal_legacy("WHERE digest IS NULL")  # rows from before digests: later changes show

    # --- digests (mkbench.store_digest) ------------------------------------------------------
    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def _signing_key(self) -> bytes:
        """The store's key, made (with the store's id) on its first write. A store whose key is on
        another machine is refused (rows written here could not be verified with the others); opened
        with ``adopt``, it has a key of this machine's by now (:meth:`_adopt`)."""
        if self._key is None:
            store_id = self._meta(sd.STORE_ID_KEY)
            if store_id is None:
                made, _ = sd.new_key(self.path)
                self.db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (sd.STORE_ID_KEY, made))
                store_id = self._meta(sd.STORE_ID_KEY)
                if store_id != made:  # another process made the store's key first
                    sd.discard_key(made)
            self._key = sd.load_key(store_id)
            if self._key is None:
                raise BadInput(f"results store {self.path} was written with a key that is not on this machine (store "
                               f"id {store_id}, key directory {sd.key_dir()}): rows written here could not be verified;"
                               " write to another store, set MKBENCH_KEY_DIR to the folder holding its key, or pass "
                               "--adopt-store to continue it here (its rows so far then read as unverified)")
        return self._key

    def _adopt(self, old_id: str) -> bytes:
        """Take over a store whose key is not on this machine (a store carried from a cluster node or a
        lent GPU machine, whose key stayed there): a new key and store id, and every row already in
        the store sealed under it as ``legacy``, as the upgrade to digests seals older rows: unverified
        (nothing here can check what was written before), yet any change after the adoption shows.
        The adoption is recorded in ``meta`` (``adopted``: the earlier ids, when, where)."""
        made, key = sd.new_key(self.path)
        try:
            with self.db:  # one transaction: the new id and every row's seal, or none of them
                taken = self.db.execute("UPDATE meta SET value=? WHERE key=? AND value=?",
                                        (made, sd.STORE_ID_KEY, old_id)).rowcount
                if not taken:  # another process adopted it first: its key, if it is on this machine
                    sd.discard_key(made)
                    self._key = sd.load_key(self._meta(sd.STORE_ID_KEY))
                    return self._key
                self._key = key  # what _seal signs with
                adopted = self.adopted() + [{"store_id": old_id, "at": now(), "host": socket.gethostname()}]
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (sd.ADOPTED_KEY, json.dumps(adopted)))
                sealed = self._seal_legacy()
            self.adopted_now = (f"adopted results store {self.path}: its key (store id {old_id}) is not on this "
                                f"machine; its {sealed} earlier record(s) now read as unverified, later changes show")
        except BaseException:
            self._key = None
            sd.discard_key(made)
            raise
        return key

    def adopted(self) -> list[dict]:
        """The store's adoptions (:meth:`_adopt`), oldest first."""
        try:
            return json.loads(self._meta(sd.ADOPTED_KEY) or "[]")
        except ValueError:
            return [{"store_id": "?", "at": "?", "host": "?"}]

    def _seal_legacy(self, where: str = "") -> int:
        """Seal every record of the digested tables (those ``where`` selects) as ``legacy``: unverified,
        yet any later change shows. How many were sealed."""
        sealed = 0
        for table in DIGESTED:
            for (rowid,) in self.db.execute(f"SELECT rowid FROM {table} {where}").fetchall():
                self._seal(table, rowid, sd.LEGACY)
                sealed += 1
        return sealed

    def _seal(self, table: str, rowid: int, prefix: str = sd.SEALED) -> None:
        """Write the digest of row ``rowid`` of ``table`` as it now reads back."""
        row = self.db.execute(f"{_CONTENT[table]} WHERE t.rowid=?", (rowid,)).fetchone()
        self.db.execute(f"UPDATE {table} SET digest=? WHERE rowid=?",
                        (sd.digest(self._signing_key(), table, row, DIGESTED[table], prefix), rowid))

    def _update_sealed(self, table: str, rowid: int, sql: str, params: Iterable) -> None:
        """Run the UPDATE ``sql`` on a row and seal it again, unless it did not verify before: a row
        changed behind mkbench's back keeps its evidence (mkbench never re-seals what it did not write)."""
        row = self.db.execute(f"{_CONTENT[table]} WHERE t.rowid=?", (rowid,)).fetchone()
        state, _ = self.checker().check(table, row, DIGESTED[table]) if row is not None else ("", None)
        self.db.execute(sql, params)
        if state != "tampered" and row is not None:
            self._seal(table, rowid, sd.LEGACY if state == "unverified" else sd.SEALED)

    def checker(self) -> sd.Checker:
        """What can be verified of this store here (reading never creates a key or writes)."""
        has_digests = self.version >= 3
        if self._key is None and has_digests:
            self._key = sd.load_key(self._meta(sd.STORE_ID_KEY))
        return sd.Checker(has_digests, self._key)

    def integrity(self, run_ids: Iterable[int] | None = None) -> sd.Integrity:
        """The store's integrity for these runs (default every run): rows, units, runs and cached
        baselines that do not verify, named; or the one line saying why nothing can be verified here."""
        checker = self.checker()
        out = sd.Integrity(str(self.path), checker.status, adopted=[a.get("store_id", "?") for a in self.adopted()])
        if checker.key is None:
            return out
        ids = None if run_ids is None else list(run_ids)
        for table, where in (("runs", "id"), ("units", "run_id"), ("results", "run_id"), ("baseline_cache", None)):
            query = _CONTENT[table]
            if ids is not None and where:
                query += f" WHERE t.{where} IN ({', '.join('?' * len(ids))})"
            for row in self.db.execute(query, ids if ids is not None and where else ()):
                state, problem = checker.check(table, row, DIGESTED[table])
                out.count(state)
                if problem:
                    out.problems.append(sd.problem_line(table, row, problem))
        return out

    def close(self) -> None:
        self.db.close()

    # --- runs ------------------------------------------------------------------------
    def machine_id(self, info: dict) -> int:
        self._writable()
        fp = hashlib.sha256(json.dumps(info, sort_keys=True).encode()).hexdigest()[:16]
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO machines (fingerprint, info) VALUES (?, ?)",
                            (fp, json.dumps(info, sort_keys=True)))
        return self.db.execute("SELECT id FROM machines WHERE fingerprint=?", (fp,)).fetchone()[0]

    def start_run(self, config_key: str, config: dict, hw: str, backend: str, method: str,
                  machine: dict, env: dict, seed: int, owner: str | None = None) -> int:
        mid = self.machine_id(machine)
        with self.db:
            cur = self.db.execute(
                "INSERT INTO runs (started, status, config_key, config, hw, backend, method, machine_id, env, seed, "
                "owner, heartbeat)"
                " VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (now(), config_key, json.dumps(config, sort_keys=True), hw, backend, method, mid,
                 json.dumps(env, sort_keys=True),
                 seed, owner, time.time() if owner else None))
            self._seal("runs", cur.lastrowid)
        return cur.lastrowid

    # --- ownership of a running run ----------------------------------------------------------
    def claim_run(self, run_id: int, owner: str) -> None:
        """Take run ``run_id`` for ``owner``: refused (RunOwned) while another owner is alive; taken
        over atomically from a dead one, so two resumes racing for it cannot both win."""
        self._writable()
        self.db.execute("BEGIN IMMEDIATE")
        try:
            row = self.db.execute("SELECT status, owner, heartbeat FROM runs WHERE id=?", (run_id,)).fetchone()
            if row is None:
                raise BadInput(f"no run {run_id} in {self.path}")
            if (row["status"] == "running" and row["owner"] and row["owner"] != owner
                    and owner_alive(row["owner"], row["heartbeat"])):
                age = time.time() - (row["heartbeat"] or 0)
                raise RunOwned(f"run {run_id} is being run by {row['owner']} (heartbeat {age:.0f} s ago); "
                               "wait for it to finish, or stop it and --resume again")
            self._update_sealed("runs", run_id, "UPDATE runs SET status='running', finished=NULL, owner=?, heartbeat=? "
                                "WHERE id=?", (owner, time.time(), run_id))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def heartbeat(self, run_id: int, owner: str) -> None:
        with self.db:
            self.db.execute("UPDATE runs SET heartbeat=? WHERE id=? AND owner=?", (time.time(), run_id, owner))

    def _check_owner(self, run_id: int, owner: str | None) -> None:
        if owner is None:
            return
        row = self.db.execute("SELECT owner FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is not None and row[0] != owner:
            raise RunOwned(f"run {run_id} was taken over by {row[0]}; this process stops writing to it")

    def set_run_status(self, run_id: int, status: str, env_update: dict | None = None) -> None:
        self._writable()
        with self.db:
            if env_update:
                env = json.loads(self.db.execute("SELECT env FROM runs WHERE id=?", (run_id,)).fetchone()[0])
                env.update(env_update)
                self._update_sealed("runs", run_id, "UPDATE runs SET env=? WHERE id=?",
                                    (json.dumps(env, sort_keys=True), run_id))
            finished = now() if status != "running" else None
            self._update_sealed("runs", run_id, "UPDATE runs SET status=?, finished=? WHERE id=?",
                                (status, finished, run_id))

    def _run(self, row: sqlite3.Row) -> RunRecord:
        m = self.db.execute("SELECT info FROM machines WHERE id=?", (row["machine_id"],)).fetchone()
        keys = row.keys()
        return RunRecord(row["id"], row["started"], row["finished"], row["status"], row["config_key"],
                         json.loads(row["config"]), row["hw"], row["backend"], row["method"],
                         json.loads(row["env"]), row["seed"], json.loads(m[0]) if m else {},
                         row["owner"] if "owner" in keys else None, row["heartbeat"] if "heartbeat" in keys else None)

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
        row = self.db.execute("SELECT * FROM runs WHERE config_key=? ORDER BY id DESC LIMIT 1",
                              (config_key,)).fetchone()
        return self._run(row) if row else None

    # --- units and results -------------------------------------------------------------
    def finished_units(self, run_id: int) -> set[tuple[str, str, str]]:
        return {(r[0], r[1], r[2])
                for r in self.db.execute("SELECT task, backend, method FROM units WHERE run_id=?", (run_id,))}

    def record_unit(self, run_id: int, task: str, backend: str, method: str, rows: Iterable[dict],
                    owner: str | None = None) -> None:
        """Write a unit's result rows and its completion marker in one transaction (refused if another
        process has taken the run over)."""
        self._writable()
        stamp = now()
        with self.db:
            self._check_owner(run_id, owner)
            for row in rows:
                values = dict(row, run_id=run_id, created=stamp)
                values["extra"] = json.dumps(values.get("extra") or {}, sort_keys=True)
                cols = [c for c in RESULT_COLUMNS if c in values]
                cur = self.db.execute(
                    f"INSERT INTO results ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                    [values[c] for c in cols])
                self._seal("results", cur.lastrowid)
            cur = self.db.execute("INSERT INTO units (run_id, task, backend, method, finished) VALUES (?, ?, ?, ?, ?)",
                                  (run_id, task, backend, method, stamp))
            self._seal("units", cur.lastrowid)

    def baseline_times(self, run_id: int, task: str) -> dict[tuple[str, str, str], float]:
        """(method, shape, dtype) -> median microseconds of correct, non-interpreted baselines."""
        rows = self.db.execute(
            f"{_CONTENT['results']} WHERE t.run_id=? AND t.task=? AND t.is_baseline=1"
            " AND t.verdict=? AND t.time_median_us IS NOT NULL AND t.interpreted=0",
            (run_id, task, str(Verdict.CORRECT)))
        checker = self.checker()
        return {(r["method"], r["shape"], r["dtype"]): r["time_median_us"] for r in rows
                if checker.check("results", r, DIGESTED["results"])[0] != "tampered"}

    def results(self, run_ids: Iterable[int] | None = None) -> list[dict[str, Any]]:
        """Result rows, each with ``integrity`` (``verified``, ``unverified`` or ``tampered``): a
        tampered row's verdict reads ``tampered``, its stored one is kept as ``stored_verdict`` and
        the problem as ``integrity_problem``."""
        order = " ORDER BY run_id, category, task, backend, method, shape, dtype"
        if run_ids is None:
            rows = self.db.execute("SELECT * FROM results" + order)
        else:
            ids = list(run_ids)
            rows = self.db.execute(f"SELECT * FROM results WHERE run_id IN ({', '.join('?' * len(ids))})" + order, ids)
        checker = self.checker()
        out = []
        for r in rows:
            d = dict(r)
            d["integrity"], problem = checker.check("results", d, RESULT_COLUMNS)
            d.pop("digest", None)
            if problem:
                d.update(stored_verdict=d["verdict"], verdict=str(Verdict.TAMPERED), integrity_problem=problem)
            d["extra"] = json.loads(d["extra"] or "{}")
            out.append(d)
        return out

    # --- speedup columns, computed where baselines and candidates meet ------------------------------
    def update_speedups(self, run_id: int, task: str, overhead_us: float | None = None) -> None:
        """Speedup columns of every non-baseline row of ``task`` in ``run_id`` from the baselines
        recorded so far (units finish in any order), and the overhead-dominated flag. The columns
        stay for the readers of existing stores and exports; what a speedup is, is
        :func:`mkbench.metrics.speedup`'s (the report recomputes them from the medians with it)."""
        base = self.baseline_times(run_id, task)
        with self.db:
            rows = self.db.execute("SELECT id, backend, shape, dtype, is_baseline, time_median_us, interpreted, extra "
                                   "FROM results WHERE run_id=? AND task=?", (run_id, task)).fetchall()
            for r in rows:
                extra = json.loads(r["extra"] or "{}")
                eager = r["time_median_us"] if r["backend"] == "eager" else base.get(("eager", r["shape"], r["dtype"]))
                if eager and overhead_us:
                    extra["overhead_dominated"] = eager < OVERHEAD_FACTOR * overhead_us
                values = {"speedup_eager": None, "speedup_compile": None}
                if not r["is_baseline"] and r["time_median_us"] and not r["interpreted"]:
                    for method, column in (("eager", "speedup_eager"), ("torch_compile", "speedup_compile")):
                        values[column] = speedup(base.get((method, r["shape"], r["dtype"])), r["time_median_us"])
                if r["is_baseline"]:
                    values = {}
                sets = ", ".join(f"{k}=?" for k in values) + (", " if values else "") + "extra=?"
                self._update_sealed("results", r["id"], f"UPDATE results SET {sets} WHERE id=?",
                                    [*values.values(), json.dumps(extra, sort_keys=True), r["id"]])

    # --- the baseline cache ----------------------------------------------------------------------
    def cached_baseline(self, task: str, task_digest: str, backend: str, combos: list[tuple[str, str]],
                        env_key: str) -> list[dict] | None:
        """The cached rows of a baseline on every one of ``combos``, or None if any is missing."""
        if self.version != SCHEMA_VERSION:
            return None
        out, checker = [], self.checker()
        for shape, dtype in combos:
            row = self.db.execute(f"{_CONTENT['baseline_cache']} WHERE t.task=? AND t.task_digest=? "
                                  "AND t.backend=? AND t.shape=? AND t.dtype=? AND t.env_key=?",
                                  (task, task_digest, backend, shape, dtype, env_key)).fetchone()
            if row is None or checker.check("baseline_cache", row, DIGESTED["baseline_cache"])[0] == "tampered":
                return None  # a cached baseline changed behind mkbench's back is measured again
            values = json.loads(row["row"])
            values.setdefault("extra", {})["baseline_cache"] = {"measured_in_run": row["run_id"],
                                                                "measured": row["measured"]}
            out.append(values)
        return out

    def cache_baseline(self, task_digest: str, env_key: str, env: dict, run_id: int, rows: Iterable[dict]) -> None:
        """Remember a baseline's measured rows (correct and timed ones only: a failure is re-measured)."""
        self._writable()
        stamp = now()
        with self.db:
            for r in rows:
                if not counts_as_correct(r["verdict"]) or not r.get("time_median_us"):
                    continue
                keep = {k: v for k, v in r.items() if k in RESULT_COLUMNS and k not in ("run_id", "created")}
                cur = self.db.execute(
                    f"INSERT OR REPLACE INTO baseline_cache ({', '.join(DIGESTED['baseline_cache'])}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (r["task"], task_digest, r["backend"], r["shape"], r["dtype"], env_key,
                     json.dumps(env, sort_keys=True), json.dumps(keep, sort_keys=True, default=str), run_id, stamp))
                self._seal("baseline_cache", cur.lastrowid)


OVERHEAD_FACTOR = 1.3  # BackendBench's threshold: a baseline this close to an empty launch measures launches


def this_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_alive(owner: str, heartbeat: float | None) -> bool:
    """Whether the owner ``host:pid`` of a running run is still at it: its heartbeat is fresh, and,
    on this host, its pid still exists (so a killed owner is taken over at once, not after the
    heartbeat goes stale)."""
    host, _, pid = owner.rpartition(":")
    if host == socket.gethostname() and pid.isdigit():
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
    return heartbeat is not None and time.time() - heartbeat < HEARTBEAT_STALE_S
