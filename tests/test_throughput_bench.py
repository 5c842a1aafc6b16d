"""benchmarks/throughput.py reads what it reports from the stores a run wrote."""

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "throughput.py"


def _module():
    spec = importlib.util.spec_from_file_location("throughput_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_measure_reads_the_units_the_judges_parts_and_says_none_for_an_unsampled_gpu(tmp_path, cli):
    store = tmp_path / "r.sqlite"
    code, out, err = cli("run", "--backend", "triton", "--hw", "cpu", "--task", "silu", "--shape-role", "small",
                         "--dtype", "float32", "--seeds", "1", "--baselines", "eager", "--no-timing",
                         "--store", store, "--no-progress")
    assert code == 0, err
    m = _module().measure(store)
    assert m["units"] == 2 and m["candidate_units"] == 1
    parts = m["judge_seconds_per_candidate_unit"]
    assert parts["judge"] > 0 and parts["judge_reference"] >= 0  # a small reference can round to 0 ms
    assert sum(v for k, v in parts.items() if k != "judge") <= parts["judge"] * 1.05 + 0.05
    assert m["gpu_busy"] is None  # a CPU run samples no GPU
    assert _module().measure(tmp_path / "absent.sqlite") == {"units": 0}


def test_scaling_compares_each_multi_gpu_run_with_the_one_gpu_run():
    scaling = _module().scaling
    runs = {"this": {"units": 96, "wall_s": 235.0, "gpus": 1},
            "all": {"units": 262, "wall_s": 234.8, "gpus": 4},
            "two": {"units": 150, "wall_s": 235.0, "gpus": 2},
            "broken": {"units": 0, "wall_s": 10.0, "gpus": 4}}
    got = scaling(runs)
    assert got == {"all": round((262 / 234.8) / (96 / 235.0), 3), "two": round((150 / 235.0) / (96 / 235.0), 3)}
    assert got["all"] == 2.731  # call 34 on 4 H200s (reports/2026-11-28-calls)
    assert scaling({"all": runs["all"]}) == {}  # no one-GPU run to compare with
    assert scaling({}) == {}


def test_gpus_used_reads_the_run_arguments():
    gpus_used = _module().gpus_used
    assert gpus_used(["--backend", "triton"]) == 1
    assert gpus_used(["--gpus", "0,1"]) == 2 and gpus_used(["--gpus", "3"]) == 1


def test_the_summary_describes_this_run_or_else_the_last_one():
    summarize = _module().summarize
    ab = {"lanes4": {"units": 235, "wall_s": 154.6, "candidate_units": 117, "gpus": 4, "lock_wait_share": 0.29},
          "lanes8": {"units": 168, "wall_s": 159.5, "candidate_units": 80, "gpus": 4, "lock_wait_share": 0.3}}
    got = summarize(ab, ["--backend", "triton", "--gpus", "all"], "NVIDIA H200")
    # call 41 (three --variant runs, none labelled "this") gave nulls and "gpus": 1 here
    assert got["summary_of"] == "lanes8" and got["gpus"] == 4 and got["units"] == 168 and got["kernels"] == 80
    assert got["lock_wait_share"] == 0.3 and got["seconds_per_kernel"] == round(159.5 / 80, 3)
    assert got["seconds_per_kernel_by_run"] == {"lanes4": round(154.6 / 117, 3), "lanes8": round(159.5 / 80, 3)}
    pair = {"previous": dict(ab["lanes4"], gpus=1), "this": dict(ab["lanes8"], gpus=1)}
    got = summarize(pair, ["--backend", "triton"], "NVIDIA H200")
    assert got["summary_of"] == "this" and got["seconds_per_kernel_previous_main"] == round(154.6 / 117, 3)
    assert summarize({}, [], "cpu")["summary_of"] is None


def test_main_job_seconds_come_only_from_a_whole_main_job_that_ended_by_itself():
    summarize = _module().summarize
    job = ["--hw", "auto", "--baselines", "eager", "--time-role", "large"]
    runs = {"this": {"units": 140, "wall_s": 219.1, "candidate_units": 68, "gpus": 1, "exit": None},
            "all": {"units": 402, "wall_s": 187.4, "candidate_units": 201, "gpus": 4, "exit": 0}}
    got = summarize(runs, job, "NVIDIA H200")
    # the one-GPU run was stopped at its limit: not the main job's time
    assert got["main_job_seconds"] is None and got["main_job_seconds_4gpu"] == 187.4
    runs["this"]["exit"] = 0
    assert summarize(runs, job, "NVIDIA H200")["main_job_seconds"] == 219.1
    # a run that failed, or one narrowed to some tasks, is not the main job
    runs["all"]["exit"] = 1
    assert summarize(runs, job, "NVIDIA H200")["main_job_seconds_4gpu"] is None
    narrowed = summarize(runs, job + ["--task", "silu"], "NVIDIA H200")
    assert narrowed["main_job_seconds"] is None
    assert summarize(runs, ["--baselines", "eager"], "NVIDIA H200")["main_job_seconds"] is None
