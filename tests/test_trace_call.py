"""Which call the correctness trace records (``--trace-call``): the first call of a (shape, dtype) in the
candidate's worker, or a warm one after an untraced call on another seed's inputs (what the timer times,
without a first call's compile and autotuning under the profiler). Run on the CPU through the Triton
interpreter, where ``auto`` means first, so each test names the mode."""

from __future__ import annotations

import json
import sqlite3

import pytest

from mkbench.engine.runner import trace_call

# silu whose own Triton kernel runs in its first call only; later calls are torch's (a JIT warm-up that
# falls back, or a candidate that shows its kernel to a first-call trace and is timed on framework ops)
FIRST_CALL_ONLY = '''
import torch
import triton
import triton.language as tl

_calls = [0]


@triton.jit
def _silu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x / (1.0 + tl.exp(-x))).to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x):
    _calls[0] += 1
    if _calls[0] > 1:
        return torch.nn.functional.silu(x)
    y = torch.empty_like(x)
    n = x.numel()
    _silu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y
'''


def _run(tmp_path, cli, mode: str) -> tuple[list[dict], dict]:
    sol = tmp_path / mode / "sol" / "activation"
    sol.mkdir(parents=True)
    (sol / "silu.py").write_text(FIRST_CALL_ONLY)
    store = tmp_path / mode / "r.sqlite"
    code, out, err = cli("run", "--backend", "triton", "--hw", "cpu", "--solutions", sol.parent, "--task", "silu",
                         "--shape-role", "small", "--dtype", "float32", "--baselines", "none", "--no-timing",
                         "--store", store, "--json", tmp_path / mode / "r.json", "--no-progress",
                         "--trace-call", mode)
    assert code == 0, err
    rows = [r for r in json.loads((tmp_path / mode / "r.json").read_text())["results"] if r["verdict"] != "skipped"]
    (env,) = sqlite3.connect(store).execute("select env from runs").fetchone()
    return rows, json.loads(env)["engine"]


def _extra(row: dict) -> dict:
    return row["extra"] if isinstance(row["extra"], dict) else json.loads(row["extra"])


def test_the_first_call_traced_sees_the_candidates_own_kernel(tmp_path, cli):
    # Traced, its first call shows one own launch; the decoy check (a later call, launches suppressed)
    # then finds the answer right without it.
    rows, engine = _run(tmp_path, cli, "first")
    assert engine["trace_call"] == "first"
    row = rows[0]
    assert row["verdict"] == "hack" and row["error"].startswith("decoy:"), row
    steps = _extra(row)["unit_seconds"]["steps"]
    assert "run_warm" not in steps and steps["run_traced"] > 0


def test_a_warm_call_traced_sees_what_later_calls_do(tmp_path, cli):
    # The untraced call took the candidate's one own launch: the traced call, like every timed one, is
    # torch's work alone, which the trace calls framework work.
    rows, engine = _run(tmp_path, cli, "warm")
    assert engine["trace_call"] == "warm"
    row = rows[0]
    assert row["verdict"] == "framework", row
    extra = _extra(row)
    assert extra["own_launches"] == 0, extra
    steps = extra["unit_seconds"]["steps"]
    assert steps["run_warm"] > 0 and steps["run_traced"] > 0


@pytest.mark.parametrize("option, device, mode", [
    ("auto", "cuda", "warm"), ("auto", "cpu", "first"), ("first", "cuda", "first"), ("warm", "cpu", "warm")])
def test_auto_traces_a_warm_call_on_a_gpu_only(option, device, mode):
    assert trace_call(option, device) == mode
