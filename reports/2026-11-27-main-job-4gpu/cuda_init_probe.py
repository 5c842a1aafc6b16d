"""Why a worker's CUDA start takes 10-24 s on a 4-GPU H200 host and 1-2 s on a one-GPU one (issue 28).

    python reports/2026-11-27-main-job-4gpu/cuda_init_probe.py > probe.json

Fresh processes, started together in each scenario, each timing its own steps on one GPU (by
CUDA_VISIBLE_DEVICES, as mkbench's workers do): the driver alone through ctypes (cuInit, then the
primary context retained and made current), or torch (import, then torch.cuda.set_device(0) and one
allocation, what mkbench.worker's start does). Scenarios: one process alone (three times), 4 at once
(one per GPU), 12 at once on one GPU, 48 at once (12 per GPU: a --gpus all run's lanes), one
process that sees every GPU; torch again under mkbench's confinement (alone, 12 on one GPU).
`... cuda_init_probe.py alloc`: 1 GiB of device memory allocated, written, freed and the cache emptied,
20 times per process (a judge's release per unit), alone, 12 on one GPU, 12 per GPU.
Prints JSON: per scenario the median and max of each step and the wall.
"""
import json
import os
import statistics
import subprocess
import sys
import time

CHILD_DRIVER = r"""
import ctypes, json, time
t0 = time.monotonic()
cu = ctypes.CDLL("libcuda.so.1")
t1 = time.monotonic()
r = cu.cuInit(0)
t2 = time.monotonic()
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
r2 = cu.cuDeviceGet(ctypes.byref(dev), 0)
r3 = cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
r4 = cu.cuCtxSetCurrent(ctx)
free, total = ctypes.c_size_t(), ctypes.c_size_t()
r5 = cu.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total))
t3 = time.monotonic()
print(json.dumps({"load": t1 - t0, "cuInit": t2 - t1, "context": t3 - t2, "rc": [r, r2, r3, r4, r5]}))
"""

CHILD_TORCH = r"""
import json, os, time
if os.environ.get("PROBE_CONFINE"):  # mkbench's confinement first, as a confined worker has it
    from mkbench import sandbox
    sandbox.confine({}, None)
t0 = time.monotonic()
import torch
t1 = time.monotonic()
torch.cuda.set_device(0)
x = torch.empty(1, device="cuda")
torch.cuda.synchronize()
t2 = time.monotonic()
print(json.dumps({"import_torch": t1 - t0, "cuda_init": t2 - t1, "gpus_seen": torch.cuda.device_count()}))
"""

#: device memory taken from the driver and given back, as a judge does for each unit (its allocator's cache
#: emptied at release): 1 GiB allocated, written and freed 20 times, each time with the cache emptied
CHILD_ALLOC = r"""
import json, time
import torch
torch.cuda.set_device(0)
torch.empty(1, device="cuda")
times = []
for _ in range(20):
    t = time.monotonic()
    x = torch.empty(2**28, dtype=torch.float32, device="cuda")
    x.fill_(1.0)
    torch.cuda.synchronize()
    del x
    torch.cuda.empty_cache()
    times.append(time.monotonic() - t)
times.sort()
print(json.dumps({"alloc_free_1gib_median": times[10], "alloc_free_1gib_max": times[-1]}))
"""


def launch(code: str, gpus: list[str | None], **extra_env: str) -> dict:
    t = time.monotonic()
    procs = []
    for g in gpus:
        env = dict(os.environ)
        env.pop("CUDA_VISIBLE_DEVICES", None)
        if g is not None:
            env["CUDA_VISIBLE_DEVICES"] = g
        env.update(extra_env)
        procs.append(subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        try:
            results.append(json.loads(out.strip().splitlines()[-1]))
        except Exception:  # noqa: BLE001 - say what the child said
            results.append({"failed": (err or out)[-300:]})
    wall = time.monotonic() - t
    keys = sorted({k for r in results for k, v in r.items() if isinstance(v, float)})
    summary = {"processes": len(gpus), "wall": round(wall, 3)}
    for k in keys:
        vals = [r[k] for r in results if k in r]
        summary[k] = {"median": round(statistics.median(vals), 3), "max": round(max(vals), 3)}
    summary["failed"] = [r["failed"] for r in results if "failed" in r][:2]
    summary["extra"] = {k: v for k, v in results[0].items() if not isinstance(v, float)}
    return summary


def main() -> None:
    if sys.argv[1:] == ["alloc"]:  # device memory from the driver and back, alone to 12 per GPU
        n = int(subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True,
                               text=True).stdout.count("\n"))
        gpus = [str(i) for i in range(n)]
        print(json.dumps({"alloc": {"alone": launch(CHILD_ALLOC, ["0"]), "12_on_gpu0": launch(CHILD_ALLOC, ["0"] * 12),
                                    "12_per_gpu": launch(CHILD_ALLOC, gpus * 12)}}, indent=1))
        return
    n = int(subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True,
                           text=True).stdout.count("\n"))
    all_gpus = [str(i) for i in range(n)]
    report = {"gpus": n}
    for name, code in (("driver", CHILD_DRIVER), ("torch", CHILD_TORCH)):
        report[name] = {
            "alone_1": launch(code, ["0"]),
            "alone_2": launch(code, ["0"]),
            "alone_3": launch(code, ["0"]),
            "sees_all_gpus": launch(code, [None]),
            "one_per_gpu": launch(code, all_gpus),
            "12_on_gpu0": launch(code, ["0"] * 12),
            "12_per_gpu": launch(code, all_gpus * 12),
        }
        print(name, json.dumps(report[name]), file=sys.stderr, flush=True)
    report["torch_confined"] = {"alone": launch(CHILD_TORCH, ["0"], PROBE_CONFINE="1"),
                                "12_on_gpu0": launch(CHILD_TORCH, ["0"] * 12, PROBE_CONFINE="1")}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
