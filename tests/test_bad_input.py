"""Bad input gets one clear line and a non-zero exit; nothing already recorded is lost."""

import hashlib
from pathlib import Path

import pytest

from mkbench.errors import BadInput
from mkbench.hardware import load_profile, parse_profile
from mkbench.store import Store

PROFILES = Path(__file__).resolve().parent.parent / "hardware_profiles"


def _one_line(err: str) -> str:
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.mark.parametrize("args, needle", [
    (["run", "--backend", "nosuch"], "unknown backend 'nosuch'"),
    (["run", "--task", "nosuch_task", "--baselines", "none"], "unknown task 'nosuch_task'"),
    (["run", "--hw", "nosuch_hw", "--baselines", "none"], "unknown hardware profile 'nosuch_hw'"),
    (["run", "--hw", "h100", "--baselines", "none"], "(vendor nvidia), but the device found is no GPU"),
    (["run", "--category", "nosuch"], "unknown category 'nosuch'"),
    (["run", "--baselines", "triton"], "triton is not a baseline"),
])
def test_unknown_names(cli, store_path, args, needle):
    code, _, err = cli(*args, "--store", store_path, "--no-progress")
    assert code == 2
    assert needle in _one_line(err)


def test_solutions_naming_unknown_task_changes_nothing(tmp_path, cli, store_path):
    code, _, err = cli("run", "--task", "gelu", "--baselines", "none", "--seeds", "1", "--store", store_path,
                       "--no-progress")
    assert code == 0, err
    before = hashlib.sha256(store_path.read_bytes()).hexdigest()
    sol = tmp_path / "sol" / "activation"
    sol.mkdir(parents=True)
    (sol / "not_a_task.py").write_text("def kernel_function(x):\n    return x\n")
    code, _, err = cli("run", "--solutions", tmp_path / "sol", "--method", "m", "--store", store_path, "--no-progress")
    assert code == 2
    assert "names task activation/not_a_task, which does not exist" in _one_line(err)
    assert len(Store(store_path).runs()) == 1
    assert hashlib.sha256(store_path.read_bytes()).hexdigest() == before


def test_solutions_layout_and_missing_dir(tmp_path, cli, store_path):
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "gelu.py").write_text("def kernel_function(x):\n    return x\n")
    code, _, err = cli("run", "--solutions", tmp_path / "flat", "--store", store_path, "--no-progress")
    assert code == 2 and "not laid out as <category>/<task>.py" in _one_line(err)
    code, _, err = cli("run", "--solutions", tmp_path / "missing", "--store", store_path, "--no-progress")
    assert code == 2 and "not a directory" in _one_line(err)


@pytest.mark.parametrize("content", [b"this is not sqlite at all" * 100, b"SQLite format 3\x00" + b"\x13" * 4000])
def test_corrupt_store_is_refused_and_left_untouched(tmp_path, cli, content):
    path = tmp_path / "bad.sqlite"
    path.write_bytes(content)
    for args in (["run", "--task", "gelu"], ["report"]):
        code, _, err = cli(*args, "--store", path)
        assert code == 2
        assert "not a usable mkbench store" in _one_line(err)
        assert path.read_bytes() == content


def test_a_store_in_a_missing_directory(tmp_path, cli):
    """A store opened in a directory that is not there names it (sqlite said "unable to open database
    file", and the advice to move the store aside); a run makes the directory, as for its --json file."""
    from mkbench.errors import BadInput
    from mkbench.store import Store
    with pytest.raises(BadInput, match="no directory"):
        Store(tmp_path / "nowhere" / "r.sqlite")
    code, _, err = cli("report", "--store", tmp_path / "nowhere" / "r.sqlite")
    assert code == 2 and "no results store at" in _one_line(err)
    assert not (tmp_path / "nowhere").exists()
    code, _, err = cli("run", "--task", "gelu", "--shape-role", "small", "--dtype", "float32", "--no-timing",
                       "--baselines", "none", "--store", tmp_path / "new" / "dir" / "r.sqlite", "--no-progress")
    assert code == 0, err
    assert (tmp_path / "new" / "dir" / "r.sqlite").stat().st_size > 0


def test_foreign_sqlite_file_is_refused(tmp_path, cli):
    import sqlite3
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE precious (x)")
    db.execute("INSERT INTO precious VALUES (42)")
    db.commit()
    db.close()
    code, _, err = cli("report", "--store", path)
    assert code == 2 and "no mkbench meta table" in _one_line(err)
    assert sqlite3.connect(path).execute("SELECT x FROM precious").fetchall() == [(42,)]


def test_garbage_yaml_profile(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\n  peak: [1, 2\n")
    with pytest.raises(BadInput, match=r"bad.yaml:\d+: not valid YAML"):
        load_profile(bad)
    bad.write_text("- just\n- a list\n")
    with pytest.raises(BadInput, match="must be a YAML mapping"):
        load_profile(bad)


@pytest.mark.parametrize("field, value, needle", [
    ("memory_bandwidth_gbs", -3, "field 'memory_bandwidth_gbs' must be a positive number"),
    ("memory_bandwidth_gbs", None, "field 'memory_bandwidth_gbs' is missing"),
    ("device", "fpga", "field 'device' must be one of"),
    ("peak_tflops", {"fp99": 1}, "field 'peak_tflops.fp99' is not a known dtype"),
    ("detect", {"device_name_regex": "H1(00"}, "field 'detect.device_name_regex' is not a valid regex"),
    ("name", "Bad Name", "field 'name' must be lower-case"),
])
def test_malformed_profile_names_file_and_field(field, value, needle):
    import yaml
    data = yaml.safe_load((PROFILES / "h100.yaml").read_text())
    if value is None:
        del data[field]
    else:
        data[field] = value
    with pytest.raises(BadInput) as exc:
        parse_profile("somewhere/h100.yaml", data)
    assert str(exc.value).startswith("somewhere/h100.yaml: ") and needle in str(exc.value)


def test_malformed_task_file(tmp_path):
    from mkbench.task import load_task_file
    folder = tmp_path / "activation"
    folder.mkdir()
    (folder / "broken.py").write_text("import torch\nTASK = 1/0\n")
    with pytest.raises(BadInput, match=r"broken.py: task file failed to import: ZeroDivisionError"):
        load_task_file(folder / "broken.py")
    (folder / "empty.py").write_text("x = 1\n")
    with pytest.raises(BadInput, match=r"empty.py: defines no TASK"):
        load_task_file(folder / "empty.py")
