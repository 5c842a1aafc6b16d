"""The portability matrix (mkbench.analysis.portability, `mkbench analyze portability`, the report's
portability section) over small stores built here: three backends on one H100 profile, each store
with its own eager baseline, planted so that every kind of cell occurs once: correct with a
speedup, slow for each derivable reason, not correct, no reference kernel, not in the run, and
correct without an eager time to divide."""

import json
from pathlib import Path

import pytest

from mkbench.analysis import load_results
from mkbench.analysis.portability import SLOW, portability, read_limitation
from mkbench.candidate import source_hash
from mkbench.plugins import build_registry
from mkbench.store import Store

PROFILES = build_registry().hardware
CATEGORY = {"gelu": "activation", "matmul": "matmul", "layer_norm": "normalization", "cumsum": "math"}
WORK = {"gelu": (1e8, 4e8), "matmul": (2e12, 6e7), "layer_norm": (1e8, 4e8), "cumsum": (1e8, 4e8)}  # flops, bytes
EAGER_US = {"gelu": 150.0, "matmul": 40000.0, "layer_norm": 200.0, "cumsum": 300.0}
EAGER_TIMER = "cuda_event"
# backend -> task -> (verdicts of the two large rows, speedup over eager or None); absent: not in the run
PLAN = {
    "cuda": {"gelu": (("correct", "correct"), 2.0), "matmul": (("correct", "correct"), 0.25),
             "layer_norm": (("correct", "correct"), 1.0), "cumsum": (("missing", "missing"), None)},
    "pallas": {"gelu": (("correct", "correct"), 1.5), "matmul": (("correct", "incorrect"), None),
               "layer_norm": (("correct", "correct"), 0.4)},
    "sycl": {"gelu": (("correct", "correct"), 0.5), "matmul": (("correct", "correct"), 0.1),
             "layer_norm": (("correct", "correct"), 1.2), "cumsum": (("correct", "correct"), 3.0)},
}
TIMER = {"cuda": "cuda_event", "pallas": "device-sync-host-clock", "sycl": "opencl-profiling-events"}
DECLARED = "no tensor cores in OpenCL C"


def _row(task, backend, method, dtype, verdict, time_us, timer, source=None):
    flops, nbytes = WORK[task]
    return {"task": task, "category": CATEGORY[task], "shape": "large", "shape_role": "large", "dtype": dtype,
            "backend": backend, "method": method, "is_baseline": int(method == "eager"), "verdict": verdict,
            "compile_status": "ok", "correct_status": verdict, "perf_status": "timed" if time_us else "not_run",
            "error": None if verdict == "correct" else f"planted {verdict}", "time_median_us": time_us,
            "interpreted": 0, "flops": flops, "bytes": nbytes, "timer": timer if time_us else None,
            "source_path": str(source) if source else None, "source_hash": source_hash(source) if source else None,
            "extra": {"host_bound_samples": 2} if backend == "sycl" and task == "gelu" else {}}


def _build(path: Path, backend: str, kernels: Path) -> Path:
    store = Store(path)
    try:
        rid = store.start_run(f"{backend}-refs", {}, "h100", backend, "reference",
                              {"device_name": "NVIDIA H100 80GB HBM3"}, {"python": "3.x", "packages": {}}, 1)
        for task, (verdicts, sp) in PLAN[backend].items():
            # sycl's run: eager fails its contract on layer_norm, so that cell has nothing to divide
            eager_ok = not (backend == "sycl" and task == "layer_norm")
            store.record_unit(rid, task, "eager", "eager",
                              [_row(task, "eager", "eager", dt, "correct" if eager_ok else "incorrect",
                                    EAGER_US[task] if eager_ok else None, EAGER_TIMER)
                               for dt in ("float32", "float16")])
            source = None
            if backend == "sycl" and task == "matmul":
                source = kernels / "matmul.py"
                source.write_text(f'import numpy as np\n\nLIMITATION = ("{DECLARED}")\n')
            t = EAGER_US[task] / (sp or 1.0)
            store.record_unit(rid, task, backend, "reference",
                              [_row(task, backend, "reference", dt, v, t if v == "correct" else None, TIMER[backend],
                                    source) for dt, v in zip(("float32", "float16"), verdicts)])
        store.set_run_status(rid, "finished")
    finally:
        store.close()
    return path


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    d = tmp_path_factory.mktemp("port")
    (d / "kernels").mkdir()
    return [_build(d / f"{b}.sqlite", b, d / "kernels") for b in PLAN]


@pytest.fixture(scope="module")
def matrix(stores):
    found = portability(load_results(stores), PROFILES)
    assert len(found) == 1
    return found[0]


def test_per_backend_counts_and_medians(matrix):
    pb = matrix.per_backend.set_index("backend")
    assert matrix.backends == ["cuda", "pallas", "sycl"] and matrix.device == "NVIDIA H100 80GB HBM3"
    assert pb.loc["cuda", ["tasks", "correct", "missing", "not_run", "timed"]].tolist() == [3, 3, 1, 0, 3]
    assert pb.loc["pallas", ["tasks", "correct", "missing", "not_run", "timed"]].tolist() == [3, 2, 0, 1, 2]
    assert pb.loc["sycl", ["tasks", "correct", "missing", "not_run", "timed"]].tolist() == [4, 4, 0, 0, 3]
    assert pb.loc["cuda", "median_speedup_eager"] == pytest.approx(1.0)      # 0.25, 1.0, 2.0
    assert pb.loc["pallas", "median_speedup_eager"] == pytest.approx(0.95)   # 0.4, 1.5
    assert pb.loc["sycl", "median_speedup_eager"] == pytest.approx(0.5)      # 0.1, 0.5, 3.0
    assert (pb.loc["pallas", "rows_correct"], pb.loc["pallas", "rows"]) == (5, 6)
    # only gelu has a speedup on all three: the like-with-like medians are gelu's
    assert matrix.common_tasks == ["gelu"]
    assert pb["median_common"].tolist() == pytest.approx([2.0, 1.5, 0.5])
    assert (pb.loc["sycl", "slowest"], pb.loc["sycl", "fastest"]) == ("matmul", "cumsum")


def test_slow_cells_carry_the_reason(matrix):
    slow = matrix.slow
    assert list(zip(slow["task"], slow["backend"])) == [("matmul", "sycl"), ("matmul", "cuda"),
                                                        ("layer_norm", "pallas")]
    assert (slow["speedup_eager"] < SLOW).all()  # sycl gelu at exactly 0.5 is not listed
    reason = dict(zip(slow["backend"], slow["reason"]))
    assert reason["sycl"].startswith(f"declared: {DECLARED}")  # read from the measured source
    assert "OpenCL profiling events" in reason["sycl"]
    assert "compute-bound at" in reason["cuda"] and "of peak FLOPs (eager" in reason["cuda"]
    assert "timed by" not in reason["cuda"]  # the same timer as eager: not a reason
    assert "host clock to a device-wide sync" in reason["pallas"] and "memory-bound at" in reason["pallas"]


def test_declared_limitation_only_from_the_measured_source(tmp_path):
    import pandas as pd

    from mkbench.analysis.portability import declared_limitation
    f = tmp_path / "k.py"
    f.write_text('LIMITATION = "old"\n')
    row = {"source_path": str(f), "source_hash": source_hash(f), "category": "x", "task": "k"}
    assert declared_limitation(pd.DataFrame([row])) == "old"
    f.write_text('LIMITATION = "edited since the run"\n')
    assert declared_limitation(pd.DataFrame([row])) is None
    assert read_limitation(f) == "edited since the run"


def test_cells_without_a_measurement_say_why(matrix):
    cells = matrix.cells.set_index(["task", "backend"])
    assert cells.loc[("gelu", "cuda"), "speedup_eager"] == pytest.approx(2.0)
    assert cells.loc[("cumsum", "cuda"), "note"] == "no reference kernel for this task"
    assert cells.loc[("cumsum", "pallas"), "note"].startswith("not run")
    assert cells.loc[("matmul", "pallas"), "correct_count"] == "1/2"
    assert cells.loc[("matmul", "pallas"), "note"].startswith("not correct on every shape and dtype (incorrect, 1/2)")
    assert cells.loc[("layer_norm", "sycl"), "correct"]
    assert cells.loc[("layer_norm", "sycl"), "note"].startswith("eager baseline incorrect")
    assert cells["speedup_eager"].isna().sum() == 4


def test_analyze_portability_prints_the_table_and_writes_summary_json(stores, cli, tmp_path):
    args = [a for s in stores for a in ("--store", s)]
    code, out, err = cli("analyze", "portability", *args, "--json", tmp_path / "summary.json")
    assert code == 0, err
    assert out.index("Median per-task speedup over eager") < out.index("| backend") < out.index("| task ")
    assert "| cuda " in out and "0.95x" in out and "declared: " + DECLARED in out
    assert "| portable" not in out  # the matrix only with --matrix
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["device"] == "NVIDIA H100 80GB HBM3"
    assert {b: (v["tasks"], v["correct"], v["median_speedup_eager"]) for b, v in summary["backends"].items()} == {
        "cuda": (3, 3, 1.0), "pallas": (3, 2, 0.95), "sycl": (4, 4, 0.5)}
    assert [(s["task"], s["backend"]) for s in summary["slow"]][0] == ("matmul", "sycl")
    code, out, _ = cli("analyze", "portability", *args, "--matrix")
    assert code == 0 and "| portable" in out


def test_report_section_headline_first_then_tables(stores, cli, tmp_path):
    args = [a for s in stores for a in ("--store", s)]
    code, _, err = cli("report", *args, "-o", tmp_path / "r.md", "--no-run-detail")
    assert code == 0, err
    text = (tmp_path / "r.md").read_text()
    section = text[text.index("## Cross-backend portability"):]
    headline = section.index("Correct on every shape and dtype: cuda 3/3, pallas 2/3, sycl 4/4")
    assert headline < section.index("| backend")
    assert section.index("| backend") < section.index("| task ") < section.index("### More than 2x slower")
    matrix_row = next(line for line in section.splitlines() if line.startswith("| cumsum"))
    assert "- (no reference kernel for this task)" in matrix_row and "- (not run" in matrix_row
    assert "correct 2/2, 3.00x" in matrix_row
    lnorm = next(line for line in section.splitlines() if line.startswith("| layer_norm "))
    assert "correct 2/2, - (eager baseline incorrect" in lnorm
    assert "0%" not in section.split("### More than 2x slower")[0].replace("100%", "")
    assert "The backends' task sets differ: 1 of 4 tasks" in section
    assert "Timers differ from eager's" in section


def test_report_opens_with_the_matrix_headline_before_any_table(stores, cli, tmp_path):
    args = [a for s in stores for a in ("--store", s)]
    code, _, err = cli("report", *args, "-o", tmp_path / "r.md", "--no-run-detail")
    assert code == 0, err
    text = (tmp_path / "r.md").read_text()
    findings = text[text.index("## Findings"):text.index("## Runs and their environments")]
    assert "Correct on every shape and dtype: cuda 3/3, pallas 2/3, sycl 4/4" in findings
    assert "| " not in findings  # no table before the runs
    assert "reference (sycl) on " in findings and "candidates correct" in findings


def test_portable_tasks_are_read_from_the_matrix_cells_a_later_run_replacing_an_earlier(stores, cli, tmp_path):
    """`analyze portability --matrix` said "no" for every task (it was never given the portable set), and
    the report read every run's rows, so that an earlier run's wrong verdict kept a task from being portable
    after a later run (the one the matrix shows) got it right."""
    from mkbench.analysis import load_results
    assert portability(load_results(stores), PROFILES)[0].portable_tasks == ["gelu", "layer_norm"]
    # pallas's matmul again, right this time, in a later store
    again = Store(tmp_path / "pallas-again.sqlite")
    rid = again.start_run("pallas-again", {}, "h100", "pallas", "reference",
                          {"device_name": "NVIDIA H100 80GB HBM3"}, {"python": "3.x", "packages": {}}, 1)
    again.record_unit(rid, "matmul", "eager", "eager",
                      [_row("matmul", "eager", "eager", dt, "correct", EAGER_US["matmul"], EAGER_TIMER)
                       for dt in ("float32", "float16")])
    again.record_unit(rid, "matmul", "pallas", "reference",
                      [_row("matmul", "pallas", "reference", dt, "correct", EAGER_US["matmul"] * 2, TIMER["pallas"])
                       for dt in ("float32", "float16")])
    again.set_run_status(rid, "finished")
    again.close()
    args = [a for s in [*stores, tmp_path / "pallas-again.sqlite"] for a in ("--store", s)]
    m = portability(load_results([*stores, tmp_path / "pallas-again.sqlite"]), PROFILES)[0]
    assert m.portable_tasks == ["gelu", "layer_norm", "matmul"]
    code, out, err = cli("analyze", "portability", *args, "--matrix", "--json", tmp_path / "s.json")
    assert code == 0, err
    cells = [[c.strip() for c in line.split("|")[1:-1]] for line in out.splitlines() if line.startswith("| ")]
    portable = {c[0]: c[-1] for c in cells if len(c) > 2 and CATEGORY.get(c[0]) == c[1]}  # the matrix's rows
    assert portable == {"gelu": "yes", "layer_norm": "yes", "matmul": "yes", "cumsum": "no"}, out
    assert json.loads((tmp_path / "s.json").read_text())["portable_tasks"] == 3
    code, _, err = cli("report", *args, "-o", tmp_path / "r.md", "--no-run-detail")
    assert code == 0, err
    # the findings count pallas's matmul once too, by its last run
    assert "reference (pallas) on h100: 3 of 3 candidates correct" in (tmp_path / "r.md").read_text()
    matmul = next(line for line in (tmp_path / "r.md").read_text().splitlines()
                  if line.startswith("| matmul ") and "| matmul " in line[2:] and "correct 2/2" in line)
    assert matmul.rstrip(" |").endswith("yes"), matmul
