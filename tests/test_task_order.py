"""The order a run evaluates its tasks in (``--shuffle-tasks``)."""

def test_shuffled_tasks_keep_the_plan_and_change_only_its_order(monkeypatch):
    """``--shuffle-tasks SEED``: a run cut short holds a sample of every category, not the first ones."""
    monkeypatch.delenv("MKBENCH_TASK_DIRS", raising=False)  # mkbench's own tasks only (an earlier --tasks-dir sets it)
    from mkbench.engine.plan import Planner
    from mkbench.engine.runner import RunOptions
    from mkbench.plugins import build_registry
    reg = build_registry()
    hw = reg.hardware["cpu"]

    def order(seed):
        units = Planner(reg, RunOptions(backend="triton", baselines=["eager"], shuffle_seed=seed)).plan(hw)
        return [(u.task.name, u.backend.name) for u in units]

    plain, one, again, other = order(None), order(1), order(1), order(2)
    assert sorted(one) == sorted(plain) and one != plain
    assert one == again and other != one  # the same seed, the same order (a resume goes on in it)
    tasks = list(dict.fromkeys(t for t, _ in one))
    # a task's units stay together
    assert [t for t, _ in one] == [t for t in tasks for _ in range(sum(1 for u, _ in one if u == t))]
    # the first 20 tasks of the shuffled order span more categories than the plain order's first 20
    cat = {u.task.name: u.task.category for u in Planner(reg, RunOptions(backend="triton")).plan(hw)}
    first = list(dict.fromkeys(t for t, _ in plain))[:20]
    assert len({cat[t] for t in tasks[:20]}) > len({cat[t] for t in first})


def test_the_cli_refuses_a_shuffle_seed_that_is_not_a_number(cli, tmp_path):
    code, out, err = cli("run", "--backend", "triton", "--hw", "cpu", "--shuffle-tasks", "soon",
                         "--store", tmp_path / "r.sqlite")
    assert code != 0 and "--shuffle-tasks" in err and not (tmp_path / "r.sqlite").exists()
