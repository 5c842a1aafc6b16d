"""``--untimed-wait block``: the processes that are never timed (judges, compile-ahead workers) sleep
while they wait for the GPU instead of spinning on a core the compiles need."""

import subprocess
import sys

import pytest

from mkbench.timing import UNTIMED_WAIT_ENV, wait_untimed

PROBE = f"""
import ctypes, os, torch
os.environ[{UNTIMED_WAIT_ENV!r}] = {{wait!r}}
from mkbench.timing import cudart, wait_untimed
done = wait_untimed()
torch.cuda.set_device(0)
torch.ones(1, device="cuda").sum().item()
flags = ctypes.c_uint(0)
assert cudart().cudaGetDeviceFlags(ctypes.byref(flags)) == 0
print(done, flags.value & 0x07)
"""


def test_spin_is_left_to_cuda(monkeypatch):
    monkeypatch.setenv(UNTIMED_WAIT_ENV, "spin")
    assert wait_untimed() is None  # nothing asked of the runtime: CUDA's default


@pytest.mark.gpu
@pytest.mark.parametrize("wait, done, schedule", [("block", "block", 0x04), ("spin", "None", 0x00)])
def test_block_makes_the_context_wait_blocking(wait, done, schedule):
    out = subprocess.run([sys.executable, "-c", PROBE.format(wait=wait)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [done, str(schedule)], out.stdout
