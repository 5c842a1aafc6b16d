"""`mkbench import kernelbench|kernelbench-x`: import the fixtures, then run the imported tasks and
candidates through the real pipeline (spawned workers, the store) on whatever device is present."""

import json
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from mkbench import plugins
from mkbench.candidate import load_python_candidate
from mkbench.importers import WRAPPER_BANNER, candidate_metadata
from mkbench.importers import kernelbench_generate as kbg
from mkbench.importers import kernelbench_naming as kbn
from mkbench.importers import kernelbench_x as kbx
from mkbench.importers import kernelbench_x_generate as kbxg
from mkbench.importers import kernelbench_x_rewrite as kbxr
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
    assert kbn.infer_category(stem) == category


def test_task_names(tmp_path):
    assert kbn.task_name_for(Path("19_ReLU.py")) == "kb_19_relu"
    assert kbn.task_name_for(Path("KernelBench/level2/1_Conv2D_ReLU_BiasAdd.py")) == "kb_l2_1_conv2d_relu_biasadd"
    assert kbn.task_name_for(Path("x/26_GELU_.py"), prefix="k_") == "k_26_gelu"
    # rows: named by level and number, so every GPU set of one problem shares a task
    assert kbn.row_task_name(1, 19) == "kb_l1_19" and kbn.row_task_name(1, 19, stem="19_ReLU") == "kb_l1_19_relu"


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

    code, out, err = cli_fresh("run", "--backend", "pycand", "--tasks-dir", tasks, "--solutions", sols, "--method",
                               "kb",
                         "--task", "kb_19_relu", "--task", "kb_23_softmax", "--task", "kb_1_conv2d_relu_biasadd",
                         "--store", store_path, *RUN)
    assert code == 3, err  # the syntax-error candidate is an invalid candidate file
    assert _verdicts(store_path) == {"kb_19_relu": {"correct"}, "kb_1_conv2d_relu_biasadd": {"correct"},
                                     "kb_23_softmax": {"compile_error"}}
    softmax = next(r for r in _rows(store_path) if r["task"] == "kb_23_softmax")
    assert "syntax error" in softmax["error"]


def test_kernelbench_weights_and_bytes(tmp_path):
    tasks, sols = tmp_path / "tasks", tmp_path / "sols"
    report = kbg.import_kernelbench(KB / "problems" / "1_Conv2D_ReLU_BiasAdd.py", tasks,
                                    registry=plugins.build_registry(),
                                    shape_role="standard",
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
    kbg.import_candidates(tmp_path / "shifted", tmp_path / "sols2",
                          [_problem(KB / "problems" / "1_Conv2D_ReLU_BiasAdd.py",
                                                                               task.name, "fusion", 1)])
    shifted = load_python_candidate(tmp_path / "sols2" / "fusion" / "kb_1_conv2d_relu_biasadd.py", task.name)
    assert not torch.allclose(shifted(*inputs), expected)


def test_kernelbench_candidate_without_model_new(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "19_ReLU.py").write_text("def forward(x):\n    return x\n")
    report = kbg.import_candidates(tmp_path / "c", tmp_path / "s",
                                   [_problem(KB / "problems" / "19_ReLU.py", "kb_19_relu",
                                                                             "activation", 19)])
    assert "defines no top-level class ModelNew" in report.written[0]
    from mkbench.errors import CompileError
    with pytest.raises(CompileError, match="defines no `ModelNew`"):
        load_python_candidate(tmp_path / "s" / "activation" / "kb_19_relu.py", "kb_19_relu")


def _problem(path: Path, task: str, category: str, number: int) -> kbg.Problem:
    return kbg.Problem(task, category, "test", number, None, str(path), path.read_text(), path.stem)


def test_kernelbench_level3_category_from_layers(cli, tmp_path):
    """A level-3 network name says nothing about its category: it comes from the layers."""
    src = tmp_path / "level3"
    src.mkdir()
    (src / "11_VGG16.py").write_text(textwrap.dedent("""
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self, num_classes=10):
                super().__init__()
                self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                              nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
                self.classifier = nn.Linear(8 * 4 * 4, num_classes)

            def forward(self, x):
                return self.classifier(torch.flatten(self.features(x), 1))

        def get_inputs():
            return [torch.randn(2, 3, 8, 8)]

        def get_init_inputs():
            return [10]
        """))
    code, out, err = cli("import", "kernelbench", src, "--out", tmp_path / "t")
    assert code == 0, err
    assert "convolutional network (2 convolution layer(s), 1 linear/matmul)" in out
    task = load_task_file(tmp_path / "t" / "convolution" / "kb_l3_11_vgg16.py")
    assert "convolutional network" in task.description
    code, out, err = cli("import", "kernelbench", src, "--out", tmp_path / "t2", "--category", "fusion")
    assert code == 0, err
    assert (tmp_path / "t2" / "fusion" / "kb_l3_11_vgg16.py").is_file()


NETWORK = """
import torch
import torch.nn as nn

class Model(nn.Module):
    \"\"\"{doc}\"\"\"
    def __init__(self):
        super().__init__()
{init}
    def forward(self, x):
{forward}

def get_inputs():
    return [torch.randn(2, 4)]

def get_init_inputs():
    return []
"""


@pytest.mark.parametrize("doc, init, forward, category, reason", [
    ("A small CNN.", "self.c = nn.Conv2d(3, 4, 3)\nself.fc = nn.Linear(4, 2)\nself.fc2 = nn.Linear(2, 2)",
     "return self.fc2(self.fc(self.c(x).mean((2, 3))))", "convolution", "convolutional network"),
    ("A perceptron.", "self.a = nn.Linear(4, 8)\nself.b = nn.Linear(8, 2)", "return self.b(torch.relu(self.a(x)))",
     "matmul", "linear network"),
    ("A sequence model.", "self.rnn = nn.LSTM(4, 8, batch_first=True)\nself.fc = nn.Linear(8, 2)",
     "return self.fc(self.rnn(x)[0])", "fusion", "recurrent network (lstm)"),
    ("Vanilla RNN cell, written out.",
     "self.i2h = nn.Linear(12, 8)\nself.h2o = nn.Linear(8, 2)\nself.h = torch.zeros(2, 8)",
     "self.h = torch.tanh(self.i2h(torch.cat((x, self.h), 1)))\nreturn self.h2o(self.h)", "fusion",
     "recurrent network (rnn)"),
    ("Self-attention.", "self.q = nn.Linear(4, 4)\nself.k = nn.Linear(4, 4)",
     "w = torch.softmax(self.q(x) @ self.k(x).transpose(0, 1), -1)\nreturn w @ x", "fusion", "attention network"),
    ("Encoder.", "self.att = nn.MultiheadAttention(4, 2)", "return self.att(x, x, x)[0]", "fusion",
     "attention network (multiheadattention)"),
    ("Something else.", "self.s = 2.0", "return x.flip(0) * self.s", "fusion", "fusion by default"),
])
def test_level3_network_inference(doc, init, forward, category, reason):
    indent = lambda text: textwrap.indent(text, " " * 8)  # noqa: E731
    source = NETWORK.format(doc=doc, init=indent(init), forward=indent(forward))
    got, why = kbn.infer_from_source(source, level=3)
    assert got == category and reason in why, why


@pytest.mark.parametrize("body, category", [
    ("return torch.relu(x)", "activation"), ("return x / torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + 1e-5)",
                                             "normalization"),
    ("return torch.mean(torch.clamp(1 - x, min=0))", "loss"),  # the docstring names the loss
    ("return torch.cumsum(x, dim=1)", "math"), ("return x @ x.t()", "matmul"),
])
def test_level1_category_from_code(body, category):
    doc = "Computes Hinge Loss." if category == "loss" else "A single operator."
    source = NETWORK.format(doc=doc, init=" " * 8 + "pass", forward=" " * 8 + body)
    assert kbn.infer_from_source(source, level=1)[0] == category
    assert kbn.infer_from_source(source, level=2)[0] == "fusion"  # level 2 is fused sequences by construction


def test_kernelbench_rows_import_then_run(cli_fresh, tmp_path, store_path, pycand):
    """CUDA-L1-like rows: a load_inline kernel with a try/except fallback, a null and a "None"
    candidate, a level-3 network; two GPU sets share the tasks, each with its own manifest."""
    rows = KB / "rows"
    tasks, sol_a, sol_b = tmp_path / "tasks", tmp_path / "sol_a", tmp_path / "sol_b"
    code, out, err = cli_fresh("import", "kernelbench", rows / "gpu_a.json", "--out", tasks, "--solutions-out", sol_a,
                               "--shape-role", "standard")
    assert code == 0, err
    assert "imported 4 task(s)" in out and "2 candidate(s)" in out and "--method cuda-l1-gpu_a" in out
    assert "2 row(s) of gpu_a have no candidate code" in out
    for rel in ("activation/kb_l1_19.py", "activation/kb_l1_23.py", "fusion/kb_l2_1.py", "matmul/kb_l3_1.py"):
        assert (tasks / rel).is_file(), rel
    assert sorted(p.relative_to(sol_a).as_posix() for p in sol_a.rglob("*.py")) == ["activation/kb_l1_19.py",
                                                                                   "matmul/kb_l3_1.py"]
    relu = candidate_metadata(sol_a, "activation", "kb_l1_19")
    assert (relu["level"], relu["problem"], relu["gpu_set"]) == (1, 19, "gpu_a")
    assert relu["recorded"] == {"score_default": 1.21, "score_torch_compile_default": 1.05, "score_cuda_graph": 1.1,
                                "score_cudnn": 1.25}
    assert (relu["variant"], relu["recorded_score_field"], relu["recorded_score"]) == ("default", "score_default", 1.21)
    assert "cuda_graph_code" not in (sol_a / "activation" / "kb_l1_19.py").read_text()  # custom_code, unchanged
    assert candidate_metadata(sol_a, "activation", "kb_l1_23")["why"] == "the row's candidate code is null"
    assert candidate_metadata(sol_a, "fusion", "kb_l2_1")["why"] == "the row's candidate code is the string 'None'"
    assert candidate_metadata(sol_a, "activation", "no_such_task") == {}

    # a second set (CUDA-L1's codes/ layout: one document keyed by level) shares the same tasks
    code, out, err = cli_fresh("import", "kernelbench", rows / "codes_gpu_b.json", "--out", tasks, "--solutions-out",
                               sol_b,
                               "--shape-role", "standard")
    assert code == 0, err
    assert sorted(p.relative_to(tasks).as_posix() for p in tasks.rglob("kb_*.py")) == [
        "activation/kb_l1_19.py", "activation/kb_l1_23.py", "fusion/kb_l2_1.py", "matmul/kb_l3_1.py"]
    assert candidate_metadata(sol_b, "matmul", "kb_l3_1")["recorded"] == {"score": 1.4}

    # a different problem under the same name is refused, not merged
    changed = tmp_path / "changed.jsonl"
    first = json.loads((rows / "gpu_a.json").read_text().splitlines()[0])
    changed.write_text(json.dumps(dict(first, ref_code=first["ref_code"].replace("dim = 300", "dim = 301"))) + "\n")
    code, out, err = cli_fresh("import", "kernelbench", changed, "--out", tasks, "--solutions-out", tmp_path / "sol_c")
    assert code == 3 and "already exists" in err and "different reference source" in err

    code, out, err = cli_fresh("run", "--backend", "pycand", "--tasks-dir", tasks, "--solutions", sol_a, "--method",
                               "cuda-l1-gpu_a", "--task", "kb_l1_19,kb_l1_23,kb_l3_1", "--store", store_path,
                               "--no-timing",
                               *RUN)
    assert code == 0, err
    # the fallback answers on a CPU (no CUDA tensor); kb_l1_23 has no candidate in this set
    assert _verdicts(store_path) == {"kb_l1_19": {"correct"}, "kb_l1_23": {"missing"}, "kb_l3_1": {"correct"}}


def test_kernelbench_rows_names_from_a_checkout(tmp_path):
    checkout = tmp_path / "KernelBench" / "KernelBench" / "level1"
    checkout.mkdir(parents=True)
    (checkout / "19_ReLU.py").write_text("# only the name matters\n")
    report = kbg.import_rows(KB / "rows" / "gpu_a.json", tmp_path / "t", None, registry=plugins.build_registry(),
                             shape_role="standard", names_from=tmp_path / "KernelBench")
    assert any(line.startswith("task kb_l1_19_relu (activation: from the name 19_ReLU)") for line in report.written)
    assert any(line.startswith("task kb_l1_23 (activation: activation from the model's code")
               for line in report.written)


def test_kernelbench_rows_one_variant(cli_fresh, tmp_path, store_path, pycand):
    """--variant cuda_graph: each row's cuda_graph_code (a rewritten reference, class Model) with
    score_cuda_graph; a row whose cuda_graph_code is null is noted and recorded as missing."""
    tasks, sol = tmp_path / "tasks", tmp_path / "sol_graph"
    code, out, err = cli_fresh("import", "kernelbench", KB / "rows" / "gpu_a.json", "--out", tasks, "--solutions-out",
                               sol, "--shape-role", "standard", "--variant", "cuda_graph")
    assert code == 0, err
    assert "imported 4 task(s)" in out and "3 candidate(s)" in out and "--method cuda-l1-gpu_a-cuda_graph" in out
    assert "1 row(s) of gpu_a have no cuda_graph_code (variant cuda_graph)" in out
    assert sorted(p.relative_to(sol).as_posix() for p in sol.rglob("*.py")) == [
        "activation/kb_l1_19.py", "activation/kb_l1_23.py", "matmul/kb_l3_1.py"]
    relu = candidate_metadata(sol, "activation", "kb_l1_19")
    assert (relu["variant"], relu["recorded_score_field"], relu["recorded_score"]) == (
        "cuda_graph", "score_cuda_graph", 1.1)
    assert relu["recorded_vs_eager"] == pytest.approx(1.21 / 1.1) and relu["model_class"] == "Model"
    text = (sol / "activation" / "kb_l1_19.py").read_text()
    assert "torch.cuda.CUDAGraph()" in text and 'globals().get("Model")' in text
    softmax = candidate_metadata(sol, "activation", "kb_l1_23")
    assert (softmax["candidate"], softmax["recorded_score"], softmax["recorded_vs_eager"]) == (
        "%s:2" % (KB / "rows" / "gpu_a.json"), None, None)
    assert candidate_metadata(sol, "fusion", "kb_l2_1")["why"] == "the row's cuda_graph_code is null"

    # the rewritten references run as candidates (the graph is captured on a GPU only)
    code, out, err = cli_fresh("run", "--backend", "pycand", "--tasks-dir", tasks, "--solutions", sol, "--method",
                               "cuda-l1-gpu_a-cuda_graph", "--task", "kb_l1_19,kb_l2_1,kb_l3_1", "--store", store_path,
                               "--no-timing", *RUN)
    assert code == 0, err
    assert _verdicts(store_path) == {"kb_l1_19": {"correct"}, "kb_l2_1": {"missing"}, "kb_l3_1": {"correct"}}
    (row,) = [r for r in _rows(store_path) if r["task"] == "kb_l1_19"]
    assert row["extra"]["import"]["recorded_score"] == 1.1


def test_kernelbench_rows_all_variants(cli_fresh, tmp_path):
    tasks, sol = tmp_path / "tasks", tmp_path / "sol"
    code, out, err = cli_fresh("import", "kernelbench", KB / "rows" / "gpu_a.json", "--out", tasks, "--solutions-out",
                               sol, "--shape-role", "standard", "--variant", "all", "--gpu-set", "h100")
    assert code == 0, err
    assert "imported 4 task(s)" in out
    for name, count, method in (("default", 2, "cuda-l1-h100"), ("cuda_graph", 3, "cuda-l1-h100-cuda_graph"),
                                ("cudnn", 2, "cuda-l1-h100-cudnn")):
        assert (f"{name}: {count} candidate(s) into {sol / name}; use them with `mkbench run --tasks-dir {tasks} "
                f"--solutions {sol / name} --method {method} ...`") in out
        assert len(list((sol / name).rglob("*.py"))) == count
    assert "2 row(s) of h100 have no candidate code" in out
    assert "1 row(s) of h100 have no cuda_graph_code (variant cuda_graph)" in out
    assert "2 row(s) of h100 have no cudnn_code (variant cudnn)" in out
    assert len(list(tasks.rglob("kb_*.py"))) == 4  # the tasks are written once
    assert (candidate_metadata(sol / "cudnn", "activation", "kb_l1_23")["why"]
            == "the row's cudnn_code is the string 'None'")
    assert candidate_metadata(sol / "cudnn", "fusion", "kb_l2_1")["why"] == "the row has no cudnn_code"
    mlp = candidate_metadata(sol / "cudnn", "matmul", "kb_l3_1")
    assert (mlp["variant"], mlp["recorded_score"], mlp["gpu_set"]) == ("cudnn", 1.4, "h100")
    assert candidate_metadata(sol / "default", "matmul", "kb_l3_1")["recorded_score"] == 1.4
    assert candidate_metadata(sol / "default", "matmul", "kb_l3_1")["model_class"] == "ModelNew"


def test_kernelbench_variant_needs_rows(cli, tmp_path):
    code, _, err = cli("import", "kernelbench", KB / "problems" / "19_ReLU.py", "--out", tmp_path / "t",
                       "--variant", "cudnn")
    assert code == 2 and "--variant apply to JSON rows" in err


def test_kernelbench_variant_choices_match_the_reader():
    from mkbench.cli.import_cmd import VARIANT_CHOICES
    from mkbench.importers.kernelbench_rows import VARIANTS
    assert VARIANT_CHOICES == (*VARIANTS, "all")


def test_kernelbench_results_json_goes_to_the_manifest(cli, tmp_path):
    code, out, err = cli("import", "kernelbench", KB / "problems" / "1_Conv2D_ReLU_BiasAdd.py", "--out", tmp_path / "t",
                         "--candidates", KB / "run_with_results", "--solutions-out", tmp_path / "s")
    assert code == 0, err
    meta = candidate_metadata(tmp_path / "s", "fusion", "kb_1_conv2d_relu_biasadd")
    assert meta["recorded"] == {"compiled": True, "correctness": True, "runtime_us": 31.5,
                                "metadata": {"hardware": "fixture GPU", "device": "cuda:0"}}
    code, _, err = cli("import", "kernelbench", KB / "run_with_results" / "eval_results.json", "--out", tmp_path / "t2")
    assert code == 2 and "holds no code" in err


def test_cuda_l1_contract_option(tmp_path, cli):
    from mkbench.contracts import CUDA_L1_TOLERANCES, Tol
    code, _, err = cli("import", "kernelbench", KB / "problems" / "19_ReLU.py", "--out", tmp_path / "t",
                       "--contract", "cuda-l1")
    assert code == 0, err
    task = load_task_file(tmp_path / "t" / "activation" / "kb_19_relu.py")
    assert task.contract.scale == "abs" and task.contract.reference_precision is None
    assert task.contract.tolerances["float32"] == CUDA_L1_TOLERANCES["float32"] == Tol(1e-2, 1e-2)
    assert "CUDA-L1's own allclose" in (tmp_path / "t" / "activation" / "kb_19_relu.py").read_text()


_DROPOUT_PROBLEM = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.drop = nn.Dropout(p)
        self.norm = nn.BatchNorm1d(8)

    def forward(self, x):
        return self.drop(self.norm(x))

def get_inputs():
    return [torch.randn(16, 8) * 3 + 1]

def get_init_inputs():
    return [0.5]
"""

_DROPOUT_CANDIDATE = _DROPOUT_PROBLEM.replace("class Model(", "class ModelNew(")


@pytest.mark.parametrize("contract, eval_mode", [("cuda-l1", True), ("mkbench", False), ("kernelbench", False)])
def test_cuda_l1_contract_runs_both_models_in_eval_mode(tmp_path, cli, contract, eval_mode):
    # CUDA-L1's eval/eval_cuda.py calls .eval() on the reference and on the candidate; KernelBench does not
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "1_Dropout_BatchNorm.py").write_text(_DROPOUT_PROBLEM)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "1_Dropout_BatchNorm.py").write_text(_DROPOUT_CANDIDATE)
    code, _, err = cli("import", "kernelbench", tmp_path / "p", "--out", tmp_path / "t", "--contract", contract,
                       "--category", "normalization", "--candidates", tmp_path / "c", "--solutions-out",
                       tmp_path / "s")
    assert code == 0, err
    task_file = tmp_path / "t" / "normalization" / "kb_1_dropout_batchnorm.py"
    sol_file = tmp_path / "s" / "normalization" / "kb_1_dropout_batchnorm.py"
    assert ("eval_mode=True" in task_file.read_text()) == eval_mode
    assert ("eval_mode=True" in sol_file.read_text()) == eval_mode
    task = load_task_file(task_file)
    x = task.make_inputs(task.shapes[0], torch.float32, torch.Generator().manual_seed(0))[0]
    ref = task.reference(x)
    cand = load_python_candidate(sol_file, task.name)(x)
    if eval_mode:  # running statistics of a fresh BatchNorm (0, 1) and no dropout: the input, eps aside
        assert torch.allclose(ref, x / (1 + 1e-5) ** 0.5) and torch.equal(ref, cand)
    else:  # batch statistics and dropout: half the values zeroed
        assert (ref == 0).float().mean() > 0.2 and not torch.allclose(ref, x / (1 + 1e-5) ** 0.5)


def test_kernelbench_contract_option(tmp_path):
    from mkbench.contracts import KERNELBENCH_TOLERANCES
    kbg.import_kernelbench(KB / "problems" / "19_ReLU.py", tmp_path / "t", registry=plugins.build_registry(),
                           contract="kernelbench")
    task = load_task_file(tmp_path / "t" / "activation" / "kb_19_relu.py")
    assert task.contract.scale == "abs" and task.contract.reference_precision is None
    assert task.contract.tolerances["float32"] == KERNELBENCH_TOLERANCES["float32"]
    assert "KernelBench's own allclose" in task.description or "KernelBench's own allclose" in (
        tmp_path / "t" / "activation" / "kb_19_relu.py").read_text()


_CELL_PROBLEM = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.state = torch.zeros(4, n)

    def forward(self, x):
        self.state = self.state.to(x.device)
        self.state = torch.tanh(self.lin(x) + self.state)
        return self.state

def get_inputs():
    return [torch.randn(4, 8)]

def get_init_inputs():
    return [8]
"""

_CELL_CANDIDATE = """
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.state = torch.zeros(4, n)

    def forward(self, x):
        self.state = torch.tanh(x @ self.lin.weight.t() + self.lin.bias + self.state.to(x.device))
        return self.state
"""


def _kb_files(tmp_path, problem: str, candidates: dict[str, str]):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "31_Cell.py").write_text(problem)
    for name, code in candidates.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "31_Cell.py").write_text(code)


def test_stateful_reference_is_read_from_forward():
    assert kbg.stateful_reference(_CELL_PROBLEM) == "Model.forward assigns self.state at line 13"
    in_place = _CELL_PROBLEM.replace("self.state = torch.tanh(self.lin(x) + self.state)", "self.state.add_(x)")
    assert kbg.stateful_reference(in_place) == "Model.forward updates self.state in place at line 13"
    # moving an attribute to the input's device (KernelBench's LSTMs: self.h0 = self.h0.to(x.device)) is no state
    moved = _CELL_PROBLEM.replace("self.state = torch.tanh(self.lin(x) + self.state)",
                                  "return self.lin(x) + self.state")
    assert kbg.stateful_reference(moved) is None


def test_stateful_reference_answers_after_timing_are_not_judged(cli_fresh, tmp_path, store_path, pycand):
    """A model that keeps its hidden state across calls (KernelBench's VanillaRNN): an honest
    candidate answers differently after the timed calls because it was called more often than the
    judge's copy. That is no evidence of caching, so it is not judged, and the row says so."""
    _kb_files(tmp_path, _CELL_PROBLEM, {"c": _CELL_CANDIDATE})
    code, _, err = cli_fresh("import", "kernelbench", tmp_path / "p", "--out", tmp_path / "t", "--category", "fusion",
                             "--shape-role", "standard",
                             "--candidates", tmp_path / "c", "--solutions-out", tmp_path / "s")
    assert code == 0, err
    assert load_task_file(tmp_path / "t" / "fusion" / "kb_31_cell.py").stateful_reference.startswith(
        "Model.forward assigns self.state")
    code, _, err = cli_fresh("run", "--backend", "pycand", "--tasks-dir", tmp_path / "t", "--solutions", tmp_path / "s",
                             "--method", "kb", "--task", "kb_31_cell", "--store", store_path, *RUN)
    assert code == 0, err
    (row,) = _rows(store_path)
    assert row["verdict"] == "correct" and row["perf_status"] == "timed", row["error"]
    assert "the reference keeps state across calls (Model.forward assigns self.state" in row["extra"]["unchecked"]


_CELL_CACHING_CANDIDATE = _CELL_CANDIDATE.replace("""    def forward(self, x):
        self.state""", """    def forward(self, x):
        key = x.cpu().numpy().tobytes()
        if key in self.__dict__.setdefault("seen", {}):
            return self.seen[key]  # replays its first answer to an input, whatever the state
        self.state""").replace("        return self.state",
                          "        self.seen[key] = self.state\n        return self.state")

# state that the answers do not depend on: a counter
_COUNTER_PROBLEM = _CELL_PROBLEM.replace("""        self.state = self.state.to(x.device)
        self.state = torch.tanh(self.lin(x) + self.state)
        return self.state""", """        self.calls = getattr(self, "calls", 0) + 1
        return torch.tanh(self.lin(x))""")
_COUNTER_CANDIDATE = _CELL_CANDIDATE.replace(
    "        self.state = torch.tanh(x @ self.lin.weight.t() + self.lin.bias + self.state.to(x.device))\n"
    "        return self.state", "        return torch.tanh(x @ self.lin.weight.t() + self.lin.bias)")


def _stateful_run(cli_fresh, tmp_path, store_path, problem: str, candidate: str, *extra) -> dict[str, dict]:
    _kb_files(tmp_path, problem, {"c": candidate})
    code, _, err = cli_fresh("import", "kernelbench", tmp_path / "p", "--out", tmp_path / "t", "--category", "fusion",
                             "--shape-role", "standard",
                             "--candidates", tmp_path / "c", "--solutions-out", tmp_path / "s")
    assert code == 0, err
    assert load_task_file(tmp_path / "t" / "fusion" / "kb_31_cell.py").stateful_reference
    code, _, err = cli_fresh("run", "--backend", "pycand", "--tasks-dir", tmp_path / "t", "--solutions", tmp_path / "s",
                             "--method", "kb", "--task", "kb_31_cell", "--store", store_path, *RUN, *extra)
    assert code == 0, err
    return {row["method"]: row for row in _rows(store_path)}


def test_stateful_reference_starts_anew_for_each_unit(cli_fresh, tmp_path, store_path, pycand):
    """One lane, so one judge, for eager and the candidate: the judge's copy of a stateful reference
    starts from its initial state for each unit, as each unit's worker does (it carried the eager
    unit's state into the candidate's checks, and an honest candidate was `incorrect`)."""
    rows = _stateful_run(cli_fresh, tmp_path, store_path, _CELL_PROBLEM, _CELL_CANDIDATE,
                         "--baselines", "eager", "--lanes", "1", "--seeds", "2")
    assert {m: r["verdict"] for m, r in rows.items()} == {"eager": "correct", "kb": "correct"}, \
        {m: r["error"] for m, r in rows.items()}


def test_stateful_reference_replayed_answers_are_hack(cli_fresh, tmp_path, store_path, pycand):
    """A candidate that stores its answer to each input and replays it: right before the timed calls
    (it computed them), bit for bit the same after them, where the reference's answer to the same
    input changes from call to call: `hack`, with that evidence."""
    (row,) = _stateful_run(cli_fresh, tmp_path, store_path, _CELL_PROBLEM, _CELL_CACHING_CANDIDATE).values()
    assert row["verdict"] == "hack", row["error"]
    assert "answered after the timed calls bit for bit as before them" in row["error"]
    assert "Model.forward assigns self.state" in row["error"]


def test_stateful_reference_whose_answers_do_not_move_is_no_evidence(cli_fresh, tmp_path, store_path, pycand):
    """Forward keeps a call counter its answers do not depend on: an honest candidate answers the
    same before and after the timed calls, and the reference does too, so that is no cache."""
    (row,) = _stateful_run(cli_fresh, tmp_path, store_path, _COUNTER_PROBLEM, _COUNTER_CANDIDATE).values()
    assert row["verdict"] == "correct", row["error"]
    assert "the reference keeps state across calls (Model.forward assigns self.calls" in row["extra"]["unchecked"]


def test_validate_judges_a_stateful_reference_from_its_initial_state(cli_fresh, tmp_path):
    """`mkbench validate` of imported stateful tasks: each check starts from the model's initial
    state (it called the reference nondeterministic and rejected eager, both from a state that
    earlier calls had moved on), and the notes say whether the answers change on a second call."""
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "31_Cell.py").write_text(_CELL_PROBLEM)
    (tmp_path / "p" / "32_Counter.py").write_text(_COUNTER_PROBLEM)
    code, _, err = cli_fresh("import", "kernelbench", tmp_path / "p", "--out", tmp_path / "t", "--category", "fusion",
                             "--shape-role", "small")
    assert code == 0, err
    code, out, err = cli_fresh("validate", "--tasks-dir", tmp_path / "t", "--task", "kb_31_cell,kb_32_counter")
    assert code == 0, out + err
    assert "2 ok, 0 with problems; 2/2 positive controls passed" in out
    assert ("kb_31_cell: default/float32: the reference keeps state across calls (Model.forward assigns self.state "
            "at line 13): its answer to the same inputs changes on a second call") in out
    assert "kb_32_counter: default/float32: the reference keeps state across calls (Model.forward assigns " \
           "self.calls at line 12): its answer to the same inputs does not change on a second call" in out


_FLOAT32_STATE_PROBLEM = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = torch.randn(n, n)  # a plain tensor: .to(float64) leaves it float32

    def forward(self, x):
        return torch.mm(x, self.w.to(x.device))

def get_inputs():
    return [torch.randn(4, 8)]

def get_init_inputs():
    return [8]
"""

_FLOAT32_STATE_CANDIDATE = """
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = torch.randn(n, n)

    def forward(self, x):
        return (x[:, :, None] * self.w.to(x.device)[None]).sum(1){wrong}
"""


def test_reference_that_cannot_run_in_float64_is_computed_at_the_task_dtype(cli_fresh, tmp_path, store_path, pycand):
    """KernelBench's RNNs keep float32 hidden states that .to(float64) does not convert, so the
    judge's float64 reference raised and every candidate was an error. The judge now falls back to
    the task's dtype, as KernelBench computes it, and says so; a wrong answer still fails."""
    _kb_files(tmp_path, _FLOAT32_STATE_PROBLEM, {"good": _FLOAT32_STATE_CANDIDATE.format(wrong=""),
                                                 "bad": _FLOAT32_STATE_CANDIDATE.format(wrong=" + 1e-2")})
    for name in ("good", "bad"):
        code, _, err = cli_fresh("import", "kernelbench", tmp_path / "p", "--out", tmp_path / "t", "--category",
                                 "matmul", "--shape-role", "standard",
                                 "--candidates", tmp_path / name, "--solutions-out", tmp_path / f"s_{name}")
        assert code == 0, err
        code, _, err = cli_fresh("run", "--backend", "pycand", "--tasks-dir", tmp_path / "t", "--solutions",
                                 tmp_path / f"s_{name}", "--method", name, "--task", "kb_31_cell", "--store",
                                 store_path,
                                 "--no-timing", *RUN)
        assert code == 0, err
    rows = {r["method"]: r for r in _rows(store_path)}
    assert rows["good"]["verdict"] == "correct", rows["good"]["error"]
    assert rows["good"]["extra"]["judge_note"].startswith("reference computed at float32: at float64 it raised "
                                                          "RuntimeError")
    assert rows["bad"]["verdict"] == "incorrect" and "outside" in rows["bad"]["error"]


# --- KernelBench-X ---------------------------------------------------------------------------

def test_strip_fences():
    assert kbxr.strip_fences("text\n```python\nx = 1\n```\nmore ```py\ny```") == "x = 1\n"
    assert kbxr.strip_fences("```\nx = 1\n```") == "x = 1\n"
    assert kbxr.strip_fences("```cpp\nint x;\n```\n```python\nx = 2\n```") == "x = 2\n"
    assert kbxr.strip_fences("x = 3<|im_end|>") == "x = 3\n"
    assert kbxr.strip_fences("```python\nx = 4\n") == "x = 4\n"  # unterminated fence


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
    out, changed = kbxr.rewrite_source(src, strip_invocations=True)
    assert changed and "'cuda'" not in out and ".cuda()" not in out and "test_results" not in out
    assert kbxr.find_test_function(out, "f") == "test_f"
    harness = kbx.Harness("f", "test_f", test_source=out)
    got = harness.run(lambda x: x * 2, torch.tensor([5]))
    assert [t.tolist() for t in got] == [[2.0, 2.0], 3, 1.5, True, [], [ord("x")], [0.0]]  # "a" before "b"
    assert [t.dtype for t in got][1:5] == [torch.int64, torch.float32, torch.bool, torch.bool]


def test_imports_a_prediction_relies_on():
    available = list(kbxr.COMMON_HARNESS_IMPORTS)
    uses_both = "import triton\n\ndef gelu(x):\n    return F.gelu(torch.as_tensor(x))\n"
    assert kbxr.imports_needed(uses_both, available) == ["import torch", "import torch.nn.functional as F"]
    binds_f = "import triton\nF = None\n\ndef gelu(x):\n    return torch.relu(x)\n"
    assert kbxr.imports_needed(binds_f, available) == ["import torch"]  # its own F is never shadowed
    assert kbxr.imports_needed("import torch\ndef f(torch_like):\n    return torch.relu(torch_like)\n", available) == []
    assert kbxr.imports_needed("def f(:\n", available) == []  # a syntax error is the run's to report


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
    assert "import" not in footer and "_mkbench_kbx_impls = {'row_sum': kernel_function}" in footer
    wrapper = (sols / "activation" / "kbx_scaled_silu.py").read_text()
    assert "_mkbench_kbx_impls = {'scaled_silu': scaled_silu}" in wrapper

    code, out, err = cli_fresh("run", "--backend", "triton", "--tasks-dir", tasks, "--solutions", sols, "--method",
                               "kbx",
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


def _checkout_copy(tmp_path: Path) -> Path:
    import shutil
    copy = tmp_path / "KernelBenchX"
    shutil.copytree(KBX / "checkout", copy)
    return copy


def test_kbx_tasks_vendor_helpers_and_take_optimizer_forms(cli_fresh, tmp_path):
    """The data_utils form (a helper imported through sys.path) and the optimizer forms (a class
    the harness instantiates; a function not named after the file) import and run with the
    checkout gone: the helper is vendored next to the tasks."""
    checkout = _checkout_copy(tmp_path)
    tasks = tmp_path / "tasks"
    code, out, err = cli_fresh("import", "kernelbench-x", checkout / "data" / "kernelbenchx", "--as-tasks", "--out",
                               tasks)
    assert code == 0, err
    assert out.count("wrote task") == 3 and "helper module data_utils vendored" in out
    (helper,) = (tasks / "_kbx_helpers").glob("_data_utils_*.py")
    assert "__kbx_device__" in helper.read_text() and "'cuda'" not in helper.read_text()
    import shutil
    shutil.rmtree(checkout)  # nothing at run time may need the checkout

    momentum = load_task_file(tasks / "optimizer" / "kbx_Momentum.py")
    decay = load_task_file(tasks / "optimizer" / "kbx_Decay.py")
    clamp = load_task_file(tasks / "math" / "kbx_clamp_shift.py")
    assert momentum.reference.kbx_harness.entries == ("Momentum",)
    assert (decay.reference.kbx_harness.entries, decay.reference.kbx_harness.primary) == (("decay_step",), "decay_step")
    for task, count in ((momentum, 4), (decay, 2), (clamp, 3)):
        inputs = task.make_inputs(task.shapes[0], torch.float32, torch.Generator().manual_seed(3))
        first, second = task.reference(*inputs), task.reference(*inputs)
        assert len(first) == count and all(torch.equal(a, b) for a, b in zip(first, second)), task.name
    # the helper draws from the seeded generator: another seed, other inputs
    seed, run_harness = clamp.make_inputs(clamp.shapes[0], torch.float32, torch.Generator().manual_seed(4))
    assert not torch.equal(clamp.reference(seed, run_harness)[1], first[1])
    assert "data_utils" not in sys.modules  # visible to the harness only while it runs


def test_kbx_predictions_get_the_imports_the_harness_provided(cli_fresh, tmp_path):
    checkout = _checkout_copy(tmp_path)
    tasks, sols, strict = tmp_path / "tasks", tmp_path / "sols", tmp_path / "strict"
    code, _, err = cli_fresh("import", "kernelbench-x", checkout / "data" / "kernelbenchx", "--as-tasks", "--out",
                             tasks)
    assert code == 0, err
    code, out, err = cli_fresh("import", "kernelbench-x", KBX / "checkout_predictions.jsonl", "--prefix", "kbx_",
                               "--tasks-dir", tasks, "--out", sols)
    assert code == 0, err
    assert "kbx_Momentum (optimizer)" in out and "1 harness import(s) added: import torch" in out
    text = (sols / "optimizer" / "kbx_Momentum.py").read_text()
    assert text.index(WRAPPER_BANNER) < text.index("import torch")  # below the prediction, as concatenation puts it
    assert candidate_metadata(sols, "optimizer", "kbx_Momentum")["harness_imports"] == {"policy": "add",
                                                                                      "added": ["import torch"]}
    assert candidate_metadata(sols, "optimizer", "kbx_Decay")["harness_imports"] == {"policy": "add", "added": []}
    assert "_mkbench_kbx_impls = {'decay_step': kernel_function}" in (sols / "optimizer" / "kbx_Decay.py").read_text()

    for name, category in (("kbx_Momentum", "optimizer"), ("kbx_Decay", "optimizer")):
        task = load_task_file(tasks / category / f"{name}.py")
        seed, run_harness = task.make_inputs(task.shapes[0], torch.float32, torch.Generator().manual_seed(5))
        expected = task.reference(seed, run_harness)
        got = load_python_candidate(sols / category / f"{name}.py", name)(seed, run_harness)
        assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, expected)), name

    code, out, err = cli_fresh("import", "kernelbench-x", KBX / "checkout_predictions.jsonl", "--prefix", "kbx_",
                               "--tasks-dir", tasks, "--out", strict, "--harness-imports", "never")
    assert code == 0, err
    assert (candidate_metadata(strict, "optimizer", "kbx_Momentum")["harness_imports"]
            == {"policy": "never", "added": []})
    task = load_task_file(tasks / "optimizer" / "kbx_Momentum.py")
    seed, run_harness = task.make_inputs(task.shapes[0], torch.float32, torch.Generator().manual_seed(5))
    with pytest.raises(NameError, match="torch"):
        load_python_candidate(strict / "optimizer" / "kbx_Momentum.py", "kbx_Momentum")(seed, run_harness)


def test_kbx_contract_honours_per_task_thresholds(cli_fresh, tmp_path):
    from mkbench.contracts import AllClose, CheckContext, SimilarityThresholds
    checkout = _checkout_copy(tmp_path)
    code, _, err = cli_fresh("import", "kernelbench-x", checkout / "data" / "kernelbenchx", "--as-tasks", "--out",
                             tmp_path / "t", "--contract", "kernelbench-x")
    assert code == 0, err
    clamp = load_task_file(tmp_path / "t" / "math" / "kbx_clamp_shift.py")
    momentum = load_task_file(tmp_path / "t" / "optimizer" / "kbx_Momentum.py")
    assert clamp.contract == SimilarityThresholds(cosine_min=0.999, l1_relative_max=0.002, rmse_max=0.01)
    assert momentum.contract.tolerances["float32"].atol == 1e-5 and momentum.contract.scale == "abs"

    # the prediction is off by 1e-4 everywhere: inside KernelBench-X's thresholds, outside mkbench's rtol
    code, _, err = cli_fresh("import", "kernelbench-x", KBX / "checkout_predictions.jsonl", "--prefix", "kbx_",
                             "--tasks-dir", tmp_path / "t", "--out", tmp_path / "s")
    assert code == 0, err
    seed, run_harness = clamp.make_inputs(clamp.shapes[0], torch.float32, torch.Generator().manual_seed(6))
    expected = clamp.reference(seed, run_harness)
    got = load_python_candidate(tmp_path / "s" / "math" / "kbx_clamp_shift.py", "kbx_clamp_shift")(seed, run_harness)
    ctx = CheckContext(torch.float32, (seed, run_harness), got, lambda: expected, lambda *a: got)
    assert clamp.contract.check(ctx).ok
    assert not AllClose(reference_precision=None).check(ctx).ok

    (checkout / "data" / "kernelbenchx_v1.json").unlink()
    code, _, err = cli_fresh("import", "kernelbench-x", checkout / "data" / "kernelbenchx", "--as-tasks", "--out",
                             tmp_path / "t2", "--contract", "kernelbench-x")
    assert code == 2 and "--kbx-metadata" in err


def test_kbx_geak_corpus_rounds(tmp_path):
    preds, problems = kbxg.collect_predictions(KBX / "geak_records.jsonl")
    assert not problems and len(preds) == 1
    assert preds[0].origin == {"round": "round_2"} and "+ shift\n" in preds[0].code
    (first,), _ = kbxg.collect_predictions(KBX / "geak_records.jsonl", "round_1")
    assert "shift * 1.5" in first.code
    _, problems = kbxg.collect_predictions(KBX / "geak_records.jsonl", "round_9")
    assert problems == ["Math/clamp_shift.py: no code for round 'round_9' (has round_0, round_1, round_2)"]


def test_kbx_checkout_tasks_run_through_the_pipeline(cli_fresh, tmp_path, store_path, pycand):
    checkout = _checkout_copy(tmp_path)
    tasks, sols = tmp_path / "tasks", tmp_path / "sols"
    assert cli_fresh("import", "kernelbench-x", checkout / "data" / "kernelbenchx", "--as-tasks", "--out",
                     tasks)[0] == 0
    assert cli_fresh("import", "kernelbench-x", KBX / "checkout_predictions.jsonl", "--prefix", "kbx_", "--tasks-dir",
                     tasks, "--out", sols)[0] == 0
    code, out, err = cli_fresh("run", "--backend", "pycand", "--tasks-dir", tasks, "--solutions", sols, "--method",
                               "kbx",
                               "--task", "kbx_Momentum,kbx_Decay,kbx_clamp_shift", "--store", store_path, "--no-timing",
                               *RUN)
    assert code == 0, err
    assert _verdicts(store_path) == {"kbx_Momentum": {"correct"}, "kbx_Decay": {"correct"},
                                     "kbx_clamp_shift": {"incorrect"}}


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
