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
