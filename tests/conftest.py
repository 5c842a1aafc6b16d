import os
import sys
from pathlib import Path

# In-process tests run Triton through its interpreter; it must be chosen before triton is imported.
os.environ.setdefault("TRITON_INTERPRET", "1")
# Stores written by tests keep their digest keys in a throwaway folder, not the user's key directory
# (spawned `mkbench` processes inherit it).
if "MKBENCH_KEY_DIR" not in os.environ:
    import tempfile
    os.environ["MKBENCH_KEY_DIR"] = tempfile.mkdtemp(prefix="mkbench-test-keys-")

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # helper modules must import in spawned workers too

from mkbench import plugins  # noqa: E402


def _has_cuda() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; this machine has none")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def throwaway_plugin():
    """Register a throwaway backend plugin for one test, then unregister it."""
    import throwaway_plugin as module
    plugins.register_plugin(module, name="throwaway")
    yield module
    plugins.unregister_plugin("throwaway")


@pytest.fixture
def cli(capsys):
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""
    from mkbench.cli import main

    def run(*args):
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "results.sqlite"
