"""How close PyTorch's own eager comes to the task's bfloat16 contract (by default rtol = atol = 0.02, atol x rms) on
two tasks whose eager baseline was `incorrect` once on a large shape (reports/2026-11-28-kept-baselines, calls 42-43): many
seeds, inputs made on the GPU as mkbench makes them, the float64 reference on the GPU. Per seed: the worst ratio of
|eager - reference| to the contract's bound (over 1: outside), and for add_layernorm the worst row's mean and std of
h = x + residual (the task rounds h to bfloat16 before normalising, and its comment bounds |mean| at about 3).
    python3 reports/2026-11-28-bf16-edge/probe.py SECONDS
"""
import os
import sys
import time

import torch

from mkbench.inputs import generate
from mkbench.task import baseline_reference, load_task_file

budget = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
# a CPU smoke: PROBE_DEVICE=cpu PROBE_SHAPE=small
device, shape_name = os.environ.get("PROBE_DEVICE", "cuda"), os.environ.get("PROBE_SHAPE", "large")
print(torch.cuda.get_device_name(0) if device == "cuda" else device, torch.__version__, flush=True)
for path in ("tasks/fusion/add_layernorm.py", "tasks/fusion/matmul_swish_scale_bias.py"):
    task = load_task_file(path)
    shape = task.shape(shape_name)
    eager = baseline_reference(task)
    t0, worst, outside, seeds = time.monotonic(), [], 0, 0
    while time.monotonic() - t0 < budget / 2:
        seed = seeds
        seeds += 1
        inputs = generate(task, shape, "bfloat16", seed, device)
        with torch.no_grad():
            out = eager(*inputs)
            ref = task.reference(*[v.double() for v in inputs])
        out = out[0] if isinstance(out, tuple) else out
        ref = ref[0] if isinstance(ref, tuple) else ref
        tol = task.contract.tolerances["bfloat16"]  # the task's contract as it stands (the default: 0.02, 0.02)
        rms = ref.pow(2).mean().sqrt()
        ratio = (out.double() - ref).abs() / (tol.atol * rms + tol.rtol * ref.abs())
        k = int(ratio.argmax())
        r = float(ratio.max())
        outside += int(r > 1)
        note = ""
        if task.name == "add_layernorm":
            h = inputs[0].double() + inputs[1].double()
            row = h[k // h.shape[1]]
            note = f" worst row: mean {float(row.mean()):+.2f} std {float(row.std()):.3f}"
        worst.append(r)
        print(f"{task.name} seed {seed}: max ratio {r:.3f}{note}", flush=True)
        del inputs, out, ref, ratio
        if device == "cuda":
            torch.cuda.empty_cache()
    worst.sort()
    print(f"== {task.name}: {seeds} seeds, {outside} outside the contract; max ratio median "
          f"{worst[len(worst) // 2]:.3f}, max {worst[-1]:.3f}", flush=True)
