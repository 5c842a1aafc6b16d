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
    store = Store(store_path)
    try:
        return {(r["task"], r["shape"], r["dtype"], r["method"]): r for r in store.results()
                if r["time_median_us"] and not r["is_baseline"] and r["verdict"] == "correct"}
    finally:
        store.close()


def _percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def repeatability(a: str, b: str) -> dict:
    ra, rb = _rows(a), _rows(b)
    out = {}
    for label, keep in (("all shapes", lambda k: True), ("large shapes", lambda k: k[1] == "large")):
        diffs = [abs(math.log(ra[k]["speedup_eager"] / rb[k]["speedup_eager"]))
                 for k in ra if k in rb and keep(k) and ra[k]["speedup_eager"] and rb[k]["speedup_eager"]]
        times = [abs(math.log(ra[k]["time_median_us"] / rb[k]["time_median_us"])) for k in ra if k in rb and keep(k)]
        if diffs:
            out[label] = {"rows": len(diffs), "speedup_median_abs_log_ratio": statistics.median(diffs),
                          "speedup_p95_abs_log_ratio": _percentile(diffs, 0.95),
                          "time_median_abs_log_ratio": statistics.median(times), "time_p95_abs_log_ratio": _percentile(times, 0.95)}
    return out


def _reference_setup(task_name: str, dtype: str):
    import torch
    from .candidate import load_python_candidate
    from .plugins import build_registry
    from .task import DTYPES
    reg = build_registry()
    task = reg.task(task_name)
    backend = reg.backend("triton")
    fn = load_python_candidate(backend.reference_dir() / task.category / f"{task.name}.py", task.name)
    shape = next(s for s in task.shapes if s.role == "large")
    gen = torch.Generator(device="cuda").manual_seed(1)
    inputs = task.make_inputs(shape, DTYPES[dtype], gen)
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


def ncu(store_path: str, targets: list[str]) -> list[dict]:
    rows = _rows(store_path)
    out = []
    for target in targets:
        task, dtype = target.split(":")
        cmd = ["ncu", "--csv", "--metrics", "gpu__time_duration.sum", "--profile-from-start", "off",
               "--clock-control", "none", "--cache-control", "all", sys.executable, "-m", "mkbench.harness_bench",
               "ncu-target", task, dtype]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        text = proc.stdout[proc.stdout.find('"ID"'):] if '"ID"' in proc.stdout else ""
        durations = []
        for rec in csv.DictReader(io.StringIO(text)):
            if rec.get("Metric Name") == "gpu__time_duration.sum":
                value = float(rec["Metric Value"].replace(",", ""))
                unit = rec.get("Metric Unit", "nsecond")
                durations.append(value * {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6}.get(unit, 1e-3))
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
    hw = next(p for p in reg.hardware.values() if p.device == "cuda" and p.matches({"accelerator": "cuda", "vendor": "nvidia", "device_name": name}))
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
    cmd, *rest = argv
    if cmd == "repeatability":
        print(json.dumps(repeatability(rest[0], rest[1]), indent=1))
    elif cmd == "ncu-target":
        ncu_target(rest[0], rest[1])
    elif cmd == "ncu":
        result = ncu(rest[0], rest[2:])
        Path(rest[1]).write_text(json.dumps(result, indent=1))
        print(json.dumps(result, indent=1))
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
