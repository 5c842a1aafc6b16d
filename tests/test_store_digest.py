"""Tamper evidence of the results store (issue 31): rows carry a keyed digest, and a row changed
behind mkbench's back (as a hostile candidate did with plain sqlite3) is named by `mkbench report`
and `mkbench export` and never counted as correct. CPU only: stores are written through the store
API, without running kernels."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from mkbench.errors import BadInput
from mkbench.store import Store
from mkbench.store_digest import MISMATCH, NO_DIGEST, UNVERIFIED_NO_KEY, UNVERIFIED_OLD
from synthetic_store import _row

OLD_STORE = Path(__file__).resolve().parent.parent / "reports/2026-11-26-throughput/stores/refs16-this.sqlite"


@pytest.fixture(autouse=True)
def key_dir(tmp_path, monkeypatch):
    folder = tmp_path / "keys"
    monkeypatch.setenv("MKBENCH_KEY_DIR", str(folder))
    return folder


def build(path: Path) -> Path:
    """One run: baselines and three candidates on task_a..task_c; task_b's candidate incorrect."""
    store = Store(path)
    try:
        rid = store.start_run("k", {"framework_threshold": 0.5}, "h100", "triton", "model_a",
                              {"device_name": "NVIDIA H100 80GB HBM3"}, {"python": "3.x", "packages": {}}, 1)
        for task, verdict in (("task_a", "correct"), ("task_b", "incorrect"), ("task_c", "correct")):
            for base, us in (("eager", 100.0), ("torch_compile", 80)):  # an int time: stored as REAL
                store.record_unit(rid, task, base, base, [_row(task, "activation", base, "correct", us, True)])
            store.record_unit(rid, task, "triton", "model_a",
                              [_row(task, "activation", "model_a", verdict, 50.0 if verdict == "correct" else None)])
            store.update_speedups(rid, task)
        store.set_run_status(rid, "finished", {"note": "done"})
    finally:
        store.close()
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def export_rows(cli, store: Path, tmp_path: Path) -> list[dict]:
    code, _, err = cli("export", "--store", store, "--format", "jsonl", "-o", tmp_path / "rows.jsonl")
    assert code == 0, err
    return [json.loads(line) for line in open(tmp_path / "rows.jsonl")], err


def test_a_store_written_by_mkbench_verifies_clean(cli, store_path, tmp_path):
    build(store_path)
    store = Store(store_path)
    check = store.integrity()
    assert check.status is None and check.problems == [] and check.warning() is None
    assert set(check.counts) == {"verified"} and check.counts["verified"] == 1 + 9 + 9  # run, units, rows
    assert {r["integrity"] for r in store.results()} == {"verified"}
    store.close()
    code, out, err = cli("report", "--store", store_path, "--no-run-detail")
    assert code == 0 and "warning" not in err and "Integrity" not in out
    rows, err = export_rows(cli, store_path, tmp_path)
    assert {r["integrity"] for r in rows} == {"verified"} and "warning" not in err


def test_a_verdict_rewritten_behind_mkbench_is_named_and_not_counted(cli, store_path, tmp_path):
    build(store_path)
    db = sqlite3.connect(store_path)  # what the hostile candidate did, from a detached process
    db.execute("UPDATE results SET verdict='correct', correct_status='correct', time_median_us=1.0 "
               "WHERE task='task_b' AND method='model_a'")
    db.commit()
    db.close()
    line = f"row task_b large float32 model_a: {MISMATCH}"
    code, out, err = cli("report", "--store", store_path, "--no-run-detail")
    assert code == 0, err
    assert line in out and "## Integrity: rows changed after they were written" in out
    assert len(err.strip().splitlines()) == 1 and err.startswith("warning:") and line in err
    assert "3/3 candidates correct" not in out and "2/3 candidates correct" in out  # task_b is not counted
    rows, err = export_rows(cli, store_path, tmp_path)
    (bad,) = [r for r in rows if r["integrity"] != "verified"]
    assert (bad["task"], bad["integrity"], bad["verdict"], bad["stored_verdict"]) == ("task_b", "tampered",
                                                                                      "tampered", "correct")
    assert bad["integrity_problem"] == MISMATCH and line in err
    code, _, err = cli("report", "--store", store_path, "--format", "json", "-o", tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["integrity"]["status"] == "tampered" and any(line in p for p in doc["integrity"]["problems"])


def test_a_removed_digest_and_an_inserted_row_are_named(cli, store_path, tmp_path):
    build(store_path)
    db = sqlite3.connect(store_path)
    db.execute("UPDATE results SET digest=NULL WHERE task='task_a' AND method='model_a'")
    db.execute("INSERT INTO results (run_id, task, category, shape, shape_role, dtype, backend, method, is_baseline, "
               "verdict, compile_status, correct_status, perf_status, created) SELECT run_id, 'task_z', category, "
               "shape, shape_role, dtype, backend, method, is_baseline, 'correct', compile_status, 'correct', "
               "perf_status, created FROM results WHERE task='task_c' AND method='model_a'")
    db.execute("UPDATE units SET finished='2000-01-01' WHERE task='task_c' AND method='model_a'")
    db.execute("UPDATE runs SET config='{}'")
    db.commit()
    db.close()
    problems = Store(store_path).integrity().problems
    assert f"row task_a large float32 model_a: {NO_DIGEST} (run 1)" in problems
    assert f"row task_z large float32 model_a: {NO_DIGEST} (run 1)" in problems
    assert f"completion marker task_c triton model_a: {MISMATCH} (run 1)" in problems
    assert f"run 1 (its configuration, environment and status): {MISMATCH}" in problems
    code, out, err = cli("report", "--store", store_path, "--no-run-detail")
    assert code == 0 and "4 record(s) changed" in err and f"row task_z large float32 model_a: {NO_DIGEST}" in out
    rows, _ = export_rows(cli, store_path, tmp_path)
    assert {r["task"] for r in rows if r["verdict"] == "tampered"} == {"task_a", "task_z"}


def test_a_store_from_before_digests_reads_unverified_and_is_not_modified(cli, tmp_path):
    old = tmp_path / "refs16-this.sqlite"
    shutil.copy(OLD_STORE, old)
    before = sha(old)
    code, out, err = cli("report", "--store", old, "--no-run-detail")
    assert code == 0, err
    assert out.count(UNVERIFIED_OLD) == 1 and err.count(UNVERIFIED_OLD) == 1 and len(err.strip().splitlines()) == 1
    rows, err = export_rows(cli, old, tmp_path)
    assert rows and {r["integrity"] for r in rows} == {"unverified"} and err.count(UNVERIFIED_OLD) == 1
    assert sha(old) == before and not any((tmp_path / "keys").glob("*"))


def test_writing_an_old_store_seals_its_rows_as_legacy(tmp_path):
    old = tmp_path / "old.sqlite"
    shutil.copy(OLD_STORE, old)
    store = Store(old)
    run = store.runs()[0].id
    n = len(store.results())
    store.set_run_status(run, "finished")  # the first write: upgrade, key, legacy seals
    check = store.integrity()
    assert check.problems == [] and check.counts.get("verified", 0) == 0
    assert check.notes == [f"{old}: {check.counts['unverified']} row(s) {UNVERIFIED_OLD} (sealed when the store "
                           "was upgraded)"] and check.counts["unverified"] >= n
    store.close()
    db = sqlite3.connect(old)
    db.execute("UPDATE results SET verdict='correct' WHERE id=(SELECT min(id) FROM results WHERE verdict!='correct')")
    db.commit()
    db.close()
    assert [p for p in Store(old).integrity().problems if MISMATCH in p]


def test_the_key_is_private_and_named_by_the_store_id(store_path, key_dir):
    build(store_path)
    (key,) = key_dir.iterdir()
    assert stat.S_IMODE(key_dir.stat().st_mode) == 0o700 and stat.S_IMODE(key.stat().st_mode) == 0o600
    store_id = sqlite3.connect(store_path).execute("SELECT value FROM meta WHERE key='store_id'").fetchone()[0]
    assert key.name == f"{store_id}.key" and key.parent != store_path.parent


def test_a_store_whose_key_is_elsewhere_reads_unverified(cli, store_path, tmp_path, monkeypatch):
    build(store_path)
    elsewhere = tmp_path / "other-machine-keys"
    elsewhere.mkdir()
    monkeypatch.setenv("MKBENCH_KEY_DIR", str(elsewhere))
    before = sha(store_path)
    code, out, err = cli("report", "--store", store_path, "--no-run-detail")
    assert code == 0 and out.count(UNVERIFIED_NO_KEY) == 1 and err.count(UNVERIFIED_NO_KEY) == 1
    assert not any(elsewhere.iterdir()) and sha(store_path) == before
    store = Store(store_path)
    with pytest.raises(BadInput, match="key that is not on this machine"):
        store.set_run_status(1, "finished")


def test_mkbench_never_reseals_a_tampered_row(store_path):
    """The orchestrator's later updates (speedups, a cached baseline) must not bless a row changed
    in between; a tampered cached baseline is measured again rather than reused."""
    build(store_path)
    db = sqlite3.connect(store_path)
    db.execute("UPDATE results SET time_median_us=1.0 WHERE task='task_a' AND method='eager'")
    db.commit()
    db.close()
    store = Store(store_path)
    store.update_speedups(1, "task_a")  # also: the tampered baseline time is not used
    assert [p for p in store.integrity().problems if "task_a large float32 eager" in p]
    assert store.baseline_times(1, "task_a").get(("eager", "large", "float32")) is None
    good = [r for r in store.results() if r["task"] == "task_c" and r["method"] == "eager"]
    store.cache_baseline("d", "env", {}, 1, good)
    assert store.cached_baseline("task_c", "d", "eager", [("large", "float32")], "env")
    store.db.execute("UPDATE baseline_cache SET row=replace(row, '100.0', '1.0')")
    store.db.commit()
    assert store.cached_baseline("task_c", "d", "eager", [("large", "float32")], "env") is None
    assert [p for p in store.integrity().problems if p.startswith("cached baseline task_c large float32 eager")]


# --- a store carried to a machine without its key: adopted ----------------------------------------

def test_a_store_whose_key_is_lost_is_adopted_its_rows_unverified_yet_sealed(store_path, tmp_path, monkeypatch):
    build(store_path)
    old_id = sqlite3.connect(store_path).execute("SELECT value FROM meta WHERE key='store_id'").fetchone()[0]
    elsewhere = tmp_path / "other-machine-keys"
    monkeypatch.setenv("MKBENCH_KEY_DIR", str(elsewhere))
    before = sha(store_path)
    Store(store_path).close()  # opened without adopt: nothing changes
    assert sha(store_path) == before and not elsewhere.exists()
    store = Store(store_path, adopt=True)
    n_results = len(store.results())
    check = store.integrity()
    assert check.status is None and check.problems == [] and check.counts.get("verified", 0) == 0
    assert check.counts["unverified"] >= n_results and check.adopted == [old_id]
    assert check.notes == [f"{store_path}: {check.counts['unverified']} row(s) unverified: written before the store "
                           f"was adopted on a machine without its key (store id {old_id}), sealed then"]
    assert [a["store_id"] for a in store.adopted()] == [old_id]
    (key,) = elsewhere.iterdir()
    new_id = store.db.execute("SELECT value FROM meta WHERE key='store_id'").fetchone()[0]
    assert key.name == f"{new_id}.key" and new_id != old_id
    # rows written after the adoption verify; rows from before stay unverified
    rid = store.start_run("k2", {}, "h100", "triton", "model_b", {"device_name": "x"}, {"python": "3.x"}, 2)
    store.record_unit(rid, "task_a", "triton", "model_b", [_row("task_a", "activation", "model_b", "correct", 40.0)])
    after = store.integrity()
    assert after.problems == [] and after.counts["verified"] >= 3 and after.counts["unverified"] == check.counts[
        "unverified"]
    store.close()
    # a row from before the adoption changed after it: named as changed
    db = sqlite3.connect(store_path)
    db.execute("UPDATE results SET verdict='correct' WHERE task='task_b' AND method='model_a'")
    db.commit()
    db.close()
    store = Store(store_path, adopt=True)  # its key is here now: nothing to adopt again
    assert [a["store_id"] for a in store.adopted()] == [old_id]
    assert [p for p in store.integrity().problems if "task_b" in p and MISMATCH in p]
    (row,) = [r for r in store.results() if r["task"] == "task_b" and r["method"] == "model_a"]
    assert row["verdict"] == "tampered"
    store.close()


def test_run_adopt_store_goes_on_with_a_carried_store(cli, store_path, tmp_path, monkeypatch):
    args = ("run", "--task", "gelu", "--baselines", "none", "--seeds", "1", "--shape-role", "small", "--no-progress",
            "--store", store_path)
    code, _, err = cli(*args)
    assert code == 0, err
    monkeypatch.setenv("MKBENCH_KEY_DIR", str(tmp_path / "other-machine-keys"))
    before = sha(store_path)
    code, _, err = cli(*args, "--task", "elu")
    assert code == 2 and "--adopt-store" in err and len(err.strip().splitlines()) == 1
    assert sha(store_path) == before  # refused: nothing written
    code, out, err = cli(*args, "--task", "elu", "--adopt-store")
    assert code == 0, err
    assert out.startswith(f"adopted results store {store_path}: its key") and "read as unverified" in out
    store = Store(store_path)
    check = store.integrity()
    assert check.problems == [] and check.counts["verified"] and check.counts["unverified"] and check.adopted
    rows = store.results()
    assert {r["verdict"] for r in rows if r["verdict"] != "skipped"} == {"correct"}
    assert {r["task"] for r in rows} == {"gelu", "elu"}
    store.close()
