"""E4M3 spacing on a device: is floor(log2(2^k)) exact there, and does the task's contract give the
exact step at every code and accept the tie x / scale = 8.5 seen on an H200?
    python3 fp8_spacing.py cuda      (from the repository root, mkbench installed)"""
import sys

import torch

from mkbench.task import load_task_file

task = load_task_file("tasks/quantization/fp8_e4m3_quant_per_tensor.py")
m = sys.modules[task.reference.__module__]
dev = sys.argv[1] if len(sys.argv) > 1 else "cpu"
values = m.decode_e4m3(torch.arange(0, 0x7F, dtype=torch.uint8, device=dev))
steps = m.e4m3_spacing(values[:-1].clone())
print(dev, "spacing exact for every finite E4M3 value:", bool((steps == values[1:] - values[:-1]).all()))
powers = torch.tensor([2.0 ** k for k in range(-6, 9)], dtype=torch.float64, device=dev)
exact = torch.floor(torch.log2(powers)) == torch.arange(-6, 9, device=dev)
print(dev, "floor(log2(2^k)) == k for k in -6..8:", bool(exact.all()),
      "wrong at k =", [k for k, ok in zip(range(-6, 9), exact.tolist()) if not ok])
got, expected = (torch.tensor([c], dtype=torch.uint8, device=dev) for c in (0x51, 0x50))
res = m.compare_e4m3(got, expected, torch.tensor([8.5], dtype=torch.float64, device=dev))
print(dev, "tie x / scale = 8.5, got 9 for 8, accepted:", res.ok, res.message)
