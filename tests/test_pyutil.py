"""mkbench.pyutil: the one answer to what a file binds, what an expression names, and how a file
is imported."""

import ast
import sys
import textwrap

import pytest

from mkbench.pyutil import dotted, import_aliases, import_bindings, import_path, module_name_for, top_level_names


def test_top_level_names():
    source = textwrap.dedent("""
        import torch.nn.functional
        import numpy as np
        from triton import language as tl, jit
        from os.path import *
        a, (b, *c) = 1, (2, 3, 4)
        d: int = 5
        e += 1
        def f(): g = 1
        class K: h = 2
        if a:
            i = 1
        else:
            j = 2
        try:
            import cupy
        except ImportError as err:
            cupy = None
        with open("x") as (k, m):
            pass
        for n in range(3):
            pass
        (o := 3)
        """)
    assert top_level_names(source) == {"torch", "np", "tl", "jit", "a", "b", "c", "d", "e", "f", "K", "i", "j", "cupy",
                                       "err", "k", "m", "n", "o"}
    assert top_level_names(ast.parse("x = 1")) == {"x"}
    with pytest.raises(SyntaxError):
        top_level_names("def (")


def test_dotted_and_aliases():
    tree = ast.parse("import torch.nn.functional as F\nfrom torch import nn\ndef f():\n    import numpy as np\n")
    aliases = import_aliases(tree)
    assert aliases == {"F": "torch.nn.functional", "nn": "torch.nn", "np": "numpy"}
    call = ast.parse("F.relu(x)").body[0].value
    assert dotted(call.func) == "F.relu" and dotted(call.func, aliases) == "torch.nn.functional.relu"
    assert dotted(ast.parse("f(x).y").body[0].value) is None
    assert dotted(ast.parse("a[0].b").body[0].value) is None


def test_import_bindings_of_one_statement():
    first, second, third = ast.parse("import torch.nn\nfrom . import x as y\nfrom m import *\n").body
    assert import_bindings(first) == {"torch": "torch"} and import_bindings(second) == {"y": ".x"}
    assert import_bindings(third) == {}


def test_import_path_once_with_preset_globals(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text("VALUE = DEVICE + '!'\nCOUNT = [0]\nCOUNT[0] += 1\n")
    module = import_path(path, prefix="t", preset={"DEVICE": "cpu"})
    assert module.VALUE == "cpu!" and module.__name__ == module_name_for(path, "t")
    assert import_path(path, prefix="t", preset={"DEVICE": "other"}) is module and module.COUNT == [1]
    other = import_path(path, "t_other_name", preset={"DEVICE": "meta"})
    assert other is not module and other.VALUE == "meta!"
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('nope')\n")
    with pytest.raises(RuntimeError, match="nope"):
        import_path(broken, prefix="t")
    assert module_name_for(broken, "t") not in sys.modules  # a failed import leaves nothing behind
