"""Import-time naming for KernelBench problems: task names, and the mkbench category of a problem
from its file name or, where there is none (JSON rows) or it names a whole network (level 3), from
its code.

Categories from names (:func:`infer_category`): the stem is lower-cased, phrases such as
``Max_Pooling`` or ``matrix_multiplication`` are merged into one token (:data:`PHRASES`), and each
``_``-separated token is looked up in :data:`TOKEN_CATEGORIES`; one recognised op gives its
category, two or more (level-2 names such as ``Conv2d_ReLU_BiasAdd``) give ``fusion``.

Categories from code (:func:`infer_from_source`), by KernelBench level:

* level 1 (one operator): the ops the model's classes construct and call (``nn.Conv2d``,
  ``torch.matmul``, ``@``, ``F.relu``, ``x.sum()``; a division by a reduction of the input counts
  as a normalization); the category is the first present in :data:`OP_PRIORITY` (a convolution
  with a bias add is a convolution; an RMSNorm's mean and sqrt are its normalization); where the
  code shows only element-wise math or reductions, the category the model's docstring names
  ("Hinge Loss", "Softsign activation") when it is one of :data:`DOC_OVERRIDES`;
* level 2 (a fused operator sequence, by KernelBench's construction): ``fusion``;
* level 3 (whole networks; mkbench has no "network" category, so each goes to the family of the
  layers that dominate its work): recurrent layers (``nn.LSTM``/``GRU``/``RNN`` and their cells)
  or attention (``nn.MultiheadAttention``, ``scaled_dot_product_attention``, or a softmax over
  products of activations; or named so in the model's docstrings and class names, as for
  hand-written RNN cells) -> ``fusion``; otherwise any convolution layer -> ``convolution``
  (CNNs end in linear classifiers); linear layers / matmuls only (MLPs) -> ``matmul``; nothing
  recognised -> ``fusion``, with a note saying so.
* unknown level: as level 3 for code that builds three or more layers, else as level 1 when one
  op family is found, else ``fusion``.

Every inference returns the reason with the category, which the importer prints and writes into
the task's description.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ..pyutil import dotted, import_aliases
from .common import identifier

# Multi-word phrases of KernelBench level-1 names, merged into one token before classification.
PHRASES: list[tuple[str, str]] = [
    (r"matrix_vector_multiplication", "matvec"),
    (r"matrix_scalar_multiplication", "matscalar"),
    (r"matrix_multiplication", "matmul"),
    (r"max_pooling", "maxpool"),
    (r"(?:average|avg)_pooling", "avgpool"),
    (r"(sum|mean|max|min)_reduction", r"\1"),
    (r"product_reduction", "prod"),
    (r"scaled_dot_product_attention", "attention"),
    (r"cross_entropy", "crossentropy"),
    (r"layer_norm", "layernorm"),
    (r"batch_norm", "batchnorm"),
    (r"group_norm", "groupnorm"),
    (r"instance_norm", "instancenorm"),
]

#: token -> category; a token is one ``_``-separated word of the lower-cased stem, with a
#: trailing ``1d``/``2d``/``3d`` removed. Two or more op tokens make the problem a fusion.
TOKEN_CATEGORIES: dict[str, set[str]] = {
    "activation": {"relu", "leakyrelu", "gelu", "newgelu", "sigmoid", "hardsigmoid", "tanh", "hardtanh",
                   "softmax", "logsoftmax", "softmin", "swish", "silu", "selu", "elu", "celu", "softsign",
                   "softplus", "mish", "hardswish", "relu6", "prelu", "glu", "logsigmoid", "hardshrink",
                   "softshrink", "tanhshrink"},
    "normalization": {"batchnorm", "groupnorm", "layernorm", "instancenorm", "rmsnorm", "l1norm", "l2norm",
                      "frobeniusnorm", "norm", "normalize", "normalization", "localresponsenorm"},
    "convolution": {"conv", "convtranspose", "convolution", "deconv"},
    "matmul": {"matmul", "gemm", "bmm", "mm", "linear", "matvec", "gemv", "einsum", "addmm", "baddbmm"},
    "pooling": {"maxpool", "avgpool", "pool", "pooling", "globalavgpool", "adaptiveavgpool", "adaptivemaxpool",
                "lppool"},
    "loss": {"loss", "crossentropy", "kldiv", "hinge", "huber", "mse", "nll"},
    "reduce": {"sum", "mean", "max", "min", "argmax", "argmin", "prod", "logsumexp", "std", "var", "amax",
               "amin"},
    "math": {"cumsum", "cumprod", "cummax", "cummin", "scan", "matscalar", "exp", "log", "sqrt", "rsqrt", "abs",
             "clamp", "clip", "add", "biasadd", "bias", "subtract", "sub", "multiply", "mul", "divide", "div",
             "scale", "scaling", "residualadd", "pow", "reciprocal", "erf", "sign", "round", "floor", "ceil"},
    "index": {"gather", "scatter", "embedding", "indexselect", "index", "argsort", "sort", "topk"},
    "random": {"dropout", "rand", "randn", "bernoulli", "multinomial"},
    "spatial": {"upsample", "interpolate", "pixelshuffle", "pixelunshuffle", "gridsample", "affinegrid"},
    "linear_algebra": {"cholesky", "trsv", "trsm", "lu", "qr", "svd", "inverse", "solve", "det"},
    "quantization": {"quantize", "dequantize", "quant", "int8"},
    "optimizer": {"adam", "adamw", "sgd", "rmsprop", "adagrad"},
    "fusion": {"attention"},
}
_SUFFIX_RULES: list[tuple[str, str]] = [  # (suffix, category) for tokens not in the table
    ("loss", "loss"), ("attention", "fusion"), ("softmax", "activation"), ("norm", "normalization"),
    ("relu", "activation"), ("gelu", "activation"), ("sigmoid", "activation"), ("tanh", "activation"),
    ("pool", "pooling"), ("pooling", "pooling"),
]


def token_category(token: str) -> str | None:
    token = re.sub(r"[123]d$", "", token)
    for category, words in TOKEN_CATEGORIES.items():
        if token in words:
            return category
    if token.startswith("conv"):
        return "convolution"
    for suffix, category in _SUFFIX_RULES:
        if token.endswith(suffix):
            return category
    return None



def infer_category(stem: str) -> str | None:
    """mkbench category for a KernelBench file stem, or None when no op is recognised."""
    name = re.sub(r"^\d+_", "", stem).lower()
    name = re.sub(r"_+", "_", name).strip("_")
    for pattern, repl in PHRASES:
        name = re.sub(rf"(?<![a-z0-9]){pattern}(?![a-z0-9])", repl, name)
    ops = [c for c in (token_category(t) for t in name.split("_") if t) if c]
    if not ops:
        return None
    return "fusion" if len(ops) >= 2 else ops[0]


# --- categories from code --------------------------------------------------------------------

#: a level-1 problem's category: the first of these among its ops (structural ops before the
#: element-wise and reduction ops that accompany them)
OP_PRIORITY = ("convolution", "fusion", "matmul", "pooling", "normalization", "loss", "linear_algebra", "index",
               "spatial", "quantization", "optimizer", "random", "activation", "reduce", "math")
#: categories a level-1 docstring may set over code that shows only math or reductions
DOC_OVERRIDES = ("convolution", "matmul", "pooling", "normalization", "loss", "activation")
RECURRENT = {"lstm", "gru", "rnn", "lstmcell", "grucell", "rnncell"}
ATTENTION = {"multiheadattention", "scaleddotproductattention", "transformer", "transformerencoder",
             "transformerencoderlayer", "transformerdecoder", "transformerdecoderlayer"}
_REDUCTIONS = {"mean", "sum", "norm", "std", "var", "amax", "max", "logsumexp", "sqrt", "rsqrt"}
_INPUT_FUNCTIONS = {"get_inputs", "get_init_inputs"}


def _op_token(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.rsplit(".", 1)[-1].lower())


class _Ops(ast.NodeVisitor):
    """Op tokens of the model code, in source order: layers constructed (``nn.Conv2d``), torch
    and functional calls, tensor method calls, ``@``, and ``normalize`` for a division by a
    reduction (``x / x.norm()``, ``x / rms`` with ``rms = sqrt(mean(x**2))``)."""

    def __init__(self, aliases: dict[str, str]):
        self.aliases = aliases
        self.ops: list[str] = []
        self.assigned: dict[str, ast.AST] = {}

    def visit_FunctionDef(self, node):
        saved, self.assigned = self.assigned, {}
        self.generic_visit(node)
        self.assigned = saved

    def visit_Assign(self, node):
        for t in node.targets:
            if isinstance(t, ast.Name):
                self.assigned[t.id] = node.value
        self.generic_visit(node)

    def visit_Call(self, node):
        name = dotted(node.func, self.aliases)
        if name is None and isinstance(node.func, ast.Attribute):
            name = node.func.attr  # a method of an expression: (x + 1).sum()
        if name is not None:
            head = name.split(".")[0]
            foreign = head in self.aliases and not self.aliases[head].startswith("torch")  # math.sqrt, np.prod
            if head != "self" and not foreign and not name.startswith("super"):
                self.ops.append(_op_token(name))
        self.generic_visit(node)

    def _reduces(self, node: ast.AST, depth: int = 0) -> bool:
        if isinstance(node, ast.Name) and node.id in self.assigned and depth < 2:
            return self._reduces(self.assigned[node.id], depth + 1)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                name = dotted(sub.func, self.aliases) or (sub.func.attr if isinstance(sub.func, ast.Attribute) else "")
                if _op_token(name or "") in _REDUCTIONS:
                    return True
            if isinstance(sub, ast.Name) and sub is not node and sub.id in self.assigned and depth < 2 \
                    and self._reduces(self.assigned[sub.id], depth + 1):
                return True
        return False

    def visit_BinOp(self, node):
        if isinstance(node.op, ast.MatMult):
            self.ops.append("matmul")
        elif isinstance(node.op, ast.Div) and self._reduces(node.right):
            self.ops.append("normalize")
        self.generic_visit(node)


def source_ops(source: str) -> list[str]:
    """Op tokens of every class and function of a problem except its input generators."""
    tree = ast.parse(source)
    visitor = _Ops(import_aliases(tree))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) or (isinstance(node, ast.FunctionDef) and node.name not in _INPUT_FUNCTIONS):
            visitor.visit(node)
    return visitor.ops


def _documentation(source: str) -> str:
    """The docstrings and class names of a problem, lower-cased, CamelCase split into words."""
    tree = ast.parse(source)
    parts = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            parts.append(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", node.name) if isinstance(node, ast.ClassDef) else "")
            parts.append(ast.get_docstring(node) or "")
    return " ".join(parts).lower()


def _docstring_category(source: str) -> str | None:
    """The category the model's own docstring names ("computes Hinge Loss", "Softsign
    activation", "matrix-scalar multiplication"), by :data:`OP_PRIORITY`."""
    tree = ast.parse(source)
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    words = identifier((ast.get_docstring(model) or "") if model else "")
    for pattern, repl in PHRASES:
        words = re.sub(rf"(?<![a-z0-9]){pattern}(?![a-z0-9])", repl, words)
    found = {token_category(w) for w in words.split("_") if w}
    return next((c for c in OP_PRIORITY if c in found), None)


def _single_op(ops: list[str], source: str) -> tuple[str | None, str]:
    """A one-operator problem: the first of :data:`OP_PRIORITY` among its code's ops; where the
    code shows only element-wise math or reductions (a Softsign is ``x / (1 + |x|)``, a hinge
    loss a clamp and a mean), the docstring's category when it ranks higher."""
    found = sorted({op for op in ops if token_category(op)})
    categories = {token_category(op) for op in found}
    pick = next((c for c in OP_PRIORITY if c in categories), None)
    if pick in (None, "reduce", "math"):
        documented = _docstring_category(source)
        if documented and (pick is None or documented in DOC_OVERRIDES):
            return documented, f"{documented} from the model's docstring (code ops: {', '.join(found) or 'none'})"
    if pick is None:
        return None, "no operator recognised in the model's code or docstring"
    return pick, f"{pick} from the model's code (ops: {', '.join(found)})"


def _network(ops: list[str], source: str) -> tuple[str, str]:
    tokens = set(ops)
    words = _documentation(source)
    recurrent = sorted(tokens & RECURRENT) or re.findall(r"\b(rnn|lstm|gru|recurrent)\b", words)[:1]
    if recurrent:
        return "fusion", f"recurrent network ({', '.join(recurrent)}): its gate GEMMs and element-wise gates fuse"
    attention = sorted(tokens & ATTENTION)
    softmax_products = "softmax" in tokens and sum(op in ("matmul", "bmm", "einsum") for op in ops) >= 2
    if attention or softmax_products or "attention" in words:
        why = ", ".join(attention) or ("softmax over matmul products" if softmax_products
                                       else "named in its docstrings")
        return "fusion", f"attention network ({why})"
    conv = sum(token_category(op) == "convolution" for op in ops)
    linear = sum(token_category(op) == "matmul" for op in ops)
    if conv:
        return "convolution", f"convolutional network ({conv} convolution layer(s), {linear} linear/matmul)"
    if linear:
        return "matmul", f"linear network ({linear} linear/matmul layer(s), no convolution)"
    return "fusion", "network with no convolution, linear, recurrent or attention layer recognised: fusion by default"


def infer_from_source(source: str, level: int | None = None) -> tuple[str, str]:
    """(category, reason) for a problem's source (see module docstring)."""
    ops = source_ops(source)
    if level == 2:
        return "fusion", "KernelBench level 2: a fused operator sequence"
    if level == 3:
        return _network(ops, source)
    if level == 1:
        category, why = _single_op(ops, source)
        return (category, why) if category else ("fusion", why + ": fusion by default")
    layers = sum(token_category(op) is not None or op in RECURRENT for op in ops)
    if layers >= 3 and len({token_category(op) for op in ops} - {None}) >= 2:
        return _network(ops, source)
    category, why = _single_op(ops, source)
    return (category, why) if category else ("fusion", why + ": fusion by default")


def categorize(stem: str | None, source: str, level: int | None) -> tuple[str, str]:
    """(category, reason): from the file name where it names the op (levels 1 and 2, or no
    level), else from the code."""
    if stem and level != 3:
        by_name = infer_category(stem)
        if by_name:
            return by_name, f"from the name {stem}"
    return infer_from_source(source, level)


# --- task names ---------------------------------------------------------------------------------

LEVEL_DIR = re.compile(r"level[_-]?(\d+)", re.I)
SAMPLE_NAME = re.compile(r"level_?(\d+)_problem_?(\d+)(?:_sample_?(\d+))?(?:_kernel)?", re.I)


def level_of(path: Path) -> int | None:
    m = LEVEL_DIR.fullmatch(path.parent.name)
    return int(m.group(1)) if m else None


def task_name_for(path: Path, prefix: str = "kb_") -> str:
    """``<prefix>[l<N>_]<stem>``: ``level1/19_ReLU.py`` -> ``kb_l1_19_relu``."""
    level = level_of(path)
    return f"{prefix}{f'l{level}_' if level is not None else ''}{identifier(path.stem)}"


def row_task_name(level: int | None, number: int, prefix: str = "kb_", stem: str | None = None) -> str:
    """Task name of a problem given as a JSON row: the same as its problem file's
    (:func:`task_name_for`) when its KernelBench file stem is known, else ``<prefix>l<N>_<number>``.
    The name depends only on the problem, so the rows of several GPU sets share one task."""
    if stem:
        return f"{prefix}{f'l{level}_' if level is not None else ''}{identifier(stem)}"
    return f"{prefix}{f'l{level}_' if level is not None else ''}{number}"


def kernelbench_stems(root: Path) -> dict[tuple[int, int], str]:
    """(level, problem number) -> file stem of a KernelBench checkout's problems
    (``<root>/level<N>/<number>_<Name>.py``; ``root`` may also be the checkout itself, whose
    problems are under ``KernelBench/``)."""
    root = Path(root)
    if (root / "KernelBench").is_dir():
        root = root / "KernelBench"
    out = {}
    for sub in sorted(root.iterdir()) if root.is_dir() else []:
        m = LEVEL_DIR.fullmatch(sub.name)
        if m and sub.is_dir():
            for f in sub.glob("*.py"):
                n = re.match(r"(\d+)_", f.name)
                if n:
                    out[(int(m.group(1)), int(n.group(1)))] = f.stem
    return out


__all__ = ["OP_PRIORITY", "TOKEN_CATEGORIES", "categorize", "infer_category", "infer_from_source",
           "kernelbench_stems", "level_of", "row_task_name", "source_ops", "task_name_for", "token_category"]
