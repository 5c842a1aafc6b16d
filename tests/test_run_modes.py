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


def test_a_corpus_judged_against_imported_tasks_is_missing_only_what_it_lacks_of_them(cli, store_path, tmp_path):
    """With --tasks-dir, a solutions folder is a corpus for those tasks: the imported task it has no
    candidate for is missing; mkbench's own tasks are not attempts of it (a CUDA-L1 run's rates read
    342 tasks attempted for 101 candidates), unless named with --task."""
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    tasks, sol = tmp_path / "tasks" / "activation", tmp_path / "sol" / "activation"
    tasks.mkdir(parents=True)
    sol.mkdir(parents=True)
    source = (root / "tasks/activation/gelu.py").read_text()
    for name in ("imp_gelu", "imp_gelu_2"):
        (tasks / f"{name}.py").write_text(source.replace('name="gelu"', f'name="{name}"'))
    (sol / "imp_gelu.py").write_text((root / "backends/triton/kernels/activation/gelu.py").read_text())
    common = ("run", "--tasks-dir", tmp_path / "tasks", "--solutions", tmp_path / "sol", "--method", "corpus",
              "--no-timing", "--baselines", "none", "--seeds", "1", "--shape-role", "small", "--dtype", "float32",
              "--no-progress", "--store", store_path)
    code, out, err = cli(*common)
    assert code == 0, err
    rows = [r for r in Store(store_path).results() if r["verdict"] != "skipped"]  # other shapes and dtypes
    assert {(r["task"], r["verdict"]) for r in rows} == {("imp_gelu", "correct"), ("imp_gelu_2", "missing")}
    assert "task(s) outside --tasks-dir without a candidate" in out
    # a built-in task named on the command line stays an attempt, missing here
    code, out, err = cli(*common, "--task", "imp_gelu,elu")
    assert code == 0, err
    run2 = Store(store_path).runs()[-1].id
    assert {(r["task"], r["verdict"]) for r in Store(store_path).results([run2]) if r["verdict"] != "skipped"} == {
        ("imp_gelu", "correct"), ("elu", "missing")}


def test_a_task_whose_reference_answers_one_value_says_so_on_its_rows(cli, store_path, tmp_path):
    """KernelBench level 2 problem 83's answer is all zeros whatever its input (a minimum with 0, then a
    clamp to [0, 1]). Judged on two seeds' inputs, each row says the reference's answer was one value,
    which lifts the roofline floor on a GPU (a candidate writing zeros is right and needs no work)."""
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    tasks, sol = tmp_path / "tasks" / "activation", tmp_path / "sol" / "activation"
    tasks.mkdir(parents=True)
    sol.mkdir(parents=True)
    source = (root / "tasks/activation/gelu.py").read_text()
    assert "    return torch.nn.functional.gelu(x)\n" in source
    zeros = "    return torch.clamp(torch.minimum(x, torch.zeros_like(x)), 0, 1)\n"
    (tasks / "min_clamp.py").write_text(source.replace('name="gelu"', 'name="min_clamp"').replace(
        "    return torch.nn.functional.gelu(x)\n", zeros))
    (sol / "min_clamp.py").write_text("import torch\n\n\ndef kernel_function(x):\n    return torch.zeros_like(x)\n")
    code, out, err = cli("run", "--tasks-dir", tmp_path / "tasks", "--solutions", tmp_path / "sol", "--method", "zeros",
                         "--no-timing", "--baselines", "none", "--seeds", "2", "--shape-role", "small",
                         "--dtype", "float32", "--no-progress", "--store", store_path)
    assert code == 0, err
    (row,) = [r for r in Store(store_path).results() if r["verdict"] != "skipped"]
    assert row["extra"]["constant_reference"] == ("the reference's answer is 0.0 in every element, "
                                                  "for each of 2 seeds' inputs")
    gelu = tmp_path / "g.sqlite"
    code, out, err = cli("run", "--task", "gelu", "--no-timing", "--baselines", "none", "--seeds", "2",
                         "--shape-role", "small", "--dtype", "float32", "--no-progress", "--store", gelu)
    assert code == 0, err
    assert all("constant_reference" not in r["extra"] for r in Store(gelu).results())
