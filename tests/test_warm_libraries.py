"""A backend may ask its workers to make torch's cuBLAS and cuDNN handles before the candidate's first
call (``Backend.warm_libraries``): a candidate that captures PyTorch ops in a CUDA graph at its first
call, with no warm-up call before the capture, otherwise fails in mkbench's fresh worker
(CUDA-L1's cuda_graph variant: 154 of 249 `error` on an H100) where KernelBench's harness, which runs
the reference in the candidate's process first, lets it run."""

import os
import subprocess
import sys

import pytest

from mkbench import worker
from mkbench.plugins import build_registry


class _Backend:
    def __init__(self, warm):
        self.warm_libraries = warm


@pytest.mark.parametrize("device,warm,expected", [("cuda", True, 1), ("cuda", False, 0), ("cpu", True, 0)])
def test_the_warm_step_makes_the_library_handles_only_where_the_backend_asks_on_a_gpu(monkeypatch, device, warm,
                                                                                     expected):
    made = []
    monkeypatch.setattr(worker, "warm_libraries", lambda: made.append(1))
    monkeypatch.setattr("mkbench.trace.warm_up", lambda device: None)
    steps = worker.Steps()
    steps.device, steps.backend = device, _Backend(warm)
    assert steps.warm({"op": "warm"}) == {"kind": "warm"}
    assert len(made) == expected


def test_the_cuda_backend_asks_for_them_and_triton_does_not():
    reg = build_registry()
    assert reg.backend("cuda").warm_libraries is True
    assert reg.backend("triton").warm_libraries is False  # Triton's own candidates: no cuDNN load per unit


CAPTURE = """
import sys, torch
from mkbench.worker import warm_libraries
if sys.argv[1] == "warm":
    warm_libraries()
x = torch.randn(4, 3, 16, 16, device="cuda")
w = torch.randn(8, 3, 3, 3, device="cuda")
m = torch.randn(14, 14, device="cuda")
g = torch.cuda.CUDAGraph()
try:
    with torch.cuda.graph(g):  # no warm-up call first, as CUDA-L1's cuda_graph kernels do
        y = torch.nn.functional.conv2d(x, w) @ m
    g.replay()
    torch.cuda.synchronize()
    print("captured")
except Exception as exc:
    print("failed:", type(exc).__name__, str(exc).splitlines()[0])
"""


@pytest.mark.gpu
def test_a_capture_with_no_warm_up_runs_once_the_handles_exist(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    script = tmp_path / "capture.py"
    script.write_text(CAPTURE)
    said = {}
    for mode in ("fresh", "warm"):
        done = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, CUDA_VISIBLE_DEVICES=os.environ.get("CUDA_VISIBLE_DEVICES", "0")))
        said[mode] = done.stdout.strip() or done.stderr.strip()[-300:]
    assert said["warm"] == "captured", said
    # the cause this answers: where a fresh process captures fine (a later torch), the warm-up is moot
    print(said)
