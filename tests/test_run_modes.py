"""`--no-timing`: the same compile and correctness verdicts, nothing timed, and said so per row."""

from mkbench.store import Store


def test_no_timing_checks_correctness_and_times_nothing(cli, store_path):
    code, out, err = cli("run", "--task", "gelu", "--shape-role", "small", "--baselines", "eager", "--seeds", "1",
                         "--store", store_path, "--no-progress", "--no-timing")
    assert code == 0, err
    store = Store(store_path)
    (run,) = store.runs()
    assert run.config["timing"] is None
    rows = [r for r in store.results([run.id]) if r["verdict"] != "skipped"]
    assert {(r["method"], r["verdict"], r["perf_status"]) for r in rows} == {
        ("eager", "correct", "not_timed"), ("reference", "correct", "not_timed")}
    assert all(r["time_median_us"] is None and r["speedup_eager"] is None for r in rows)
    # A timed run of the same selection is a different configuration: --resume does not mix them.
    code, out, err = cli("run", "--task", "gelu", "--shape-role", "small", "--baselines", "eager", "--seeds", "1",
                         "--store", store_path, "--no-progress", "--resume")
    assert code == 0, err
    assert "nothing to resume" in out
    timed = [r for r in store.results([store.runs()[-1].id]) if r["verdict"] == "correct"]
    assert timed and all(r["perf_status"] in ("timed", "interpreted") and r["time_median_us"] for r in timed)
