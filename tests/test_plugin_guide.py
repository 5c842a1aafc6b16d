"""docs/writing-an-accelerator-plugin.md quotes the example plugin's files verbatim, in fenced
blocks titled with the file's path; these tests keep the two in sync, and run the example's own
test suite (the guide's "Testing a plugin" section) from the checkout, without installing it.

After editing a quoted file: MKBENCH_UPDATE_GUIDE=1 python -m pytest tests/test_plugin_guide.py
rewrites the guide's blocks from the files.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "writing-an-accelerator-plugin.md"
EXAMPLE = ROOT / "examples" / "mkbench-numpy-accelerator"
# ```python title="path/from/repo/root"  ...file content...  ```
BLOCK = re.compile(r'^```(?P<lang>[\w+-]*)[ \t]+title="(?P<path>[^"]+)"[ \t]*\n(?P<body>.*?)^```[ \t]*$', re.M | re.S)


def _blocks(text):
    return list(BLOCK.finditer(text))


def test_guide_blocks_are_verbatim_copies_of_the_example_files():
    text = GUIDE.read_text()
    blocks = _blocks(text)
    assert blocks, f"{GUIDE} has no fenced block titled with a file path"
    if os.environ.get("MKBENCH_UPDATE_GUIDE"):
        text = BLOCK.sub(lambda m: f'```{m["lang"]} title="{m["path"]}"\n{(ROOT / m["path"]).read_text()}```', text)
        GUIDE.write_text(text)
        blocks = _blocks(text)
    stale = []
    for m in blocks:
        path = ROOT / m["path"]
        assert path.is_file(), f"{GUIDE.name} quotes {m['path']}, which does not exist"
        if m["body"] != path.read_text():
            line = text.count("\n", 0, m.start()) + 1
            stale.append(f"{GUIDE.name}:{line}: block differs from {m['path']}")
    assert not stale, ("\n".join(stale)
                       + "\n(refresh with MKBENCH_UPDATE_GUIDE=1 python -m pytest tests/test_plugin_guide.py)")


def test_guide_quotes_the_plugin_files_it_explains():
    quoted = {m["path"] for m in _blocks(GUIDE.read_text())}
    prefix = "examples/mkbench-numpy-accelerator/"
    for rel in ("pyproject.toml", "mkbench_numpy_accelerator/__init__.py", "mkbench_numpy_accelerator/backend.py",
                "mkbench_numpy_accelerator/numpy-host.yaml", "tests/conftest.py"):
        assert prefix + rel in quoted, f"the guide no longer quotes {prefix + rel}"


def test_guide_names_every_hook_and_backend_method():
    from mkbench import hookspecs
    from mkbench.backend import Backend
    text = GUIDE.read_text()
    hooks = [n for n in vars(hookspecs) if n.startswith("register_")]
    methods = [n for n, v in vars(Backend).items() if callable(v) and not n.startswith("_")]
    for name in hooks + methods:
        assert f"`{name}(" in text, f"the guide does not explain {name}"
    for name in ("MKBENCH_LOAD_PLUGINS", "MKBENCH_TRACE_PLUGINS", "mkbench.plugins.register_plugin",
                 "mkbench.plugins.unregister_plugin"):
        assert name in text, f"the guide does not mention {name}"


@pytest.mark.slow
def test_example_plugins_own_tests_pass():
    env = {k: v for k, v in os.environ.items()
           if k not in ("MKBENCH_LOAD_PLUGINS", "MKBENCH_TRACE_PLUGINS", "MKBENCH_STORE", "MKBENCH_TASK_DIRS")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:benchmark"],
                          cwd=EXAMPLE, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
