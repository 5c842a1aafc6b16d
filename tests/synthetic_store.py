"""A synthetic results store with known structure, for testing the analyses: correctness driven
mostly by category (planted probabilities 0.0 .. 0.95) and only slightly by method (+-0.04),
known speedups, and one task whose speedup differs 6x between two profiles."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mkbench.store import Store

CATEGORY_P = {"activation": 0.95, "reduce": 0.8, "matmul": 0.6, "normalization": 0.4, "quantization": 0.15,
              "fusion": 0.0}
METHOD_DELTA = {"model_a": 0.04, "model_b": 0.0, "model_c": -0.04}
TASKS_PER_CATEGORY = 12
EAGER_US, COMPILE_US = 100.0, 80.0
SPEEDUP = {"model_a": 2.0, "model_b": 1.25, "model_c": 0.5}  # vs eager, on every correct task
SPREAD_TASK = "activation_00"  # speedup 3.0 on h100 and 0.5 on h200 for model_a


def _row(task, category, method, verdict, time_us, baseline=False, shape_bytes=4e8):
    return {"task": task, "category": category, "shape": "large", "shape_role": "large", "dtype": "float32",
            "backend": method if baseline else "triton", "method": method, "is_baseline": int(baseline),
            "verdict": verdict, "compile_status": "ok", "correct_status": verdict if verdict != "hack" else "correct",
            "perf_status": "timed" if time_us else "not_run", "error": None if verdict == "correct"
            else f"planted {verdict}",
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
                    store.record_unit(rid, task, "eager", "eager",
                                      [_row(task, category, "eager", "correct", EAGER_US, True, b)])
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


def _cpu_row(task, category, method, verdict, shape, baseline=False, time_us=None):
    backend = method if baseline else "triton"
    return {"task": task, "category": category, "shape": shape, "shape_role": "small" if shape == "small" else "large",
            "dtype": "float32", "backend": backend, "method": method, "is_baseline": int(baseline), "verdict": verdict,
            "compile_status": "ok" if verdict == "correct" else verdict, "correct_status": verdict,
            "perf_status": "interpreted" if time_us else verdict, "error": None if verdict in ("correct", "skipped")
            else f"planted {verdict}", "time_median_us": time_us, "interpreted": 1 if time_us else 0, "flops": 1e6,
            "bytes": 1e6, "timer": "perf_counter" if time_us else None, "extra": {}}


def build_cpu_main(path: Path, referenced: int = 72, missing: int = 129) -> Path:
    """The main job on a CPU in miniature: `referenced` tasks whose Triton reference ran under the
    interpreter (its times, and the baselines', marked interpreted; large shapes skipped), and
    `missing` tasks without a reference kernel."""
    categories = list(CATEGORY_P) + ["loss", "math", "index", "pooling", "random", "spatial", "convolution",
                                     "linear_algebra", "optimizer"]
    store = Store(path)
    try:
        rid = store.start_run("cpu-main", {"backend": "triton"}, "cpu", "triton", "reference",
                              {"cpu": "synthetic CPU"}, {"python": "3.x", "packages": {"torch": "synthetic"}}, 7)
        for i in range(referenced + missing):
            task, category = f"task_{i:03d}", categories[i % len(categories)]
            if i < referenced:
                for base, t in (("eager", 900.0), ("torch_compile", 1500.0)):
                    store.record_unit(rid, task, base, base,
                                      [_cpu_row(task, category, base, "correct", "small", True, t),
                                                              _cpu_row(task, category, base, "skipped", "large", True)])
                store.record_unit(rid, task, "triton", "reference",
                                  [_cpu_row(task, category, "reference", "correct", "small", time_us=40000.0),
                                   _cpu_row(task, category, "reference", "skipped", "large")])
            else:
                store.record_unit(rid, task, "triton", "reference",
                                  [_cpu_row(task, category, "reference", "missing", "small"),
                                   _cpu_row(task, category, "reference", "skipped", "large")])
        store.set_run_status(rid, "finished")
    finally:
        store.close()
    return path


def build_imported(path: Path) -> Path:
    """Imported KernelBench-style candidates on an H100 with what newer stores carry: a
    `framework` verdict, extra["framework_share"] and extra["static_warnings"], the run's
    framework threshold in its configuration, and the importer's manifest entry in
    extra["import"] (level, GPU set, recorded speedup)."""
    store = Store(path)
    try:
        rid = store.start_run("imported", {"framework_threshold": 0.5}, "h100", "cuda", "cuda-l1-a100",
                              {"device_name": "NVIDIA H100 80GB HBM3"}, {"python": "3.x", "packages": {"torch": "x"}},
                              3)
        planted = [  # task, level, category, verdict, candidate us, framework share, recorded score
            ("kb_l1_1", 1, "matmul", "correct", 50.0, 0.1, 2.0),
            ("kb_l1_2", 1, "activation", "framework", 90.0, 0.9, 1.5),
            ("kb_l2_1", 2, "fusion", "correct", 25.0, 0.2, 3.0),
            ("kb_l2_2", 2, "fusion", "incorrect", None, None, 1.1),
        ]
        for task, level, category, verdict, t, share, score in planted:
            for base, bt in (("eager", 100.0), ("torch_compile", 80.0)):
                store.record_unit(rid, task, base, base,
                                  [dict(_row(task, category, base, "correct", bt, True), timer="cuda_event")])
            extra = {"import": {"importer": "kernelbench-rows", "level": level, "gpu_set": "a100",
                                "recorded": {"score_default": score}},
                     "static_warnings": ["line 3: framework_op: torch.matmul outside a kernel"] if share
                     and share > 0.5 else []}
            if share is not None:
                extra["framework_share"] = share
            row = dict(_row(task, category, "cuda-l1-a100", verdict, t), backend="cuda", timer="cuda_event",
                       extra=extra)
            store.record_unit(rid, task, "cuda", "cuda-l1-a100", [row])
        store.set_run_status(rid, "finished")
    finally:
        store.close()
    return path
