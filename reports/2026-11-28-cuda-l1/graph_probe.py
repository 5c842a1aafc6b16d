"""Why CUDA-L1's cuda_graph variant errs in mkbench (issue 30, call 4 on an H100: 154 of 249 `error`,
"operation failed due to a previous error during capture"). Each candidate is called once, in a fresh
process, three ways, with no mkbench worker, judge, trace or confinement around it:

* ``fresh``: nothing ran on the GPU before the candidate's first call (as in mkbench's worker);
* ``handles``: one tiny matmul and one tiny convolution ran first (cuBLAS and cuDNN handles exist);
* ``reference``: the task's PyTorch reference ran once first (as KernelBench's harness does, in the
  candidate's own process, before timing it).

    python reports/2026-11-28-cuda-l1/graph_probe.py TASK_DIR SOL_DIR kb_l1_57 kb_l1_1 ...
"""

import subprocess
import sys

CHILD = r"""
import importlib.util, sys, torch
from mkbench.inputs import generate
from mkbench.task import load_task_file
mode, task_path, cand_path = sys.argv[1:4]
task = load_task_file(task_path)
inputs = generate(task, task.shapes[0], task.dtypes[0], 0, "cuda")
if mode == "handles":
    a = torch.ones(8, 8, device="cuda")
    a @ a
    torch.nn.functional.conv2d(torch.ones(1, 1, 4, 4, device="cuda"), torch.ones(1, 1, 3, 3, device="cuda"))
elif mode == "reference":
    task.reference(*inputs)
torch.cuda.synchronize()
spec = importlib.util.spec_from_file_location("candidate", cand_path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
try:
    module.kernel_function(*inputs)
    torch.cuda.synchronize()
    print("ok")
except Exception as exc:
    print("FAIL", type(exc).__name__, str(exc).splitlines()[0][:100])
"""


def main() -> int:
    task_dir, sol_dir, *names = sys.argv[1:]
    for name in names:
        for mode in ("fresh", "handles", "reference"):
            done = subprocess.run([sys.executable, "-c", CHILD, mode, f"{task_dir}/{name}.py", f"{sol_dir}/{name}.py"],
                                  capture_output=True, text=True, timeout=300)
            said = (done.stdout.strip().splitlines() or done.stderr.strip().splitlines() or ["?"])[-1][:160]
            print(f"{name} {mode}: {said}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
