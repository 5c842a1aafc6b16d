"""The harness benchmarks' CPU-checkable parts: the repeatability statistic over two stores, and
the setup that runs a Triton reference under ncu (here on the CPU through Triton's interpreter)."""

import math

import pytest

from mkbench import harness_bench
from mkbench.store import Store


def _store(path, speedups):
    store = Store(path)
    rid = store.start_run("rep", {}, "cpu", "triton", "reference", {"device_name": "test"}, {"python": "3"}, 1)
    rows = {}
    for (task, shape, role), s in speedups.items():
        rows.setdefault(task,
                        []).append({"task": task, "category": "activation", "shape": shape, "shape_role": role,
                                    "dtype": "float32",
               "backend": "triton", "method": "reference", "is_baseline": 0, "verdict": "correct",
               "compile_status": "ok", "correct_status": "correct", "perf_status": "timed", "error": None,
               "time_median_us": 100.0 / s, "speedup_eager": s, "interpreted": 0, "flops": 1.0, "bytes": 1.0,
               "extra": {}})
    for task, task_rows in rows.items():
        store.record_unit(rid, task, "triton", "reference", task_rows)
    store.set_run_status(rid, "finished")
    store.close()
    return str(path)


def test_repeatability_reports_rows_and_tasks(tmp_path):
    a = {("t1", "small", "small"): 1.0, ("t1", "large", "large"): 2.0, ("t2", "large", "large"): 1.0}
    # t1 large is 10% faster in run b, t1 small 10% slower: they cancel in t1's geometric mean
    b = {("t1", "small", "small"): 1.0 / 1.1, ("t1", "large", "large"): 2.2, ("t2", "large", "large"): 1.0}
    out = harness_bench.repeatability(_store(tmp_path / "a.sqlite", a), _store(tmp_path / "b.sqlite", b))
    every, large = out["all shapes"], out["large shapes"]
    assert every["rows"] == 3 and every["tasks"] == 2 and large["rows"] == 2
    assert every["speedup_median_abs_log_ratio"] == pytest.approx(math.log(1.1))
    assert every["task_speedup_p95_abs_log_ratio"] == pytest.approx(0.0, abs=1e-12)
    assert large["task_speedup_p95_abs_log_ratio"] == pytest.approx(math.log(1.1))
    assert large["time_median_abs_log_ratio"] == pytest.approx(math.log(1.1) / 2)


def test_ncu_target_setup_runs_the_reference():
    import torch

    from mkbench.plugins import build_registry
    fn, inputs = harness_bench._reference_setup("gelu", "float32", device="cpu", role="small")
    task = build_registry().task("gelu")
    assert torch.allclose(fn(*inputs), task.reference(*inputs).to(torch.float32), atol=1e-5, rtol=1e-5)


NCU_CSV = '''==PROF== Connected to process 4242 (/usr/bin/python3.12)
==PROF== Profiling "_gelu_kernel" - 0: 0%....50%....100% - 1 pass
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","python3.12","127.0.0.1","_gelu_kernel","1","7","(1024, 1, 1)","(131072, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","104.58"
"1","4242","python3.12","127.0.0.1","_gelu_kernel","1","7","(1024, 1, 1)","(131072, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","1,250"
==PROF== Disconnected from process 4242
'''  # noqa: E501 (Nsight Compute's CSV output verbatim, one record a line)


def test_ncu_csv_durations_in_microseconds():
    assert harness_bench.ncu_durations_us(NCU_CSV) == pytest.approx([104.58, 1.25])
    assert harness_bench.ncu_durations_us("==ERROR== profiling is not supported\n") == []
    with pytest.raises(ValueError, match="unknown unit"):
        harness_bench.ncu_durations_us(NCU_CSV.replace('"usecond"', '"cycle"'))
