"""The CUDA-L1 cross-hardware study (mkbench.analysis.cuda_l1, `mkbench analyze cuda-l1`, the
report's section) on stores built here: two devices (h100, h200), two GPU sets (a100, h100), the
default and cudnn variants, with planted verdicts, times and recorded scores."""

import json

import pandas as pd
import pytest

from mkbench.analysis import attempt_table, load_results
from mkbench.analysis.cuda_l1 import methods_by_gpu_set, study
from mkbench.plugins import build_registry
from mkbench.store import Store
from synthetic_store import _row

PROFILES = build_registry().hardware
EAGER_US = 100.0
NO_KERNEL = "no cuda kernel of the candidate ran: the answer came from framework kernels (at::native)"
FALLBACK = "framework kernels did 60% of the work (at::native), over the 10% allowed (--framework-ops forbid)"

# (set, variant, device) -> planted candidates:
# task, level, category, verdict, candidate us, error, own launches, framework share, recorded scores
PLANTED = {
    ("a100", "default", "h100"): [
        ("kb_l1_1", 1, "matmul", "correct", 50.0, None, 2, 0.05, {"score_default": 2.0}),
        ("kb_l1_2", 1, "activation", "framework", 100.0, NO_KERNEL, 0, 1.0, {"score_default": 1.5}),
        ("kb_l1_3", 1, "activation", "framework", 80.0, FALLBACK, 3, 0.6, {"score_default": 1.2}),
        ("kb_l2_1", 2, "fusion", "correct", 20.0, None, 4, 0.0, {"score_default": 4.0}),
        ("kb_l2_2", 2, "fusion", "correct", 50.0, None, 4, 0.0, {"score_default": 4.0}),
    ],
    ("a100", "default", "h200"): [  # kb_l2_2 not run here; kb_l2_1 wrong here
        ("kb_l1_1", 1, "matmul", "correct", 25.0, None, 2, 0.05, {"score_default": 2.0}),
        ("kb_l1_2", 1, "activation", "framework", 100.0, NO_KERNEL, 0, 1.0, {"score_default": 1.5}),
        ("kb_l1_3", 1, "activation", "framework", 80.0, FALLBACK, 3, 0.6, {"score_default": 1.2}),
        ("kb_l2_1", 2, "fusion", "incorrect", None, "max abs error 0.3 at [0, 5]", 4, None, {"score_default": 4.0}),
    ],
    ("a100", "cudnn", "h100"): [  # the reference under cuDNN flags: no kernel of its own
        ("kb_l1_1", 1, "matmul", "framework", 90.0, NO_KERNEL, 0, 1.0, {"score_default": 2.0, "score_cudnn": 2.0}),
    ],
    ("h100", "default", "h100"): [
        ("kb_l1_1", 1, "matmul", "correct", 40.0, None, 2, 0.0, {"score_default": 3.0}),
    ],
}
# (device, task) whose eager baseline itself failed the contract there
EAGER_WRONG = {("h200", "kb_l2_1")}
# the h200 runs were given another --method: the study and the GLM go by the GPU set all the same
METHOD = {"h100": "cuda-l1-{set}{suffix}", "h200": "h200-batch-{set}{suffix}"}


def _build(path, device, device_name):
    store = Store(path)
    try:
        for (gpu_set, variant, dev), planted in PLANTED.items():
            if dev != device:
                continue
            method = METHOD[device].format(set=gpu_set, suffix="" if variant == "default" else f"-{variant}")
            rid = store.start_run(method, {"framework_threshold": 0.1}, device, "cuda", method,
                                  {"device_name": device_name}, {"python": "3.x", "packages": {"torch": "x"}}, 1)
            for task, level, category, verdict, t, error, launches, share, scores in planted:
                wrong = (device, task) in EAGER_WRONG
                store.record_unit(rid, task, "eager", "eager", [dict(
                    _row(task, category, "eager", "incorrect" if wrong else "correct", None if wrong else EAGER_US,
                         True), timer="cuda_event")])
                own = scores.get(f"score_{variant}")
                vs_eager = scores["score_default"] if variant == "default" else scores["score_default"] / own
                extra = {"import": {"importer": "kernelbench-rows", "level": level, "gpu_set": gpu_set,
                                    "recorded": scores, "variant": variant,
                                    "recorded_score_field": f"score_{variant}", "recorded_score": own,
                                    "recorded_vs_eager": vs_eager},
                         "own_launches": launches, "framework_threshold": 0.1}
                if share is not None:
                    extra["framework_share"] = share
                row = dict(_row(task, category, method, verdict, t), backend="cuda", timer="cuda_event",
                           error=error, extra=extra)
                store.record_unit(rid, task, "cuda", method, [row])
            store.set_run_status(rid, "finished")
    finally:
        store.close()
    return path


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    d = tmp_path_factory.mktemp("cudal1")
    return (_build(d / "h100.sqlite", "h100", "NVIDIA H100 80GB HBM3"),
            _build(d / "h200.sqlite", "h200", "NVIDIA H200"))


@pytest.fixture(scope="module")
def st(stores):
    results = load_results(list(stores))
    return study(results, attempt_table(results, PROFILES), ("large",))


def _group(st, gpu_set, variant, hw):
    g = st.groups
    return g[(g["set"] == gpu_set) & (g["variant"] == variant) & (g["hw"] == hw)].iloc[0]


def _kernel(st, task, gpu_set, variant, hw):
    k = st.kernels
    return k[(k["task"] == task) & (k["set"] == gpu_set) & (k["variant"] == variant) & (k["hw"] == hw)].iloc[0]


def test_counts_medians_and_evidence_per_set_variant_and_device(st):
    assert st.devices == ["h100", "h200"] and st.sets == ["a100", "h100"] and st.variants == ["default", "cudnn"]
    g = _group(st, "a100", "default", "h100")
    assert g.candidates == 5 and g.verdicts == {"framework": 2, "correct": 3} and g.correct == 3
    assert g.no_custom_kernel == 1 and g.fallback == 1  # kb_l1_2 launched nothing; kb_l1_3 fell back
    assert g.median_speedup_eager == pytest.approx(2.0)  # 2x, 5x, 2x
    assert g.median_recorded_score == pytest.approx(2.0)  # 2, 1.5, 1.2, 4, 4
    assert g.median_ratio == pytest.approx(1.0)  # 2/2, 5/4, 2/4
    g = _group(st, "a100", "default", "h200")
    assert g.candidates == 4 and g.verdicts == {"incorrect": 1, "framework": 2, "correct": 1}
    assert g.median_speedup_eager == pytest.approx(4.0) and g.median_ratio == pytest.approx(2.0)
    # the cudnn variant: a right answer from framework kernels only; no speedup, said why, and timed as is
    g = _group(st, "a100", "cudnn", "h100")
    assert pd.isna(g.median_speedup_eager) and g.note == "no correct, timed candidate (1 framework)"
    assert g.no_custom_kernel == 1 and g.median_speedup_as_timed == pytest.approx(100 / 90)
    assert g.median_recorded_vs_eager == pytest.approx(1.0)  # score_default / score_cudnn
    g = _group(st, "h100", "default", "h200")
    assert g.candidates == 0 and g.note == "set h100, variant default not run on h200"


def test_per_kernel_real_over_claimed_and_dash_where_a_device_did_not_run_it(st):
    k = _kernel(st, "kb_l2_1", "a100", "default", "h100")
    assert k.speedup_eager == pytest.approx(5.0) and k.recorded_vs_eager == 4.0 and k.ratio == pytest.approx(1.25)
    k = _kernel(st, "kb_l2_2", "a100", "default", "h200")
    assert not k.ran and pd.isna(k.speedup_eager) and k.note == "not run on h200"
    k = _kernel(st, "kb_l1_2", "a100", "default", "h100")
    assert k.no_custom_kernel and not k.fallback and pd.isna(k.speedup_eager)
    assert k.note.startswith("framework: no cuda")
    assert k.speedup_as_timed == pytest.approx(1.0)
    k = _kernel(st, "kb_l2_1", "a100", "default", "h200")
    assert pd.isna(k.speedup_eager) and k.note.startswith("incorrect: max abs error")


def test_the_same_kernel_on_two_devices_and_across_sets(st):
    assert len(st.pairs) == 1
    p = st.pairs.iloc[0]
    assert (p.task, p.set, p.hw_a, p.hw_b) == ("kb_l1_1", "a100", "h100", "h200")
    assert (p.speedup_a, p.speedup_b, p.spread) == pytest.approx((2.0, 4.0, 2.0))
    c = st.verdict_changes
    assert c[["task", "verdict_a", "verdict_b"]].values.tolist() == [["kb_l2_1", "correct", "incorrect"]]
    across = st.across_sets[(st.across_sets["hw"] == "h100") & (st.across_sets["variant"] == "default")]
    row = across.iloc[0]
    assert row.task == "kb_l1_1" and row.per_set == "a100=2.00, h100=2.50" and row.spread == pytest.approx(1.25)
    text = st.headline()
    assert text.startswith("Kernels optimized for a100: on h100 3/5 correct, median 2.00x over eager")
    assert "1 kernel(s) timed on both h100 and h200: median speedup on h200 / on h100 2.00" in text


def test_right_answers_on_two_devices_as_timed(st):
    # every right answer (correct or framework) on both devices, as timed; a kernel wrong on one is left out
    t = st.pairs_as_timed
    assert "kb_l2_1" not in set(t["task"])  # correct on h100, incorrect on h200
    row = t[(t["task"] == "kb_l1_1") & (t["set"] == "a100")].iloc[0]
    assert (row.verdict_a, row.verdict_b, row.hw_a, row.hw_b) == ("correct", "correct", "h100", "h200")
    assert (row.speedup_a, row.speedup_b, row.b_over_a) == pytest.approx((2.0, 4.0, 2.0))
    assert list(t["spread"]) == sorted(t["spread"], reverse=True)
    assert f"Counting every right answer as timed (framework ones included), {len(t)} kernel(s) ran on both h100 " \
           "and h200" in st.headline()
    assert st.summary()["cross_device_as_timed"][0]["spread"] == pytest.approx(t["spread"].iloc[0])


def test_glm_method_is_the_gpu_set(stores):
    results = load_results(list(stores))
    attempts = attempt_table(results, PROFILES)
    methods = set(methods_by_gpu_set(attempts).query("not is_baseline")["method"])
    assert methods == {"cuda-l1-a100", "cuda-l1-a100-cudnn", "cuda-l1-h100"}


def test_analyze_cuda_l1_prints_tables_and_writes_the_summary(stores, cli, tmp_path):
    out_json = tmp_path / "summary.json"
    code, out, err = cli("analyze", "cuda-l1", "--store", stores[0], "--store", stores[1], "--json", out_json)
    assert code == 0, err
    assert "### The same kernel on two devices" in out and "- (not run on h200)" in out
    doc = json.loads(out_json.read_text())
    assert doc["devices"] == ["h100", "h200"] and doc["sets"] == ["a100", "h100"]
    cell = doc["by_set"]["a100"]["default"]["h100"]
    assert {"candidates", "verdicts", "median_speedup_eager", "no_custom_kernel",
            "median_recorded_score"} <= set(cell)
    assert (cell["candidates"], cell["no_custom_kernel"], cell["median_speedup_eager"]) == (5, 1, 2.0)
    assert doc["by_set"]["a100"]["cudnn"]["h100"]["median_speedup_eager"] is None
    assert doc["by_set"]["h100"]["default"]["h200"]["candidates"] == 0


def test_report_section_only_for_cuda_l1_stores(stores, cli):
    import synthetic_store as synth
    code, out, err = cli("report", "--store", stores[0], "--store", stores[1], "--no-run-detail")
    assert code == 0, err
    assert "## CUDA-L1 kernels across hardware" in out
    glm = out.split("## Category-aware difficulty")[1].split("\n## ")[0]
    method = next(r for r in glm.splitlines() if r.startswith("| method"))
    assert method.split("|")[2].strip() == "3"  # cuda-l1-a100, cuda-l1-a100-cudnn, cuda-l1-h100: not 4 run names
    code, out, err = cli("report", "--store", synth.build_imported(stores[0].parent / "other.sqlite"),
                         "--no-run-detail")
    assert code == 0, err
    assert "## CUDA-L1 kernels across hardware" in out  # the older fixture's rows carry score_default
    code, out, err = cli("report", "--store", synth.build_cpu_main(stores[0].parent / "cpu.sqlite"),
                         "--no-run-detail")
    assert code == 0, err
    assert "CUDA-L1" not in out


def test_an_incorrect_verdict_where_eager_itself_was_incorrect_is_counted_apart(st, stores, cli, tmp_path):
    assert bool(_kernel(st, "kb_l2_1", "a100", "default", "h200").eager_fails_too)
    assert not bool(_kernel(st, "kb_l2_1", "a100", "default", "h100").eager_fails_too)  # correct there
    assert not bool(_kernel(st, "kb_l1_2", "a100", "default", "h200").eager_fails_too)  # eager right there
    assert _group(st, "a100", "default", "h200").eager_fails_too == 1
    assert _group(st, "a100", "default", "h100").eager_fails_too == 0
    assert any("kb_l2_1 on h200" in n for n in st.notes)
    assert "1 of the incorrect verdicts are on tasks whose eager baseline was itself incorrect" in st.headline()
    out = tmp_path / "summary.json"
    code, text, err = cli("analyze", "cuda-l1", "--store", stores[0], "--store", stores[1], "--json", out)
    assert code == 0, err
    assert "incorrect, eager too" in text
    assert json.loads(out.read_text())["by_set"]["a100"]["default"]["h200"]["incorrect_eager_too"] == 1


def test_the_report_names_the_tasks_whose_baseline_failed_its_contract(stores, cli):
    code, out, err = cli("report", "--store", stores[0], "--store", stores[1], "--no-run-detail")
    assert code == 0, err
    verdicts = out.split("## Verdicts and framework share")[1].split("\n## ")[0]
    assert "A baseline's own answer failed its task's contract on 1 (hardware, task) pair(s); 1 of the" in verdicts
    row = next(r for r in verdicts.splitlines() if "kb_l2_1" in r)
    assert [c.strip() for c in row.strip("|").split("|")] == ["h200", "kb_l2_1", "eager", "1"]
    code, out, err = cli("report", "--store", stores[0], "--no-run-detail")  # the h100 store: eager right there
    assert code == 0, err
    assert "A baseline's own answer failed" not in out
