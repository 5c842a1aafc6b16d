"""The derived numbers have one definition (mkbench.metrics), and a candidate that fails some shapes
has no speedup: a mean over the shapes it got right would hide the failures."""

import math

from mkbench.metrics import geomean, speedup, summarize_candidate


def test_speedup_and_geomean_ignore_what_is_not_a_measurement():
    assert speedup(100.0, 50.0) == 2.0
    assert speedup(None, 50.0) is None and speedup(100.0, 0.0) is None and speedup(math.nan, 1.0) is None
    assert math.isclose(geomean([2.0, 8.0, None, math.nan, 0.0]), 4.0) and geomean([None]) is None


def test_a_candidate_failing_a_shape_has_no_speedup():
    rows = [{"verdict": "correct", "error": ""}, {"verdict": "incorrect", "error": "mismatch at [0]"},
            {"verdict": "skipped", "error": ""}]
    s = summarize_candidate(rows)
    assert (s.verdict, s.correct_count, s.rows_skipped, s.first_error) == ("incorrect", "1/2", 1, "mismatch at [0]")
    assert not s.correct and s.speedup([2.0]) is None
    ok = summarize_candidate([{"verdict": "correct", "extra": {"framework_share": 0.1}}, {"verdict": "correct"}])
    assert ok.correct and ok.speedup([2.0, 8.0]) == 4.0 and ok.framework_share == 0.1 and ok.first_error == ""
    assert summarize_candidate([{"verdict": "skipped"}]).verdict == "skipped"
