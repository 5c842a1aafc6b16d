"""`mkbench validate --summary PATH` (issue 29): the counts a GPU report commits as its summary.json,
equal to what the printed table says, rewritten after each task with "complete": false until the
end, and written when tasks fail too (the exit code unchanged)."""

import json
import os
import platform
import re
import textwrap

import pytest
import torch

from mkbench.cli import validate_cmd

TASKS = ("gelu", "sum_lastdim")


def _table_rows(out: str) -> dict:
    """task -> (category, combos, positives passed, positives run, negatives rejected, negatives run, result)."""
    rows = {}
    for line in out.splitlines():
        m = re.match(r"(\S+)\s+(\S+)\s+(\d+)\s+(\d+)/(\d+)\s+(\d+)/(\d+)\s+[\d.]+\s+(.*)$", line)
        if m:
            rows[m[2]] = (m[1], *(int(m[k]) for k in range(3, 8)), m[8].strip())
    return rows


def _snapshots(monkeypatch, path):
    """(complete, tasks) of the file after each write."""
    seen = []
    real = validate_cmd._Summary.write

    def write(self, complete=False):
        real(self, complete)
        data = json.loads(path.read_text())
        seen.append((data["complete"], data["tasks"]))

    monkeypatch.setattr(validate_cmd._Summary, "write", write)
    return seen


def test_summary_counts_equal_the_printed_table(tmp_path, cli, monkeypatch):
    path = tmp_path / "report" / "summary.json"
    seen = _snapshots(monkeypatch, path)
    code, out, err = cli("validate", *(a for t in TASKS for a in ("--task", t)), "--jobs", "2", "--summary", path)
    assert code == 0, err
    data = json.loads(path.read_text())
    rows = _table_rows(out)
    assert set(rows) == set(TASKS), out
    # written after each task, then once more at the end, complete only then
    assert seen == [(False, 1), (False, 2), (True, 2)]
    assert data["complete"] is True
    assert data["device"] == f"cpu: {platform.processor() or platform.machine()}"
    assert data["torch"] == torch.__version__
    assert data["tasks"] == 2 and data["tasks_ok"] == 2
    assert data["positive_controls"] == sum(r[3] for r in rows.values())
    assert data["positive_rejected"] == sum(r[3] - r[2] for r in rows.values()) == 0
    assert data["negative_controls"] == sum(r[5] for r in rows.values())
    assert data["negative_accepted"] == sum(r[5] - r[4] for r in rows.values()) == 0
    totals = re.search(r"(\d+)/(\d+) positive controls passed, (\d+)/(\d+) negative controls rejected", out)
    assert (data["positive_controls"], data["negative_controls"]) == (int(totals[2]), int(totals[4]))
    assert data["positive_controls"] > 0 and data["negative_controls"] >= 4 * data["positive_controls"]
    by_task = {d["task"]: d for d in data["tasks_detail"]}
    assert set(by_task) == set(TASKS)
    for name, (category, combos, pos_ok, pos, neg_ok, neg, result) in rows.items():
        d = by_task[name]
        assert (d["category"], d["combos"], d["ok"], d["problems"]) == (category, combos, True, [])
        assert (d["positive_controls"], d["negative_controls"], d["negative_accepted"]) == (pos, neg, neg - neg_ok)
        assert isinstance(d["seconds"], float) and d["out_of_memory"] == [] and isinstance(d["notes"], list)
        cat = data["per_category"][category]
        assert cat["tasks"] == 1 and cat["tasks_ok"] == 1 and cat["positive_controls"] == pos
        assert cat["negative_controls"] == neg and cat["negative_accepted"] == 0
    assert set(data["per_category"]) == {"activation", "reduce"}


IGNORING = '''
import torch
from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import randn

def reference(x, y):
    return x * 2.0  # y is never read: validate flags it

def make_inputs(shape, dtype, gen):
    return (randn(gen, (shape["n"],), dtype), randn(gen, (shape["n"],), dtype))

TASK = Task(name="ignores_y", category="math", description="a fake task that ignores an input",
            reference=reference, make_inputs=make_inputs,
            shapes=[Shape("small", {"n": 1000}, "small"), Shape("awkward", {"n": 33}, "awkward")],
            contract=AllClose(), dtypes=("float32",), flops=lambda s: s["n"], bytes=lambda s, d: 8 * s["n"])
'''


def test_summary_is_written_when_a_task_fails_and_the_exit_code_stays(tmp_path, cli, monkeypatch):
    (tmp_path / "tasks" / "math").mkdir(parents=True)
    (tmp_path / "tasks" / "math" / "ignores_y.py").write_text(textwrap.dedent(IGNORING))
    monkeypatch.setenv("MKBENCH_TASK_DIRS", str(tmp_path / "tasks"))
    monkeypatch.setattr(validate_cmd, "_registry", None)
    path = tmp_path / "summary.json"
    code, out, _ = cli("validate", "--task", "ignores_y", "--task", "gelu", "--jobs", "2", "--summary", path)
    assert code == 1
    data = json.loads(path.read_text())
    assert data["complete"] is True and data["tasks"] == 2 and data["tasks_ok"] == 1
    by_task = {d["task"]: d for d in data["tasks_detail"]}
    assert by_task["ignores_y"]["ok"] is False and by_task["gelu"]["ok"] is True
    assert ("small/float32: the output does not depend on input[1] (not at the task's dtype, nor with the floating "
            "inputs in float64)") in by_task["ignores_y"]["problems"]
    assert data["per_category"]["math"]["tasks_ok"] == 0 and data["per_category"]["activation"]["tasks_ok"] == 1
    assert "problem: ignores_y: small/float32: the output does not depend on input[1]" in out


def test_gpus_name_visible_devices_in_turn():
    """``validate --gpus``: which CUDA_VISIBLE_DEVICES entries the pinned pool processes take."""
    from mkbench.cli.validate_cmd import gpu_ids
    from mkbench.errors import BadInput
    assert gpu_ids("all", None, 4) == ["0", "1", "2", "3"]
    assert gpu_ids("2", None, 4) == ["0", "1"]
    assert gpu_ids("all", "3,5", 2) == ["3", "5"]  # the entries this process was given, not 0..n
    for bad in ("5", "0", "two"):
        with pytest.raises(BadInput):
            gpu_ids(bad, None, 4)


def test_pool_processes_each_take_one_gpu_in_turn():
    from mkbench.cli.validate_cmd import _gpu_pool
    with _gpu_pool(3, ["7", "9"]) as pool:
        seen = sorted(pool.submit(os.getenv, "CUDA_VISIBLE_DEVICES").result() for _ in range(12))
    assert set(seen) <= {"7", "9"} and seen  # every process pinned; which process ran which call is the pool's


def test_gpus_need_cuda(cli):
    code, out, err = cli("validate", "--task", "gelu", "--gpus", "2")
    assert code != 0 and "--gpus needs --device cuda" in err
