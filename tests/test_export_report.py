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
    assert "NVIDIA H100 80GB HBM3" in out and "| 580.159.04 " in out and "triton 3.6.0" in out
    assert "15/15 candidates correct" in out
    assert "| matmul" in out


def test_export_jsonl_and_csv_with_filters(cli, h100_store, tmp_path):
    code, _, err = cli("export", "--store", h100_store, "--format", "jsonl", "--no-baselines", "-o",
                       tmp_path / "r.jsonl")
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
    assert "| cross_entropy" not in out
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


def test_report_counts_each_backends_host_bound_timed_rows(cli):
    """The H200 main job (2026-11-28): eager moe_permute synchronizes inside its call, so its two timed
    rows' samples are host-bound; silu's and the Triton references' are device time."""
    store = Path(__file__).resolve().parent.parent / "reports" / "2026-11-28-main-job-1gpu" / "call3"
    store = store / "main-job-1gpu.sqlite"
    code, out, err = cli("report", "--store", store, "--task", "moe_permute,silu", "--no-run-detail")
    assert code == 0, err
    timers = out.split("### Timers")[1].split("## Rates")[0]
    rows = {line.split("|")[2].strip(): line.split("|")[5].strip() for line in timers.splitlines()
            if line.startswith("| ") and "host-bound" not in line}
    assert rows == {"eager": "2 of 5", "triton": "0 of 5"}, timers


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


def test_cpu_main_report_is_short_and_says_why_fast_p_is_missing(cli, tmp_path):
    """On a CPU every time is interpreted: fast_p is '-' with the reason, never 0%; tasks without
    a reference are one line, not 129 table rows; the per-shape detail goes to a file of its own."""
    import synthetic_store as synth
    store = synth.build_cpu_main(tmp_path / "mkbench.sqlite")
    code, _, err = cli("report", "--store", store, "-o", tmp_path / "latest.md")
    assert code == 0, err
    text = (tmp_path / "latest.md").read_text()
    assert len(text.splitlines()) < 300, len(text.splitlines())
    fast_p = text.split("### fast_p")[1].split("###")[0]
    line = next(row for row in fast_p.splitlines() if "| reference " in row)
    assert "interpreted: times under an interpreter are not speed" in line and "%" not in line
    assert ("72/201 candidates correct" in text
            and "129 task(s) without a candidate (`missing`): task_072, task_073" in text)
    candidates = text.split("## Candidates")[1].split("## Rates")[0]
    assert "| task_071 " in candidates and "| task_072 " not in candidates
    assert "| interpreted " in candidates  # speedups of interpreted runs are not shown as numbers
    detail = (tmp_path / "latest-detail.md").read_text()
    assert "[latest-detail.md](latest-detail.md)" in text
    # candidate, eager and torch.compile rows per referenced task, one per missing task; skipped rows left out
    assert sum("| task_" in line for line in detail.splitlines()) == 72 * 3 + 129


def test_report_shows_verdicts_framework_share_and_recorded_scores(cli, tmp_path):
    import synthetic_store as synth
    store = synth.build_imported(tmp_path / "imported.sqlite")
    code, out, err = cli("report", "--store", store, "--no-run-detail")
    assert code == 0, err
    verdicts = out.split("## Verdicts and framework share")[1].split("\n## ")[0]
    activation = next(row for row in verdicts.splitlines() if "| activation " in row)
    # one framework verdict, median share 90%, every measured row above the run's 0.5 threshold, one warning
    assert [c.strip() for c in activation.split("|")[5:-1]] == ["1", "0", "1", "0", "90%", "100%", "1"]
    header = next(row for row in verdicts.splitlines() if row.startswith("| hw"))
    assert [c.strip() for c in header.split("|")[6:10]] == ["incorrect", "framework", "correct",
                                                            "framework share (median)"]
    recorded = out.split("## Recorded scores of imported candidates")[1].split("\n## ")[0]
    row = next(r for r in recorded.splitlines() if "| kb_l1_1 " in r)
    assert "| a100 " in row and "| 2.00 " in row and "| 1.00 " in row  # recorded 2.0, mkbench 100/50 = 2.0, ratio 1.0
    levels = out.split("### Per level and category")[1].split("\n## ")[0].split("\n#")[0]
    assert any(r.startswith("| h100 | cuda-l1-a100 |       2 | fusion ") for r in levels.splitlines()), levels
    code, out, err = cli("analyze", "verdicts", "--store", store)
    assert code == 0, err
    assert "## Verdicts and framework share" in out and "## Category-aware difficulty" not in out


def test_report_opens_with_the_cuda_l1_headline_and_one_line_per_method(cli, tmp_path):
    import synthetic_store as synth
    store = synth.build_imported(tmp_path / "imported.sqlite")
    code, out, err = cli("report", "--store", store, "--no-run-detail")
    assert code == 0, err
    assert out.index("## Findings") < out.index("## Runs and their environments")
    findings = out.split("## Findings")[1].split("\n## ")[0]
    study = out.split("## CUDA-L1 kernels across hardware")[1].strip().split("\n\n")[0]
    assert study.startswith("Kernels optimized for a100") and study in findings  # the study's own headline
    methods = findings.split("Per candidate method: ")[1]
    assert methods.startswith("cuda-l1-a100 (cuda) on h100: ") and "candidates correct" in methods
    assert "eager (" not in methods and "torch_compile (" not in methods  # baselines are not candidates


def test_json_export_is_one_document(cli, h100_store, tmp_path):
    from mkbench.exporter import json_document
    from mkbench.store import Store
    code, _, err = cli("report", "--store", h100_store, "--format", "json", "-o", tmp_path / "r.json")
    assert code == 0, err
    doc = json.loads((tmp_path / "r.json").read_text())
    store = Store(h100_store)
    try:
        assert doc == json.loads(json.dumps(json_document(store, [1]), sort_keys=True, default=str))
    finally:
        store.close()
    assert doc["runs"][0]["machine"]["device_name"] == "NVIDIA H100 80GB HBM3" and len(doc["results"]) > 100


def test_a_share_reads_100_or_0_percent_only_when_exact():
    from mkbench.analysis.report import _pct

    assert [_pct(x) for x in (1.0, 200 / 201, 0.9999, 0.5, 1 / 201, 1e-5, 0.0, None)] == \
        ["100%", "99.5%", "99.9%", "50%", "0.5%", "0.1%", "0%", "-"]
