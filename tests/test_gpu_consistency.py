"""benchmarks/gpu_consistency.py on the CPU: the comparison of per-GPU stores (spreads, p95, the share
within 3%, which rows are left out), its summary and table, and the runs' start and stop."""

import json
import sys
import time
from pathlib import Path

import pytest

from mkbench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import gpu_consistency as gc


def _row(task, time_us, method="reference", verdict="correct", shape="large", interpreted=0):
    baseline = method == "eager"
    return {"task": task, "category": "activation", "shape": shape, "shape_role": "large", "dtype": "float32",
            "backend": "eager" if baseline else "triton", "method": method, "is_baseline": int(baseline),
            "verdict": verdict, "compile_status": "ok", "correct_status": verdict,
            "perf_status": "timed" if time_us else "not_timed", "error": None if verdict == "correct" else "planted",
            "time_median_us": time_us, "interpreted": interpreted, "flops": 1.0, "bytes": 1.0, "extra": {}}


def _store(path, rows):
    store = Store(path)
    rid = store.start_run("gpucons", {}, "h100", "triton", "reference", {"device_name": "test"}, {"python": "3"}, 1)
    by_unit = {}
    for r in rows:
        by_unit.setdefault((r["task"], r["backend"], r["method"]), []).append(r)
    for (task, backend, method), unit_rows in by_unit.items():
        store.record_unit(rid, task, backend, method, unit_rows)
    store.set_run_status(rid, "finished")
    store.close()


# per GPU: t1 within 2%, t2 10% apart, t1's eager baseline equal, t3 wrong on GPU 2 (4% over GPUs 0 and 1),
# t4 timed on GPU 0 only, t5 interpreted, t6 in GPU 0's store only
TIMES = {
    "0": [_row("t1", 100.0), _row("t2", 100.0), _row("t1", 50.0, "eager"), _row("t3", 100.0), _row("t4", 10.0),
          _row("t5", 5.0, interpreted=1), _row("t6", 7.0)],
    "1": [_row("t1", 101.0), _row("t2", 110.0), _row("t1", 50.0, "eager"), _row("t3", 104.0), _row("t4", None),
          _row("t5", 9.0, interpreted=1)],
    "2": [_row("t1", 102.0), _row("t2", 105.0), _row("t1", 50.0, "eager"), _row("t3", 1.0, verdict="incorrect"),
          _row("t4", None, verdict="timeout"), _row("t5", 5.0, interpreted=1)],
}


@pytest.fixture
def stores(tmp_path):
    for gpu, rows in TIMES.items():
        _store(tmp_path / f"gpu{gpu}.sqlite", rows)
    return tmp_path


def test_compare_stores_written_through_the_store_api(stores):
    rows = gc.load(stores, ["0", "1", "2"])
    assert all(r["integrity"] == "verified" for rs in rows.values() for r in rs)
    out = gc.compare(rows)
    # compared: t1 eager 0, t1 0.02, t3 0.04 (GPU 2's wrong row left out), t2 0.10; not t4, t5, t6
    assert out["rows_compared"] == 4
    assert out["median_spread"] == pytest.approx(0.03)
    # inclusive p95 of [0, .02, .04, .10]: rank 3 * 0.95 = 2.85 between .04 and .10
    assert out["p95_spread"] == pytest.approx(0.04 + 0.85 * 0.06, abs=1e-6)
    assert out["share_within_3pct"] == pytest.approx(0.5)
    assert out["rows_on_one_gpu_only"] == 2  # t4 (timed on GPU 0 only) and t6 (GPU 0's store only)
    assert out["usable_rows_by_gpu"] == {"0": 6, "1": 4, "2": 3}
    assert [(w["task"], w["method"]) for w in out["worst"]] == [("t2", "reference"), ("t3", "reference"),
                                                                ("t1", "reference"), ("t1", "eager")]
    top = out["worst"][0]
    assert top["spread"] == pytest.approx(0.10) and top["time_median_us"] == {"0": 100.0, "1": 110.0, "2": 105.0}
    assert out["worst"][1]["time_median_us"] == {"0": 100.0, "1": 104.0}
    ref, eager = out["by_method"]["reference"], out["by_method"]["eager"]
    assert ref["rows_compared"] == 3 and ref["median_spread"] == pytest.approx(0.04)
    assert ref["share_within_3pct"] == pytest.approx(1 / 3, abs=1e-4)
    assert eager["rows_compared"] == 1 and eager["median_spread"] == 0 and eager["share_within_3pct"] == 1
    assert not {"t4", "t5", "t6"} & {w["task"] for w in out["worst"]}


def test_p95_worst_count_and_boundary():
    spreads = [i / 100 for i in range(21)]  # 0 .. 20%
    rows = {"a": [_row(f"t{i:02d}", 100.0) for i in range(21)],
            "b": [_row(f"t{i:02d}", 100.0 * (1 + s)) for i, s in enumerate(spreads)]}
    out = gc.compare(rows)
    assert out["rows_compared"] == 21
    assert out["p95_spread"] == pytest.approx(0.19)
    assert out["median_spread"] == pytest.approx(0.10)
    assert out["share_within_3pct"] == pytest.approx(4 / 21, abs=1e-4)  # 0, 1, 2 and exactly 3%
    assert [w["task"] for w in out["worst"]] == ["t20", "t19", "t18", "t17", "t16"]


def test_left_out_rows_and_repeats():
    rows = {"0": [_row("t", 100.0), _row("u", 100.0), _row("v", 100.0, shape="small")],
            # u: correct, then a later row of the same key in this store wrong: the last one counts
            "1": [_row("t", 100.0), _row("u", 100.0), _row("u", 100.0, verdict="incorrect"),
                  _row("v", 100.0, shape="large")]}
    out = gc.compare(rows)
    assert out["rows_compared"] == 1 and out["worst"][0]["task"] == "t"
    assert out["rows_on_one_gpu_only"] == 3  # u on GPU 0, v small on GPU 0, v large on GPU 1
    assert gc.compare({"0": [_row("t", 1.0)]})["rows_compared"] == 0
    empty = gc.compare({"0": [], "1": []})
    assert empty["median_spread"] is None and empty["p95_spread"] is None and empty["share_within_3pct"] is None
    assert "| all | 0 | - | - | - |" in gc.markdown(empty)


def test_main_compare_only_writes_summary_and_table(stores, monkeypatch, capsys):
    monkeypatch.setattr(gc, "gpu_names", lambda: {"0": "NVIDIA H100", "1": "NVIDIA H100", "2": "NVIDIA H100"})
    monkeypatch.setattr(gc, "layout", lambda tree, dest: dest)  # mkbench is importable here already
    monkeypatch.setattr(sys, "argv", ["gpu_consistency.py", "--out", str(stores), "--compare-only"])
    assert gc.main() == 0
    summary = json.loads((stores / "summary.json").read_text())
    for key in ("devices", "gpus", "rows_compared", "median_spread", "p95_spread", "share_within_3pct", "worst"):
        assert key in summary
    assert summary["gpus"] == ["0", "1", "2"] and summary["same_model"] is True
    assert summary["devices"] == {"0": "NVIDIA H100", "1": "NVIDIA H100", "2": "NVIDIA H100"}
    assert summary["rows_compared"] == 4 and summary["runs"] == []
    table = capsys.readouterr().out
    assert "| all | 4 | 3.00% | 9.10% | 50.0% |" in table
    assert "| method eager | 1 | 0.00% | 0.00% | 100.0% |" in table
    assert "| t2 | reference | large | float32 | 10.00% | 100.00 | 110.00 | 105.00 |" in table
    assert "| t3 | reference | large | float32 | 4.00% | 100.00 | 104.00 | - |" in table
    assert summary["clocks"] == {"0": None, "1": None, "2": None}  # these stores sampled no GPU
    assert "- GPU 0: not sampled" in table


def test_each_gpu_clock_from_its_own_store(tmp_path):
    def sampled(gpu, mhz, slowed):
        return {"samples": 9, "busy_mean": 60.0, "sm_mhz_busy_median": mhz, "slowdown_share": slowed}
    for gpu, mhz, slowed in (("0", 1980.0, 0.0), ("1", 1710.0, 0.4)):
        # nvidia-smi reports every GPU of the host: the store of GPU 1's run has GPU 0 too, idle
        busy = {"gpus": {"0": sampled("0", 345.0, None), "1": sampled("1", 345.0, None)}}
        busy["gpus"][gpu] = sampled(gpu, mhz, slowed)
        store = Store(tmp_path / f"gpu{gpu}.sqlite")
        store.start_run("k", {}, "h200", "triton", "reference", {}, {"engine_clock": {"sessions": [
            {"wall_s": 1.0, "gpu_busy": {"gpus": {}}}, {"wall_s": 2.0, "gpu_busy": busy}]}}, 1)
        store.close()
    got = gc.clocks(tmp_path, ["0", "1", "2"])
    assert got["0"] == {"busy_mean": 60.0, "sm_mhz_busy_median": 1980.0, "slowdown_share": 0.0}
    assert got["1"]["sm_mhz_busy_median"] == 1710.0 and got["2"] is None  # GPU 2 has no store
    lines = gc.clock_lines(got)
    assert "- GPU 1: busy 60%, SM clock while busy 1710 MHz (median), slowed by a power or thermal cap in 40%" in lines
    assert "- GPU 2: not sampled" in lines


def test_concurrent_by_default():
    assert gc.parser().parse_args(["--out", "o", "--", "--task", "a"]).sequential is False
    assert gc.parser().parse_args(["--out", "o", "--concurrent"]).sequential is False
    a = gc.parser().parse_args(["--out", "o", "--sequential", "--", "--task", "a"])
    assert a.sequential is True and a.run_args == ["--task", "a"] and a.gpus == "all" and a.limit is None


def test_run_command_and_clashing_args(tmp_path, monkeypatch):
    cmd = gc.run_command("3", tmp_path, ["--task", "silu", "--baselines", "eager"], 8)
    assert cmd[1:4] == ["-m", "mkbench", "run"]
    assert cmd[4:] == ["--task", "silu", "--baselines", "eager", "--gpus", "3", "--store",
                       str(tmp_path / "gpu3.sqlite"), "--no-baseline-cache", "--no-progress", "--workers", "8"]
    assert "--workers" not in gc.run_command("0", tmp_path, [], None)
    monkeypatch.setattr(sys, "argv", ["gpu_consistency.py", "--out", str(tmp_path), "--gpus", "0", "--",
                                      "--task", "silu", "--store", "x.sqlite"])
    with pytest.raises(SystemExit):
        gc.main()


@pytest.mark.parametrize("concurrent", [True, False])
def test_runs_are_stopped_past_the_limit(tmp_path, monkeypatch, concurrent):
    monkeypatch.setattr(gc, "layout", lambda tree, dest: dest)
    seen = []

    def fake(gpu, out, run_args, workers):
        seen.append((gpu, workers))  # GPU 2's run ends by itself, with its own status
        return [sys.executable, "-c", "import sys, time; time.sleep(60) if sys.argv[1] != '2' else sys.exit(3)", gpu]

    monkeypatch.setattr(gc, "run_command", fake)
    (tmp_path / "gpu0.sqlite").write_text("stale")
    t = time.monotonic()
    runs = gc.run_all(["0", "1", "2"], tmp_path, [], 1.0, concurrent)
    wall = time.monotonic() - t
    assert [(r["gpu"], r["exit"]) for r in runs] == [("0", None), ("1", None), ("2", 3)]  # None: stopped
    assert wall < (10 if concurrent else 20) and (concurrent or wall >= 2)
    assert not (tmp_path / "gpu0.sqlite").exists()  # an earlier call's store is not mixed in
    assert (tmp_path / "gpu1.log").read_text().startswith("$ ")
    workers = [w for _, w in seen]
    assert (workers[0] is not None) == concurrent


def _on(row, lane):
    return dict(row, extra={"lane": lane})


def test_two_gpus_all_runs_compare_rows_by_the_gpu_that_ran_them(tmp_path, monkeypatch, capsys):
    # run A: t1 on GPU 0, t2 on GPU 1; run B: t1 on GPU 3 (2% slower), t2 on GPU 1 again (the same GPU: no
    # pair), t3 only in B; a row of an older mkbench says no lane and is left out
    a = [_on(_row("t1", 100.0), "cuda:0/lane1"), _on(_row("t2", 50.0), "cuda:1/lane0"), _row("t4", 9.0)]
    b = [_on(_row("t1", 102.0), "cuda:3/lane2"), _on(_row("t2", 51.0), "cuda:1/lane3"),
         _on(_row("t3", 7.0), "cuda:2/lane0")]
    by_gpu = gc.rows_by_lane([a, b])
    assert list(by_gpu) == ["0", "1", "2", "3"] and [r["task"] for r in by_gpu["1"]] == ["t2", "t2"]
    out = gc.compare(by_gpu)
    assert out["rows_compared"] == 1 and out["worst"][0]["time_median_us"] == {"0": 100.0, "3": 102.0}
    assert out["rows_on_one_gpu_only"] == 2  # t2 (GPU 1 in both runs: the later counts) and t3
    _store(tmp_path / "a.sqlite", a)
    _store(tmp_path / "b.sqlite", b)
    monkeypatch.setattr(gc, "gpu_names", lambda: {})
    monkeypatch.setattr(gc, "layout", lambda tree, dest: dest)
    monkeypatch.setattr(sys, "argv", ["gpu_consistency.py", "--out", str(tmp_path / "cons"), "--from-stores",
                                      str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite")])
    assert gc.main() == 0
    summary = json.loads((tmp_path / "cons" / "summary.json").read_text())
    assert summary["mode"] == "from --gpus all stores" and summary["rows_compared"] == 1
    assert summary["p95_spread"] == pytest.approx(0.02)
    assert "| t1 | reference | large | float32 | 2.00% |" in capsys.readouterr().out


def test_rows_whose_timer_found_the_host_bound_are_a_scope_of_their_own():
    """A host-bound row's time is the host's launch path under the other GPUs' lanes: reported apart."""
    def row(task, t, host=0):
        return dict(_row(task, t), extra={"host_bound_samples": host})
    out = gc.compare({"0": [row("a", 100.0), row("b", 100.0), row("c", 100.0, host=3)],
                      "1": [row("a", 101.0), row("b", 102.0, host=1), row("c", 150.0)]})
    device, host = out["by_bound"]["device"], out["by_bound"]["host"]
    assert device["rows_compared"] == 1 and device["p95_spread"] == pytest.approx(0.01)
    # host-bound on either GPU is host-bound: b (on GPU 1) and c (on GPU 0)
    assert host["rows_compared"] == 2 and {w["task"] for w in host["worst"]} == {"b", "c"}
    assert out["rows_compared"] == 3
    table = gc.markdown(out)
    assert "| device-bound rows | 1 | 1.00% | 1.00% | 100.0% |" in table
    assert "| host-bound rows | 2 |" in table
