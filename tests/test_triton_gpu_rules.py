"""Triton's GPU compiler refuses what its CPU interpreter runs: the CPU verdict must not hide it."""

from pathlib import Path

import pytest

from mkbench.backends.triton import TritonBackend
from mkbench.backends.triton.gpu_rules import non_constexpr_globals
from mkbench.errors import CompileError
from mkbench.plugins import build_registry

REG = build_registry()
KERNELS = sorted((Path(TritonBackend().reference_dir())).rglob("*.py"))

# The shape of the logsumexp reference that passed on the interpreter and failed to compile on an
# H100 (Triton 3.6: "Cannot access global variable LOG2E from within @jit'ed function").
PLAIN_GLOBAL = '''
import triton
import triton.language as tl

LOG2E = 1.4426950408889634
BLOCK = tl.constexpr(128)


@triton.jit
def _kernel(x_ptr, out_ptr, N, SCALE: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N)
    tl.store(out_ptr + offs, tl.exp2(x * LOG2E * SCALE), mask=offs < N)


def kernel_function(x):
    return x * LOG2E  # outside the kernel a plain global is fine
'''


def test_plain_global_read_in_a_kernel_is_named_with_its_line():
    problems = non_constexpr_globals(PLAIN_GLOBAL)
    assert len(problems) == 1
    assert problems[0].startswith("line 13: @triton.jit _kernel reads the global LOG2E (line 5)")


def test_constexpr_globals_parameters_and_locals_are_allowed():
    src = PLAIN_GLOBAL.replace("LOG2E = 1.4426950408889634", "LOG2E = tl.constexpr(1.4426950408889634)")
    assert non_constexpr_globals(src) == []
    shadowed = PLAIN_GLOBAL.replace("def _kernel(x_ptr, out_ptr, N,", "def _kernel(x_ptr, out_ptr, N, LOG2E,")
    assert non_constexpr_globals(shadowed) == []


def test_interpreter_compile_refuses_what_the_gpu_compiler_would(tmp_path):
    src = tmp_path / "gelu.py"
    src.write_text(PLAIN_GLOBAL)
    task = REG.tasks["gelu"]
    with pytest.raises(CompileError, match="LOG2E"):
        TritonBackend().compile(task, src, REG.hardware["cpu"])


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_triton_reference_obeys_the_gpu_compiler_rule(path):
    assert non_constexpr_globals(path.read_text()) == []
