"""A synthetic results store with known structure, for testing the analyses: correctness driven
mostly by category (planted probabilities 0.0 .. 0.95) and only slightly by method (+-0.04),
known speedups, and one task whose speedup differs 6x between two profiles."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mkbench.store import Store

CATEGORY_P = {"activation": 0.95, "reduce": 0.8, "matmul": 0.6, "normalization": 0.4, "quantization": 0.15, "fusion": 0.0}
METHOD_DELTA = {"model_a": 0.04, "model_b": 0.0, "model_c": -0.04}
TASKS_PER_CATEGORY = 12
EAGER_US, COMPILE_US = 100.0, 80.0
SPEEDUP = {"model_a": 2.0, "model_b": 1.25, "model_c": 0.5}  # vs eager, on every correct task
SPREAD_TASK = "activation_00"  # speedup 3.0 on h100 and 0.5 on h200 for model_a


def _row(task, category, method, verdict, time_us, baseline=False, shape_bytes=4e8):
    return {"task": task, "category": category, "shape": "large", "shape_role": "large", "dtype": "float32",
            "backend": method if baseline else "triton", "method": method, "is_baseline": int(baseline),
            "verdict": verdict, "compile_status": "ok", "correct_status": verdict if verdict != "hack" else "correct",
            "perf_status": "timed" if time_us else "not_run", "error": None if verdict == "correct" else f"planted {verdict}",
            "time_median_us": time_us, "interpreted": 0, "flops": 1e8, "bytes": shape_bytes, "extra": {}}


def build(path: Path, hw: str, device_name: str, seed: int, bytes_for=lambda task: 4e8) -> Path:
    rng = np.random.default_rng(seed)
    store = Store(path)
    try:
        for method, delta in METHOD_DELTA.items():
            rid = store.start_run(f"{hw}-{method}", {"planted": True}, hw, "triton", method,
                                  {"device_name": device_name, "driver": "synthetic"},
                                  {"python": "3.x", "packages": {"torch": "synthetic"}}, seed)
            for category, p in CATEGORY_P.items():
                for i in range(TASKS_PER_CATEGORY):
                    task = f"{category}_{i:02d}"
                    b = bytes_for(task)
                    store.record_unit(rid, task, "eager", "eager", [_row(task, category, "eager", "correct", EAGER_US, True, b)])
                    store.record_unit(rid, task, "torch_compile", "torch_compile",
                                      [_row(task, category, "torch_compile", "correct", COMPILE_US, True, b)])
                    correct = rng.random() < max(0.0, min(1.0, p + delta)) if p > 0 else False
                    speedup = SPEEDUP[method]
                    if task == SPREAD_TASK and method == "model_a":
                        correct, speedup = True, (3.0 if hw == "h100" else 0.5)
                    if correct:
                        row = _row(task, category, method, "correct", EAGER_US / speedup, shape_bytes=b)
                    elif rng.random() < 0.1:
                        row = _row(task, category, method, "hack", EAGER_US / 10, shape_bytes=b)
                    else:
                        row = _row(task, category, method, "incorrect", None, shape_bytes=b)
                    store.record_unit(rid, task, "triton", method, [row])
            store.set_run_status(rid, "finished")
    finally:
        store.close()
    return path
