"""Report and export read a real store: the H100 run committed under reports/."""

import csv
import json
import shutil
from pathlib import Path

import pytest

H100_STORE = Path(__file__).resolve().parent.parent / "reports" / "2026-11-22-h100-triton-reference" / "results.sqlite"


@pytest.fixture
def h100_store(tmp_path):
    path = tmp_path / "h100.sqlite"
    shutil.copy(H100_STORE, path)
    return path


def test_markdown_report_states_environment(cli, h100_store):
    code, out, err = cli("report", "--store", h100_store)
    assert code == 0, err
    assert "NVIDIA H100 80GB HBM3" in out and "driver 580.159.04" in out and "triton 3.6.0" in out
    assert "15/15 candidates correct" in out
    assert "| matmul" in out


def test_export_jsonl_and_csv_with_filters(cli, h100_store, tmp_path):
    code, _, err = cli("export", "--store", h100_store, "--format", "jsonl", "--no-baselines", "-o", tmp_path / "r.jsonl")
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert rows and all(r["is_baseline"] == 0 for r in rows)
    assert {r["device_name"] for r in rows} == {"NVIDIA H100 80GB HBM3"}
    assert all(r["run"]["environment"]["packages"]["torch"] == "2.11.0" for r in rows)
    assert len({r["task"] for r in rows}) == 15

    code, _, err = cli("export", "--store", h100_store, "--format", "csv", "--task", "matmul", "--dtype", "bfloat16",
                       "-o", tmp_path / "r.csv")
    assert code == 0, err
    table = list(csv.DictReader(open(tmp_path / "r.csv")))
    assert {(r["task"], r["dtype"]) for r in table} == {("matmul", "bfloat16")}
    assert {r["method"] for r in table} == {"eager", "torch_compile", "reference"}
    large = next(r for r in table if r["method"] == "reference" and r["shape"] == "large")
    assert float(large["time_median_us"]) > 0 and float(large["speedup_eager"]) > 0
    assert json.loads(large["run_environment_json"])["machine"]["device_name"] == "NVIDIA H100 80GB HBM3"


def test_export_unknown_run_is_bad_input(cli, h100_store):
    code, _, err = cli("export", "--store", h100_store, "--format", "csv", "--run", "99")
    assert code == 2 and "no run 99" in err


CORPUS = Path(__file__).resolve().parent.parent / "reports" / "2026-11-22-h100-triton-corpus"


def test_run_selection_belongs_to_the_store_before_it(cli, h100_store, tmp_path):
    # corpus-3 holds a finished sweep (run 1) and a later, cut-off repeat of it (run 2).
    corpus3 = tmp_path / "corpus-3.sqlite"
    shutil.copy(CORPUS / "corpus-3.sqlite", corpus3)
    code, out, err = cli("report", "--store", corpus3, "--run", "1", "--store", h100_store, "--no-run-detail")
    assert code == 0, err
    assert "| corpus-3#1 " in out and "| h100#1 " in out
    assert "corpus-3#2" not in out
    code, out, err = cli("report", "--store", corpus3, "--store", h100_store, "--no-run-detail")
    assert code == 0, err
    assert "corpus-3#2" in out  # without --run, every run of every store


def test_report_restricted_to_tasks_names_runs_lacking_them(cli, h100_store, tmp_path):
    sycl = Path(__file__).resolve().parent.parent / "reports" / "2026-11-22-h100-backends" / "sycl.sqlite"
    code, out, err = cli("report", "--store", sycl, "--store", h100_store, "--task", "gelu,dropout", "--no-run-detail")
    assert code == 0, err
    assert "restricted to 2 task(s): dropout, gelu" in out
    assert "run sycl#1 (interrupted) has no results for dropout" in out
    assert "| cross_entropy" not in out.split("# Runs in detail")[0]
    code, _, err = cli("report", "--store", h100_store, "--task", "no_such_task")
    assert code == 2 and "no results for task(s) no_such_task" in err


def test_report_says_which_timer_took_each_backends_times(cli):
    # The 2026-11-23 H100 stores: CUDA events with the run-ahead for cuda and its eager baseline,
    # the host clock around a device-wide sync for Pallas (JAX's own streams).
    folder = Path(__file__).resolve().parent.parent / "reports" / "2026-11-23-h100-five-backends"
    code, out, err = cli("report", "--store", folder / "cuda.sqlite", "--store", folder / "pallas.sqlite",
                         "--task", "gelu", "--no-run-detail")
    assert code == 0, err
    timers = out.split("### Timers")[1].split("## Rates")[0]
    assert "| cuda#1   | cuda      | CUDA events around each call" in timers and "| yes " in timers
    assert "| pallas#1 | pallas    | host clock to a device-wide sync (includes dispatch)" in timers


def test_cross_hardware_on_the_committed_h100_and_h200_corpus_runs():
    """The 2026-11-23 stores: eager rope_apply missed its bf16 contract on the H100 only, so the
    H100/H200 comparison of the Triton reference must use float32 alone (5.98x vs 7.31x), not
    float32 on one card against float32 + bfloat16 on the other (which read as 5.98x vs 9.33x)."""
    from mkbench.analysis import attempt_table, cross_hardware, load_results
    from mkbench.plugins import build_registry
    folder = Path(__file__).resolve().parent.parent / "reports" / "2026-11-23-h100-vs-h200-corpus"
    attempts = attempt_table(load_results([folder / "h100.sqlite", folder / "h200.sqlite"]), build_registry().hardware)
    refs = attempts[attempts["method"] == "reference"]
    assert len(refs) == 144 and refs["correct"].all()
    spreads, mismatched = cross_hardware(attempts)
    assert len(spreads) == 72 and mismatched.empty
    rope = spreads[spreads["task"] == "rope_apply"].iloc[0]
    assert rope["combos"] == "large/float32" and rope["hw"] == "h100=5.98, h200=7.31"
