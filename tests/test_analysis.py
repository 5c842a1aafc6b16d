"""The analyses recover structure planted in a synthetic store (tests/synthetic_store.py), and the
HTML report renders its plots in headless Chromium."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import synthetic_store as synth
from mkbench.analysis import attempt_table, cross_hardware, difficulty_analysis, load_results, rates_table
from mkbench.analysis.rates import fast_p
from mkbench.plugins import build_registry

PROFILES = build_registry().hardware


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    d = tmp_path_factory.mktemp("synth")
    # h200 measured a bigger problem for reduce_03: never compared across hardware
    return (synth.build(d / "h100.sqlite", "h100", "NVIDIA H100 80GB HBM3", seed=1),
            synth.build(d / "h200.sqlite", "h200", "NVIDIA H200", seed=2,
                        bytes_for=lambda t: 8e8 if t == "reduce_03" else 4e8))


@pytest.fixture(scope="module")
def attempts(stores):
    return attempt_table(load_results(list(stores)), PROFILES)


def test_merge_keeps_each_runs_environment(stores):
    rs = load_results(list(stores))
    assert len(rs.runs) == 6 and len({r.key for r in rs.runs}) == 6
    assert {r.device_name for r in rs.runs if r.hw == "h200"} == {"NVIDIA H200"}
    assert set(rs.rows["hw"]) == {"h100", "h200"}


def test_glm_finds_category_explains_more_than_method(attempts):
    d = difficulty_analysis(attempts)
    shares = d.deviance.set_index("factor")
    assert list(shares.index) == ["category", "method", "hw"]
    assert shares.loc["category", "sequential"] > 0.3
    assert shares.loc["category", "sequential"] > 5 * shares.loc["method", "sequential"]
    assert shares.loc["category", "drop_one"] > 5 * shares.loc["method", "drop_one"]
    assert shares.loc["category", "p_value"] < 1e-6
    cats = d.categories.set_index("category")
    assert cats.loc["fusion", "unsolved"] == 1.0  # planted: no method ever solves fusion
    assert cats.loc["activation", "unsolved"] < 0.2
    assert d.tasks.iloc[0]["category"] == "fusion" and d.tasks.iloc[0]["difficulty"] == 1.0


def test_rates_and_fast_p_match_the_planted_speedups(attempts):
    a = attempts[(attempts["hw"] == "h200") & (attempts["method"] == "model_b")]
    correct = a["correct"].mean()
    assert np.isclose(fast_p(a, 1.0), correct) and fast_p(a, 1.25) == 0.0  # strict: exactly 1.25x is not > 1.25
    # vs torch.compile: 80 us / 80 us is exactly 1.0x, fast at p = 0.99, not at p = 1
    assert np.isclose(fast_p(a, 0.99, "speedup_compile"), correct) and fast_p(a, 1.0, "speedup_compile") == 0.0
    b = attempts[(attempts["hw"] == "h200") & (attempts["method"] == "model_c")]
    assert fast_p(b, 0.5) == 0.0 and np.isclose(fast_p(b, 0.0), b["correct"].mean())
    rates = rates_table(attempts)
    row = rates[(rates.hw == "h200") & (rates.method == "model_c") & (rates.category == "(all)")].iloc[0]
    assert row["slower_than_eager"] == 1.0 and np.isclose(row["geomean_vs_eager"], 0.5)
    assert (row["hack"] > 0
            and rates[(rates.category == "fusion") & rates.method.str.startswith("model")]["correct"].max() == 0.0)
    # baselines are compared with each other: torch.compile 100/80 = 1.25x over eager
    tc = rates[(rates.method == "torch_compile") & (rates.category == "(all)")]
    assert np.allclose(tc["geomean_vs_eager"], 1.25)


def test_hack_never_counts_as_correct(attempts):
    assert not (attempts["hack"] & attempts["correct"]).any()
    assert attempts["hack"].any()


def test_cross_hardware_spread_and_refusal_to_compare_different_problems(attempts):
    spreads, mismatched = cross_hardware(attempts)
    top = spreads.iloc[0]
    assert (top["task"], top["method"]) == (synth.SPREAD_TASK, "model_a")
    assert np.isclose(top["max_min_ratio"], 6.0)
    assert np.isclose(top["cv"], np.std([3.0, 0.5]) / np.mean([3.0, 0.5]))
    assert "reduce_03" in set(mismatched["task"]) and "reduce_03" not in set(spreads["task"])


def test_cross_hardware_compares_only_combinations_timed_on_every_profile(tmp_path):
    """Eager misses its contract in bfloat16 on the h200 only, so the candidate's bf16 row has no
    speedup there: the comparison must use float32 on both cards (equal: 2.0x), not float32 and
    bfloat16 on one against float32 alone on the other (which would read as a 1.41x spread)."""
    from mkbench.store import Store
    paths = []
    for hw, eager_bf16 in (("h100", "correct"), ("h200", "incorrect")):
        path = tmp_path / f"{hw}.sqlite"
        store = Store(path)
        rid = store.start_run(hw, {"planted": True}, hw, "triton", "m", {"device_name": hw},
                              {"python": "3.x", "packages": {}}, 1)

        def row(method, dtype, verdict, t, baseline):
            return dict(synth._row("gelu", "activation", method, verdict, t, baseline), dtype=dtype)
        store.record_unit(rid, "gelu", "eager", "eager", [row("eager", "float32", "correct", 100.0, True),
                                                          row("eager", "bfloat16", eager_bf16, 80.0
                                                              if eager_bf16 == "correct" else None, True)])
        store.record_unit(rid, "gelu", "triton", "m",
                          [row("m", "float32", "correct", 50.0, False), row("m", "bfloat16", "correct", 20.0, False)])
        store.set_run_status(rid, "finished")
        store.close()
        paths.append(path)
    attempts = attempt_table(load_results(paths), PROFILES)
    m = attempts[attempts["method"] == "m"].set_index("hw")
    assert (np.isclose(m.loc["h100", "speedup_eager"], (2.0 * 4.0) ** 0.5)
            and np.isclose(m.loc["h200", "speedup_eager"], 2.0))
    spreads, mismatched = cross_hardware(attempts)
    top = spreads[spreads["method"] == "m"].iloc[0]
    assert np.isclose(top["max_min_ratio"], 1.0) and top["combos"] == "large/float32" and mismatched.empty
    from mkbench.analysis.variance import paired_speedups
    pair = paired_speedups(attempts, "h100", "h200")
    assert np.allclose(pair[["a", "b"]].to_numpy(), [[2.0, 2.0]])


def test_report_and_analyze_commands(stores, cli, tmp_path):
    code, out, err = cli("analyze", "difficulty", "--store", stores[0], "--store", stores[1])
    assert code == 0, err
    assert "explained deviance (sequential)" in out and "| category" in out
    code, _, err = cli("report", "--store", stores[0], "--store", stores[1], "-o", tmp_path / "r.md", "--no-run-detail")
    assert code == 0, err
    text = (tmp_path / "r.md").read_text()
    assert "NVIDIA H200" in text and "fast_1 eager" in text and "Cross-hardware" in text
    assert (tmp_path / "r-plots" / "correctness-heatmap.png").stat().st_size > 1000
    code, _, err = cli("report", "--store", tmp_path / "missing.sqlite", "--format", "html", "-o", tmp_path / "x.html")
    assert code == 2 and "no results store" in err


def _saturated_share(png: Path) -> float:
    """Share of clearly coloured pixels: text, tables and borders are black, grey or white; only
    the plots are colourful."""
    import matplotlib.image as mpimg
    img = mpimg.imread(png)[..., :3]
    return float(((img.max(axis=2) - img.min(axis=2)) > 0.25).mean())


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="needs Debian's chromium (installed by .ci/test where it can be)")
def test_html_report_renders_plots_in_chromium(stores, cli, tmp_path):
    html = tmp_path / "r.html"
    code, _, err = cli("report", "--store", stores[0], "--store", stores[1], "--format", "html", "-o", html)
    assert code == 0, err
    assert "http://" not in html.read_text().replace("http://www.w3.org", "") and "<script" not in html.read_text()
    bare = tmp_path / "bare.html"  # the same page without its images: the check must be able to fail
    import re
    bare.write_text(re.sub(r'<img class="plot"[^>]*>', "", html.read_text()))
    shares = {}
    for page in (html, bare):
        shot = page.with_suffix(".png")
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1280,9000", f"--screenshot={shot}", page.as_uri()],
                       check=True, capture_output=True, timeout=120)
        shares[page.name] = _saturated_share(shot)
    assert shares["r.html"] > 0.02, shares
    assert shares["bare.html"] < 0.002, shares


def test_cross_backend_portability_table():
    import pandas as pd

    from mkbench.analysis import cross_backend
    rows = []
    for backend, correct, sp in (("triton", True, 1.5), ("cuda", True, 2.0), ("sycl", False, None)):
        rows.append({"hw": "h100", "category": "activation", "task": "gelu", "backend": backend, "method": "reference",
                     "is_baseline": False, "correct": correct, "verdict": "correct" if correct else "incorrect",
                     "speedup_eager": sp})
    for backend in ("triton", "cuda"):
        rows.append({"hw": "h100", "category": "reduce", "task": "sum_lastdim", "backend": backend,
                     "method": "reference",
                     "is_baseline": False, "correct": True, "verdict": "correct", "speedup_eager": 1.0})
    table = cross_backend(pd.DataFrame(rows)).set_index("task")
    assert table.loc["gelu", "cuda"] == "correct 2.00x" and table.loc["gelu", "sycl"] == "incorrect"
    assert not table.loc["gelu", "portable"] and table.loc["sum_lastdim", "portable"]
    assert table.loc["gelu", "backends"] == 3


def test_compile_only_backends_count_as_built_not_as_failures():
    import pandas as pd

    from mkbench.analysis import cross_backend
    rows = [{"hw": "cpu", "category": "activation", "task": "gelu", "backend": b, "method": "reference",
             "is_baseline": False, "correct": v == "correct", "verdict": v, "speedup_eager": None}
            for b, v in (("triton", "correct"), ("sycl", "correct"), ("cuda", "compiled"))]
    table = cross_backend(pd.DataFrame(rows)).set_index("task")
    assert table.loc["gelu", "portable"] and table.loc["gelu", "compile_only"] == 1
    rows[2]["verdict"] = "compile_error"
    assert not cross_backend(pd.DataFrame(rows)).set_index("task").loc["gelu", "portable"]
