"""Call 48 recorded mkbench's Triton lion reference `incorrect` on one element of its large float32 timing input 1
(run seed 1886021933): param off by exactly 2 lr, a momentum sign that came out the other way at one step, at a
position the contract does not exempt. This makes that input again as mkbench makes it, runs the Triton reference
several times (do repeated calls agree bit for bit?) and the task's float64 reference, and for every element off by
more than lr prints its inputs, the momentum c = beta1 m + (1 - beta1) g at each step in float64 and as float32
computes it, and whether the contract's near-tie window covers that step.

    python3 reports/2026-11-28-corpus-scaling/lion_probe.py [RUN_SEED] [TIMING_INPUT] [REPEATS]     # on a GPU
    TRITON_INTERPRET=1 PROBE_DEVICE=cpu PROBE_SHAPE=small PROBE_OFF=0 python3 reports/2026-11-28-corpus-scaling/lion_probe.py  # CPU smoke
"""
import os
import sys

import torch

from mkbench.candidate import load_python_candidate
from mkbench.inputs import generate, seed_for
from mkbench.task import load_task_file

run_seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1886021933
k = int(sys.argv[2]) if len(sys.argv) > 2 else 1
repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 20
device, shape_name = os.environ.get("PROBE_DEVICE", "cuda"), os.environ.get("PROBE_SHAPE", "large")
off_by = float(os.environ.get("PROBE_OFF", "1.5"))  # x lr: what counts as off (0 in a smoke shows every element)
print(torch.cuda.get_device_name(0) if device == "cuda" else device, torch.__version__, flush=True)

task = load_task_file("tasks/optimizer/lion.py")
shape = task.shape(shape_name)
seed = seed_for(run_seed, "timing", task.name, shape_name, "float32", k)
inputs = generate(task, shape, "float32", seed, device)
param, grads, exp_avg, lr, beta1, beta2, wd = inputs
kernel = load_python_candidate("backends/triton/kernels/optimizer/lion.py", task.name)

outs = [kernel(*inputs) for _ in range(repeats)]
if device == "cuda":
    torch.cuda.synchronize()
p0 = outs[0][0]
differ = [i for i, (p, m) in enumerate(outs) if not (torch.equal(p, p0) and torch.equal(m, outs[0][1]))]
print(f"seed {seed} (run seed {run_seed}, timing input {k}): {repeats} Triton calls, "
      f"{len(differ)} differ bit for bit from the first: {differ[:10]}", flush=True)

p_ref, m_ref = task.reference(*[v.double() if isinstance(v, torch.Tensor) else v for v in inputs])
for i, (p, _) in enumerate(outs):
    off = ((p.double() - p_ref).abs() > off_by * lr).nonzero().flatten()
    if i == 0 or off.numel():
        print(f"call {i}: {off.numel()} element(s) off by more than {off_by} lr: {off[:10].tolist()}", flush=True)

u = torch.finfo(torch.float32).eps / 2
for j in ((p0.double() - p_ref).abs() > off_by * lr).nonzero().flatten()[:10].tolist():
    m64, m32 = exp_avg[j].double(), exp_avg[j].float()
    b1 = torch.tensor(beta1, dtype=torch.float32)
    print(f"element {j}: param {float(param[j]):.9g} exp_avg {float(exp_avg[j]):.9g} "
          f"got {float(p0[j]):.9g} expected {float(p_ref[j]):.9g}")
    for s in range(grads.shape[0]):
        g64, g32 = grads[s, j].double(), grads[s, j].float()
        a, b = beta1 * m64, (1 - beta1) * g64
        c64 = a + b
        c32 = b1 * m32 + (1.0 - b1) * g32
        near = abs(float(c64)) <= 1e-5 * (abs(float(a)) + abs(float(b)))
        print(f"  step {s}: g {float(g64):.9g} c float64 {float(c64):.6e} float32 {float(c32):.6e} "
              f"(signs {int(torch.sign(c64))} / {int(torch.sign(c32))}; near-tie window: {near}; "
              f"|c| / (|a| + |b|) = {abs(float(c64)) / (abs(float(a)) + abs(float(b)) + 1e-300):.3e}, u = {u:.1e})")
        m64 = beta2 * m64 + (1 - beta2) * g64
        m32 = torch.tensor(beta2, dtype=torch.float32) * m32 + (1.0 - torch.tensor(beta2, dtype=torch.float32)) * g32
print("done", flush=True)
