"""Why the CUDA/HIP `hypot` references were `incorrect` on an H200 (reports/2026-11-27-portability:
"got 0, expected 1.61835e-38"): hypotf on subnormal and tiny inputs under NVRTC's options, against
float64. Prints one line per (variant, input pair) and the reference kernel's worst rows on the task's
own inputs. Run on a GPU: python3 reports/2026-11-28-calls/hypot_probe.py"""
import importlib.util
import sys

import cupy
import numpy as np
import torch

SRC = r"""
extern "C" __global__ void plain(const float* a, const float* b, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = hypotf(a[i], b[i]); }
extern "C" __global__ void wide(const float* a, const float* b, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = (float)hypot((double)a[i], (double)b[i]); }
extern "C" __global__ void copy(const float* a, const float* b, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a[i]; }
"""
pairs = [(1.1e-38, 1.1e-38), (1e-39, 1e-39), (1e-40, 0.0), (1.4e-45, 0.0), (3e-39, 4e-39), (1e-20, 1e-20),
         (3e38, 1e38), (1e-25, 1e-30)]
a = torch.tensor([p[0] for p in pairs], dtype=torch.float32, device="cuda")
b = torch.tensor([p[1] for p in pairs], dtype=torch.float32, device="cuda")
exact = torch.hypot(a.double(), b.double()).float().cpu()
print("torch.hypot float32 on GPU:", torch.hypot(a, b).cpu().tolist())
print("float64 reference        :", exact.tolist())
for opts in [(), ("--ftz=false",), ("--ftz=true",), ("--use_fast_math",), ("--std=c++17",)]:
    try:
        m = cupy.RawModule(code=SRC, options=opts)
    except Exception as e:  # noqa: BLE001
        print(opts, "compile failed:", e)
        continue
    for name in ("copy", "plain", "wide"):
        y = torch.empty_like(a)
        m.get_function(name)((1,), (32,), (a.data_ptr(), b.data_ptr(), y.data_ptr(), np.int32(len(pairs))))
        torch.cuda.synchronize()
        print(f"{str(opts):22} {name:6}", y.cpu().tolist())

# the reference kernel on the task's own inputs
sys.path.insert(0, ".")
spec = importlib.util.spec_from_file_location("ref_hypot", "backends/cuda/kernels/math/hypot.py")
ref = importlib.util.module_from_spec(spec); spec.loader.exec_module(ref)
tspec = importlib.util.spec_from_file_location("task_hypot", "tasks/math/hypot.py")
task = importlib.util.module_from_spec(tspec); tspec.loader.exec_module(task)
for dtype in (torch.float32, torch.bfloat16, torch.float16):
    g = torch.Generator(device="cpu").manual_seed(0)
    try:
        x, y = task.make_inputs({"rows": 64, "cols": 1024}, dtype, g)
    except Exception as e:  # noqa: BLE001
        print("make_inputs:", e)
        break
    x, y = x.cuda(), y.cuda()
    got = ref.kernel_function(x, y).double()
    want = torch.hypot(x.double(), y.double()).to(dtype).double()
    fin = torch.isfinite(want)
    err = ((got - want).abs() / want.abs().clamp_min(torch.finfo(dtype).tiny))[fin]
    bad = (got - want).abs()[fin] > 1e-4 * want.abs()[fin] + 1.4e-45
    idx = torch.nonzero(bad).flatten()[:5]
    print(dtype, "bad", int(bad.sum()), "of", int(fin.sum()),
          [(float(x[fin][i]), float(y[fin][i]), float(got[fin][i]), float(want[fin][i])) for i in idx])
