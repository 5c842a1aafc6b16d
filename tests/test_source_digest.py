"""The source digest identifies mkbench's code where no git checkout travels: the same code gives the same
digest whether Python imports it from a checkout or from an installed package (the benchmark's layout, a
wheel), and an installed package's digest is of its files, not of nothing."""

import hashlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from mkbench.environment import source_digest

ROOT = Path(__file__).resolve().parent.parent
NOTHING = hashlib.sha256().hexdigest()[:16]  # e3b0c44298fc1c14: what calls 45-48 recorded


def _digest_in(pythonpath: Path) -> str:
    code = "from mkbench.environment import source_digest; print(source_digest())"
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(pythonpath)),
                         cwd=pythonpath, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_an_installed_layout_has_the_checkouts_digest(tmp_path):
    spec = importlib.util.spec_from_file_location("throughput_bench", ROOT / "benchmarks" / "throughput.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    here = source_digest()
    assert here != NOTHING
    installed = bench.layout(ROOT, tmp_path / "site")  # mkbench/ with backends/, tasks/, hardware_profiles/ inside
    assert _digest_in(installed) == here
    # a changed task file changes it
    task = next((installed / "mkbench" / "tasks").rglob("silu.py"))
    task.write_text(task.read_text() + "\n# changed\n")
    assert _digest_in(installed) not in (here, NOTHING)
