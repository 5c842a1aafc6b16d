"""Benchmarks of the harness itself (numbers, not asserts), run on a GPU:

  python -m mkbench.harness_bench repeatability STORE_A STORE_B   # |log(speedup_a / speedup_b)| across rows
  python -m mkbench.harness_bench ncu-target TASK DTYPE           # run a reference kernel under ncu
  python -m mkbench.harness_bench ncu STORE OUT.json TASK:DTYPE ...  # mkbench median vs ncu gpu__time_duration
  python -m mkbench.harness_bench copy STORE OUT.json TASK:DTYPE ... # achieved vs measured copy bandwidth
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

NCU_CALLS = 5


def _rows(store_path: str) -> dict[tuple, dict]:
    from .store import Store
    from .verdicts import counts_as_correct
    store = Store(store_path)
    try:
        return {(r["task"], r["shape"], r["dtype"], r["method"]): r for r in store.results()
                if r["time_median_us"] and not r["is_baseline"] and counts_as_correct(r["verdict"])}
    finally:
        store.close()


def _percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def repeatability(a: str, b: str) -> dict:
    """|log(speedup_a / speedup_b)| across rows (task, shape, dtype) and across tasks (each task's
    geometric-mean speedup over the rows both runs timed), for all shapes and for large shapes only."""
    ra, rb = _rows(a), _rows(b)
    out = {}
    for label, keep in (("all shapes", lambda k: True), ("large shapes", lambda k: ra[k]["shape_role"] == "large")):
        both = [k for k in ra if k in rb and keep(k) and ra[k]["speedup_eager"] and rb[k]["speedup_eager"]]
        if not both:
            continue
        diffs = [math.log(ra[k]["speedup_eager"] / rb[k]["speedup_eager"]) for k in both]
        times = [abs(math.log(ra[k]["time_median_us"] / rb[k]["time_median_us"])) for k in both]
        per_task: dict[str, list[float]] = {}
        for k, d in zip(both, diffs):
            per_task.setdefault(k[0], []).append(d)
        # the mean of log ratios is the log ratio of the two runs' geometric-mean speedups
        task_diffs = [abs(statistics.fmean(v)) for v in per_task.values()]
        diffs = [abs(d) for d in diffs]
        out[label] = {"rows": len(diffs), "tasks": len(task_diffs),
                      "task_speedup_median_abs_log_ratio": statistics.median(task_diffs),
                      "task_speedup_p95_abs_log_ratio": _percentile(task_diffs, 0.95),
                      "speedup_median_abs_log_ratio": statistics.median(diffs),
                      "speedup_p95_abs_log_ratio": _percentile(diffs, 0.95),
                      "time_median_abs_log_ratio": statistics.median(times),
                      "time_p95_abs_log_ratio": _percentile(times, 0.95)}
    return out


def _reference_setup(task_name: str, dtype: str, device: str = "cuda", role: str = "large"):
    import torch

    from .candidate import load_python_candidate
    from .plugins import build_registry
    from .task import DTYPES
    reg = build_registry()
    task = reg.task(task_name)
    backend = reg.backend("triton")
    fn = load_python_candidate(backend.reference_dir() / task.category / f"{task.name}.py", task.name)
    shape = next(s for s in task.shapes if s.role == role)
    gen = torch.Generator(device=device).manual_seed(1)
    inputs = tuple(v.to(device) if isinstance(v, torch.Tensor) else v
                   for v in task.make_inputs(shape, DTYPES[dtype], gen))
    return fn, inputs


def ncu_target(task_name: str, dtype: str) -> None:
    import torch
    fn, inputs = _reference_setup(task_name, dtype)
    for _ in range(3):  # compile and warm up outside the profiled range
        fn(*inputs)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for _ in range(NCU_CALLS):
        fn(*inputs)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


_UNIT_US = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3, "second": 1e6, "s": 1e6}


def ncu_durations_us(stdout: str) -> list[float]:
    """Every profiled kernel's gpu__time_duration in microseconds, from ``ncu --csv`` output
    (which starts with ==PROF== lines and the target's own prints before the CSV header)."""
    start = stdout.find('"ID"')
    if start < 0:
        return []
    out = []
    for rec in csv.DictReader(io.StringIO(stdout[start:])):
        if rec.get("Metric Name") == "gpu__time_duration.sum":
            unit = rec.get("Metric Unit") or "nsecond"
            if unit not in _UNIT_US:
                raise ValueError(f"ncu reported gpu__time_duration in an unknown unit {unit!r}")
            out.append(float(rec["Metric Value"].replace(",", "")) * _UNIT_US[unit])
    return out


def ncu(store_path: str, targets: list[str]) -> list[dict]:
    rows = _rows(store_path)
    out = []
    for target in targets:
        task, dtype = target.split(":")
        cmd = ["ncu", "--csv", "--metrics", "gpu__time_duration.sum", "--profile-from-start", "off",
               "--clock-control", "none", "--cache-control", "all", sys.executable, "-m", "mkbench.harness_bench",
               "ncu-target", task, dtype]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        durations = ncu_durations_us(proc.stdout)
        mk = rows.get((task, "large", dtype, "reference"))
        entry = {"task": task, "dtype": dtype, "kernels_profiled": len(durations),
                 "mkbench_median_us": mk["time_median_us"] if mk else None}
        if durations and len(durations) % NCU_CALLS == 0:
            entry["ncu_us_per_call"] = sum(durations) / NCU_CALLS
            if mk:
                entry["relative_difference"] = mk["time_median_us"] / entry["ncu_us_per_call"] - 1
        else:
            entry["ncu_error"] = (proc.stderr or proc.stdout)[-400:]
        out.append(entry)
    return out


def copy_bandwidth(store_path: str, targets: list[str]) -> dict:
    """The device's copy bandwidth measured with the harness's own timer (1 GiB device-to-device,
    bytes read plus written), against copy-like reference kernels' achieved bandwidth."""
    import torch

    from .plugins import build_registry
    from .timing import TimingSettings, time_callable
    from .worker import probe
    reg = build_registry()
    name = probe()["device_name"]
    hw = next(p for p in reg.hardware.values() if p.device == "cuda"
              and p.matches({"accelerator": "cuda", "vendor": "nvidia", "device_name": name}))
    n = 1 << 28
    src, dst = torch.randn(n, device="cuda"), torch.empty(n, device="cuda")
    t = time_callable(lambda a: a[1].copy_(a[0]), [(src, dst)], hw, TimingSettings(budget_ms=500))
    copy_gbs = 2 * n * 4 / (t.median_us * 1e-6) / 1e9
    rows = _rows(store_path)
    kernels = []
    for target in targets:
        task, dtype = target.split(":")
        r = rows.get((task, "large", dtype, "reference"))
        if r:
            gbs = r["bytes"] / (r["time_median_us"] * 1e-6) / 1e9
            kernels.append({"task": task, "dtype": dtype, "achieved_gbs": gbs, "fraction_of_copy": gbs / copy_gbs,
                            "fraction_of_datasheet": gbs / hw.memory_bandwidth_gbs})
    return {"device": name, "profile": hw.name, "copy_gbs": copy_gbs, "datasheet_gbs": hw.memory_bandwidth_gbs,
            "copy_fraction_of_datasheet": copy_gbs / hw.memory_bandwidth_gbs, "kernels": kernels}


def main(argv: list[str]) -> int:
    cmd, *rest = argv or ["help"]
    if cmd == "repeatability":
        print(json.dumps(repeatability(rest[0], rest[1]), indent=1))
    elif cmd == "ncu-target":
        ncu_target(rest[0], rest[1])
    elif cmd == "ncu":
        result = []
        # written after each target, so a stage cut off by its time limit keeps what it measured
        for target in rest[2:]:
            result += ncu(rest[0], [target])
            Path(rest[1]).write_text(json.dumps(result, indent=1))
            print(json.dumps(result[-1]), flush=True)
    elif cmd == "copy":
        result = copy_bandwidth(rest[0], rest[2:])
        Path(rest[1]).write_text(json.dumps(result, indent=1))
        print(json.dumps(result, indent=1))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
