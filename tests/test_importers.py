"""`mkbench import kernelbench|kernelbench-x`: import the fixtures, then run the imported tasks and
candidates through the real pipeline (spawned workers, the store) on whatever device is present."""

import json
import textwrap
from pathlib import Path

import pytest
import torch

from mkbench import plugins
from mkbench.candidate import load_python_candidate
from mkbench.importers import WRAPPER_BANNER
from mkbench.importers import kernelbench as kb
from mkbench.importers import kernelbench_x as kbx
from mkbench.store import Store
from mkbench.task import load_task_file

FIXTURES = Path(__file__).parent / "fixtures"
KB = FIXTURES / "kernelbench"
KBX = FIXTURES / "kernelbench_x"
RUN = ("--baselines", "none", "--seeds", "1", "--time-budget-ms", "20", "--no-progress")


@pytest.fixture(autouse=True)
def _restore_task_dirs(monkeypatch):
    # --tasks-dir extends os.environ["MKBENCH_TASK_DIRS"] in-process; put it back after each test.
    monkeypatch.setenv("MKBENCH_TASK_DIRS", "")


@pytest.fixture
def cli_fresh(cli, monkeypatch):
    """The in-process CLI, each call starting from an empty MKBENCH_TASK_DIRS (as a new process
    would: a second in-process --tasks-dir of the same folder would register its tasks twice)."""
    def run(*args):
        monkeypatch.setenv("MKBENCH_TASK_DIRS", "")
        return cli(*args)
    return run


@pytest.fixture
def pycand():
    import importer_backend as module
    plugins.register_plugin(module, name="pycand")
    yield module
    plugins.unregister_plugin("pycand")


def _rows(store_path):
    store = Store(store_path)
    try:
        return store.results()
    finally:
        store.close()


def _verdicts(store_path, evaluated_only=True):
    out = {}
    for r in _rows(store_path):
        if evaluated_only and r["verdict"] == "skipped":
            continue
        out.setdefault(r["task"], set()).add(r["verdict"])
    return out


# --- KernelBench -------------------------------------------------------------------------------

@pytest.mark.parametrize("stem, category", [
    ("19_ReLU", "activation"), ("23_Softmax", "activation"), ("1_Square_matrix_multiplication_", "matmul"),
    ("41_Max_Pooling_1D", "pooling"), ("47_Sum_reduction_over_a_dimension", "reduce"), ("36_RMSNorm_", "normalization"),
    ("63_conv_standard_2D__square_input__square_kernel", "convolution"), ("95_CrossEntropyLoss", "loss"),
    ("89_cumsum", "math"), ("1_Conv2D_ReLU_BiasAdd", "fusion"), ("12_Gemm_Multiply_LeakyReLU", "fusion"),
    ("11_VGG16", None),
])
def test_category_inference(stem, category):
    assert kb.infer_category(stem) == category


def test_task_names(tmp_path):
    assert kb.task_name_for(Path("19_ReLU.py")) == "kb_19_relu"
    assert kb.task_name_for(Path("KernelBench/level2/1_Conv2D_ReLU_BiasAdd.py")) == "kb_l2_1_conv2d_relu_biasadd"
    assert kb.task_name_for(Path("x/26_GELU_.py"), prefix="k_") == "k_26_gelu"


def test_kernelbench_import_then_run(cli_fresh, tmp_path, store_path, pycand):
    tasks, sols = tmp_path / "tasks", tmp_path / "sols"
    code, out, err = cli_fresh("import", "kernelbench", KB / "problems", "--out", tasks, "--shape-role", "standard",
                         "--candidates", KB / "candidates", "--solutions-out", sols)
    assert code == 3, err  # 99_NoSuchProblem.py matches no problem
    assert "99_NoSuchProblem.py: no problem" in err and err.count("skipped:") == 1
    assert "ignored 1 candidate file(s) of samples other than 0" in out
    for rel in ("activation/kb_19_relu.py", "activation/_kb_19_relu_src.py", "activation/kb_23_softmax.py",
                "fusion/kb_1_conv2d_relu_biasadd.py", "fusion/_kb_1_conv2d_relu_biasadd_src.py"):
        assert (tasks / rel).is_file(), rel
    assert sorted(p.relative_to(sols).as_posix() for p in sols.rglob("*.py")) == [
        "activation/kb_19_relu.py", "activation/kb_23_softmax.py", "fusion/kb_1_conv2d_relu_biasadd.py"]
    assert "syntax error at line 9" in out

    code, out, _ = cli_fresh("list", "tasks", "--tasks-dir", tasks)
    assert code == 0 and "kb_1_conv2d_relu_biasadd" in out and "kb_19_relu" in out

    code, out, err = cli_fresh("run", "--backend", "pycand", "--tasks-dir", tasks, "--solutions", sols, "--method", "kb",
                         "--task", "kb_19_relu", "--task", "kb_23_softmax", "--task", "kb_1_conv2d_relu_biasadd",
                         "--store", store_path, *RUN)
    assert code == 3, err  # the syntax-error candidate is an invalid candidate file
    assert _verdicts(store_path) == {"kb_19_relu": {"correct"}, "kb_1_conv2d_relu_biasadd": {"correct"},
                                     "kb_23_softmax": {"compile_error"}}
    softmax = next(r for r in _rows(store_path) if r["task"] == "kb_23_softmax")
    assert "syntax error" in softmax["error"]


def test_kernelbench_weights_and_bytes(tmp_path):
    tasks, sols = tmp_path / "tasks", tmp_path / "sols"
    report = kb.import_kernelbench(KB / "problems" / "1_Conv2D_ReLU_BiasAdd.py", tasks, shape_role="standard",
                                   candidates=KB / "candidates" / "level_2_problem_1_sample_0_kernel.py",
                                   solutions_out=sols)
    assert not report.skipped
    task = load_task_file(tasks / "fusion" / "kb_1_conv2d_relu_biasadd.py")
    shape = task.shapes[0]
    assert (shape.role, dict(shape.params)) == ("standard", {"inputs": "2x3x12x10", "outputs": "2x8x10x8"})
    assert task.bytes(shape, torch.float32) == 4 * (2 * 3 * 12 * 10 + 2 * 8 * 10 * 8)
    assert task.bytes(shape, torch.float16) == 2 * (2 * 3 * 12 * 10 + 2 * 8 * 10 * 8)
    assert task.flops(shape) == 0

    gen = torch.Generator().manual_seed(7)
    inputs = task.make_inputs(shape, torch.float32, gen)
    again = task.make_inputs(shape, torch.float32, torch.Generator().manual_seed(7))
    assert torch.equal(inputs[0], again[0])
    expected = task.reference(*inputs)
    candidate = load_python_candidate(sols / "fusion" / "kb_1_conv2d_relu_biasadd.py", task.name)
    torch.testing.assert_close(candidate(*inputs), expected)
    # float64 (the contract's reference precision) gets the same weights, upcast
    torch.testing.assert_close(task.reference(inputs[0].double()), expected.double(), rtol=1e-5, atol=1e-5)

    # Weights only match because both sides are built under the same seed: a ModelNew that draws
    # one more random number first gets different weights.
    src = (KB / "candidates" / "level_2_problem_1_sample_0_kernel.py").read_text().replace(
        "super().__init__()", "super().__init__()\n        torch.rand(1)")
    (tmp_path / "shifted").mkdir()
    (tmp_path / "shifted" / "1_Conv2D_ReLU_BiasAdd.py").write_text(src)
    kb.import_candidates(tmp_path / "shifted", tmp_path / "sols2", [kb.Problem(
        KB / "problems" / "1_Conv2D_ReLU_BiasAdd.py", task.name, "fusion", 1, None)])
    shifted = load_python_candidate(tmp_path / "sols2" / "fusion" / "kb_1_conv2d_relu_biasadd.py", task.name)
    assert not torch.allclose(shifted(*inputs), expected)


def test_kernelbench_candidate_without_model_new(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "19_ReLU.py").write_text("def forward(x):\n    return x\n")
    report = kb.import_candidates(tmp_path / "c", tmp_path / "s", [kb.Problem(
        KB / "problems" / "19_ReLU.py", "kb_19_relu", "activation", 19, None)])
    assert "defines no top-level class ModelNew" in report.written[0]
    from mkbench.errors import CompileError
    with pytest.raises(CompileError, match="defines no `ModelNew`"):
        load_python_candidate(tmp_path / "s" / "activation" / "kb_19_relu.py", "kb_19_relu")


def test_kernelbench_uninferable_category_is_bad_input(cli, tmp_path):
    src = tmp_path / "level3"
    src.mkdir()
    (src / "11_VGG16.py").write_text((KB / "problems" / "19_ReLU.py").read_text())
    code, _, err = cli("import", "kernelbench", src, "--out", tmp_path / "t")
    assert code == 2 and "cannot infer a category for 11_VGG16.py" in err and "--category" in err
    assert not (tmp_path / "t").exists()
    code, out, err = cli("import", "kernelbench", src, "--out", tmp_path / "t", "--category", "fusion")
    assert code == 0, err
    assert (tmp_path / "t" / "fusion" / "kb_l3_11_vgg16.py").is_file()


# --- KernelBench-X ---------------------------------------------------------------------------

def test_strip_fences():
    assert kbx.strip_fences("text\n```python\nx = 1\n```\nmore ```py\ny```") == "x = 1\n"
    assert kbx.strip_fences("```\nx = 1\n```") == "x = 1\n"
    assert kbx.strip_fences("```cpp\nint x;\n```\n```python\nx = 2\n```") == "x = 2\n"
    assert kbx.strip_fences("x = 3<|im_end|>") == "x = 3\n"
    assert kbx.strip_fences("```python\nx = 4\n") == "x = 4\n"  # unterminated fence


def test_harness_rewrites_and_flattens():
    src = textwrap.dedent("""
        import torch
        def test_f():
            a = torch.ones(2, device='cuda')
            b = torch.zeros(1).cuda()
            torch.cuda.synchronize()
            return {"b": f(b), "a": [f(a), 3, 1.5, True, None, "x"]}
        test_results = test_f()
        print(test_results)
        """)
    out, changed = kbx.rewrite_source(src, strip_invocations=True)
    assert changed and "'cuda'" not in out and ".cuda()" not in out and "test_results" not in out
    assert kbx.find_test_function(out, "f") == "test_f"
    harness = kbx.Harness("f", "test_f", test_source=out)
    got = harness.run(lambda x: x * 2, torch.tensor([5]))
    assert [t.tolist() for t in got] == [[2.0, 2.0], 3, 1.5, True, [], [ord("x")], [0.0]]  # "a" before "b"
    assert [t.dtype for t in got][1:5] == [torch.int64, torch.float32, torch.bool, torch.bool]


def test_kbx_predictions_then_triton_run(cli, tmp_path, store_path):
    sols = tmp_path / "sols"
    code, out, err = cli("import", "kernelbench-x", KBX / "predictions.jsonl", "--out", sols)
    assert code == 3, err
    assert "predictions.jsonl:2 (Activation/no_such_op.py): no task 'no_such_op'" in err
    assert err.count("skipped:") == 1
    written = (sols / "activation" / "gelu.py").read_text()
    assert written.startswith("import torch") and "```" not in written and "im_end" not in written
    assert sorted(p.relative_to(sols).as_posix() for p in sols.rglob("*.py")) == ["activation/gelu.py"]

    code, out, err = cli("run", "--backend", "triton", "--solutions", sols, "--method", "kbx", "--task", "gelu",
                         "--store", store_path, *RUN)
    assert code == 0, err
    assert _verdicts(store_path) == {"gelu": {"correct"}}
    assert {r["method"] for r in _rows(store_path)} == {"kbx"}


def test_kbx_task_files_as_tasks_then_run(cli_fresh, tmp_path, store_path):
    tasks, sols = tmp_path / "tasks", tmp_path / "sols"
    code, out, err = cli_fresh("import", "kernelbench-x", KBX / "tasks", "--as-tasks", "--out", tasks)
    assert code == 0, err
    harness = (tasks / "activation" / "_kbx_scaled_silu_harness.py").read_text()
    assert "test_results" not in harness and "'cuda'" not in harness and "def test_scaled_silu" in harness
    assert (tasks / "activation" / "_kbx_scaled_silu_ref.py").read_text().startswith("import torch")
    assert (tasks / "reduce" / "kbx_row_sum.py").is_file()

    # the reference run through the harness, in-process: deterministic per seed
    task = load_task_file(tasks / "activation" / "kbx_scaled_silu.py")
    inputs = task.make_inputs(task.shapes[0], torch.float32, torch.Generator().manual_seed(1))
    first, second = task.reference(*inputs), task.reference(*inputs)
    assert len(first) == 7 and all(torch.equal(a, b) for a, b in zip(first, second))
    # a candidate only gets a function that runs the harness with its implementation
    seed, run_harness = inputs
    doubled = run_harness(seed, lambda x, scale=1.0: torch.nn.functional.silu(x) * scale * 2)
    assert torch.allclose(doubled[0], 2 * first[0]) and not torch.allclose(doubled[0], first[0])

    code, out, err = cli_fresh("import", "kernelbench-x", KBX / "harness_predictions.jsonl", "--prefix", "kbx_",
                         "--tasks-dir", tasks, "--out", sols)
    assert code == 0, err
    assert out.count("wrote harness candidate") == 2
    footer = (sols / "reduce" / "kbx_row_sum.py").read_text().split(WRAPPER_BANNER)[1]
    assert "import" not in footer and "_mkbench_kbx_impl = kernel_function" in footer
    assert "_mkbench_kbx_impl = scaled_silu" in (sols / "activation" / "kbx_scaled_silu.py").read_text()

    code, out, err = cli_fresh("run", "--backend", "triton", "--tasks-dir", tasks, "--solutions", sols, "--method", "kbx",
                         "--task", "kbx_scaled_silu", "--task", "kbx_row_sum", "--store", store_path, *RUN)
    assert code == 0, err
    assert _verdicts(store_path) == {"kbx_scaled_silu": {"correct"}, "kbx_row_sum": {"incorrect"}}
    row_sum = next(r for r in _rows(store_path) if r["task"] == "kbx_row_sum")
    assert "output[0]" in row_sum["error"]


def test_kbx_unknown_prediction_only_exits_3(cli, tmp_path):
    pred = tmp_path / "p.jsonl"
    pred.write_text(json.dumps({"file": "Math/nope.py", "predict": "def nope(x): return x"}) + "\n"
                    + json.dumps({"predict": "def gelu(x): return x"}) + "\nnot json\n")
    code, out, err = cli("import", "kernelbench-x", pred, "--out", tmp_path / "s")
    assert code == 3
    assert err.count("skipped:") == 3 and "no \"file\" field" in err and "not JSON" in err
    single = tmp_path / "gelu.py"
    single.write_text("def kernel_function(x):\n    return x\n" + kbx.SEPARATOR + "\nraise SystemExit\n")
    code, out, err = cli("import", "kernelbench-x", single, "--out", tmp_path / "s")
    assert code == 0, err
    assert "SystemExit" not in (tmp_path / "s" / "activation" / "gelu.py").read_text()


@pytest.mark.gpu
def test_kernelbench_load_inline_candidate_on_gpu(cli_fresh, tmp_path, store_path):
    from torch.utils.cpp_extension import CUDA_HOME
    if CUDA_HOME is None:
        pytest.skip("no CUDA toolkit (nvcc) for load_inline")
    tasks, sols = tmp_path / "tasks", tmp_path / "sols"
    code, out, err = cli_fresh("import", "kernelbench", KB / "problems" / "19_ReLU.py", "--out", tasks,
                               "--candidates", KB / "cuda_candidates", "--solutions-out", sols)
    assert code == 0, err
    code, out, err = cli_fresh("run", "--backend", "cuda", "--tasks-dir", tasks, "--solutions", sols,
                               "--method", "cuda", "--task", "kb_19_relu", "--store", store_path,
                               "--baselines", "eager", "--seeds", "2", "--no-progress")
    assert code == 0, err
    rows = [r for r in _rows(store_path) if r["method"] == "cuda"]
    assert [(r["shape_role"], r["verdict"], r["perf_status"]) for r in rows] == [("large", "correct", "timed")]
    assert rows[0]["bytes"] == 2 * 16 * 257 * 4
