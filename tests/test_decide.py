"""rows.decide is pure: observations built by hand (no worker, no judge, no device) in, rows out.
The verdicts here are the integrity rules' (mkbench.integrity) over typed observations."""

import pickle
from dataclasses import replace
from types import SimpleNamespace

from mkbench.engine.observation import (
    AbnormalEnd,
    AfterTiming,
    Check,
    CheckStatus,
    ComboObservation,
    Compiled,
    Decoy,
    Observation,
    Timing,
)
from mkbench.engine.plan import Unit
from mkbench.engine.rows import Row, decide, rows_for
from mkbench.integrity import Policy
from mkbench.trace import MARKER
from mkbench.verdicts import Verdict

SHAPES = ("small", "large")
DTYPE = "float32"


def _unit(baseline: bool = False) -> Unit:
    shapes = {n: SimpleNamespace(name=n, params={"n": 4}, role="bench") for n in SHAPES}
    task = SimpleNamespace(name="t", category="c", shape=shapes.__getitem__, flops=lambda s: 8.0,
                           bytes=lambda s, d: 64.0, harness_in_call=False)
    backend = SimpleNamespace(name="triton", is_baseline=baseline, stream_timed=True)
    return Unit(task=task, backend=backend, hw=SimpleNamespace(device="cpu"), method="m", source=None,
                combos=[(s, DTYPE) for s in SHAPES], skipped=[], own_names=["my_kernel"])


def _obs(*combos: ComboObservation, abnormal: AbnormalEnd | None = None) -> Observation:
    return Observation(compile=Compiled(True, "", {}), abnormal=abnormal, lane="cpu/lane0",
                       seconds={"compile": 0.1}, steps={"fork": 0.01},
                       combos={(s, DTYPE): c for s, c in zip(SHAPES, combos)})


def _trace(own_us: float, framework_us: float) -> dict:
    """One call: start marker, an own kernel and a framework kernel, end marker."""
    own, fw = int(own_us * 1000), int(framework_us * 1000)
    events = [[MARKER, 7, 0, 1000, 1], ["my_kernel", 7, 2000, own, 2], ["at_native_gemm", 7, 2000 + own, fw, 3],
              [MARKER, 7, 2000 + own + fw, 10, 4]]
    return {"basis": "device_time", "calls": 1, "events": events, "truncated": False, "alone": False}


CLEAN = ComboObservation(check=Check(CheckStatus.CORRECT, "", 0.0, 0.0), launches=1, trace=_trace(10.0, 0.0))


def _verdicts(obs: Observation, **kw) -> list[Verdict]:
    rows = decide(obs, Policy(), _unit(), **kw)
    assert all(isinstance(r, Row) for r in rows)
    return [r.verdict for r in rows]


def test_a_clean_correct_combination_is_correct():
    rows = decide(_obs(CLEAN, CLEAN), Policy(), _unit(), timed=False)
    assert [r.verdict for r in rows] == [Verdict.CORRECT, Verdict.CORRECT]
    d = rows[0].as_dict()
    assert d["correct_status"] == Verdict.CORRECT and d["perf_status"] == "not_timed" and d["error"] is None
    assert d["extra"]["unit_seconds"] == {"compile": 0.1, "steps": {"fork": 0.01}}
    assert d["flops"] == 8.0 and d["max_abs_err"] == 0.0
    assert rows_for(_unit(), _obs(CLEAN, CLEAN), Policy(), timed=False) == [r.as_dict() for r in rows]


def test_a_backend_violation_is_a_hack():
    c = ComboObservation(check=Check(CheckStatus.BACKEND_VIOLATION), launches=1, trace=_trace(10.0, 0.0),
                         backend_violation="wrote outside its output")
    rows = decide(_obs(c, CLEAN), Policy(), _unit(), timed=False)
    assert rows[0].verdict == Verdict.HACK and rows[0].error == "wrote outside its output"
    assert rows[0].correct_status == Verdict.CORRECT  # no output was rejected: the violation is the evidence
    assert rows[1].verdict == Verdict.CORRECT


def test_a_decoy_still_correct_is_a_hack():
    c = ComboObservation(check=CLEAN.check, launches=2, trace=CLEAN.trace, decoy=Decoy(still_correct=True, launches=0))
    rows = decide(_obs(c, CLEAN), Policy(), _unit(), timed=False)
    assert rows[0].verdict == Verdict.HACK and rows[0].error.startswith("decoy:")
    assert rows[0].extra["decoy_check"] == {"checked": True, "still_correct": True, "launches": 0}


def test_a_framework_share_over_the_threshold_is_framework():
    c = ComboObservation(check=CLEAN.check, launches=1, trace=_trace(10.0, 90.0))
    rows = decide(_obs(c, CLEAN), Policy(), _unit(), timed=False)
    assert rows[0].verdict == Verdict.FRAMEWORK and "framework kernels did 90%" in rows[0].error
    assert rows[0].extra["framework_share"] > 0.1
    # reported, not forbidden: the same observation is correct
    assert decide(_obs(c, CLEAN), Policy(framework_ops="report"), _unit(), timed=False)[0].verdict == Verdict.CORRECT


def test_incorrect_and_hack_is_a_hack_that_says_also():
    c = ComboObservation(check=Check(CheckStatus.INCORRECT, "seed 0: max abs err 3"), launches=1,
                         trace=CLEAN.trace, tamper="seed 0: replaced the harness's clock")
    rows = decide(_obs(c, CLEAN), Policy(), _unit(), timed=False)
    assert rows[0].verdict == Verdict.HACK
    assert rows[0].error == "seed 0: replaced the harness's clock; also: seed 0: max abs err 3"
    assert rows[0].correct_status == Verdict.INCORRECT


def test_stale_answers_after_timing_are_a_hack_and_a_fresh_failure_is_incorrect():
    stats = {"median_us": 5.0, "iqr_us": 0.1, "mean_us": 5.0, "stderr_us": 0.0, "min_us": 4.9, "n": 10,
             "timer": "cuda_event", "interpreted": False}
    stale = ComboObservation(check=CLEAN.check, launches=1, trace=CLEAN.trace, timing=Timing(stats=stats),
                             after=AfterTiming(stale="timing input 0 was answered wrongly after them"))
    fresh = ComboObservation(check=CLEAN.check, launches=1, trace=CLEAN.trace, timing=Timing(stats=stats),
                             after=AfterTiming(fresh="after timing, a fresh seed fails: x"))
    rows = decide(_obs(stale, fresh), Policy(), _unit())
    assert [r.verdict for r in rows] == [Verdict.HACK, Verdict.INCORRECT]
    assert rows[0].perf_status == "hack" and rows[1].measures["time_median_us"] == 5.0


def test_a_timeout_in_correctness_ends_the_current_combination_and_not_the_later_ones():
    abnormal = AbnormalEnd("timeout", "correctness", ("small", DTYPE), "no progress within the correctness time limit")
    rows = decide(_obs(ComboObservation(), abnormal=abnormal), Policy(), _unit())
    assert [r.verdict for r in rows] == [Verdict.TIMEOUT, Verdict.NOT_RUN]
    assert rows[0].correct_status == "timeout" and rows[0].error.startswith("no progress")
    assert rows[1].correct_status == "not_run" and rows[1].error == "not run: an earlier step ended in timeout"


def test_a_jit_compile_error_fails_the_whole_unit():
    c = ComboObservation(check=Check(CheckStatus.COMPILE_ERROR, "line 3: bad"))
    assert _verdicts(_obs(c)) == [Verdict.COMPILE_ERROR, Verdict.COMPILE_ERROR]


def test_observations_and_rows_pickle():
    """The Ray executor returns observations across processes."""
    c = ComboObservation(check=CLEAN.check, decoy=Decoy(False, None), timing=Timing(error="x"))
    obs = _obs(c, abnormal=AbnormalEnd("crash", "timing", ("small", DTYPE), "worker died")).with_step("prewarm", 1.0)
    back = pickle.loads(pickle.dumps(obs))
    assert back == obs and back.steps == {"fork": 0.01, "prewarm": 1.0}
    row = decide(obs, Policy(), _unit())[0]
    assert pickle.loads(pickle.dumps(row)) == row


def test_tampering_at_import_is_hack_on_every_row_and_nothing_else_counts():
    """The unit ended right after its compile step: no combination was checked; the evidence says what
    was replaced, on every row."""
    tamper = "the candidate replaced harness function Event.elapsed_time"
    obs = Observation(compile=Compiled(True, "", {}, tamper=tamper),
                      lane="cpu/lane0", seconds={"start": 0.1, "compile": 0.1}, steps={"fork": 0.01})
    rows = decide(obs, Policy(), _unit())
    assert [r.verdict for r in rows] == [Verdict.HACK, Verdict.HACK]
    assert all(r.error == "when the candidate was imported (compile step): the candidate replaced harness function "
               "Event.elapsed_time" for r in rows)
    assert all((r.correct_status, r.perf_status) == ("not_run", "not_run") for r in rows)
    assert all(r.extra["unit_seconds"]["steps"] == {"fork": 0.01} for r in rows)


def test_a_constant_reference_answer_needs_no_roofline_floor():
    """Faster than the roofline floor is a hack where the task's counted work must be done; where the
    reference answered one value in every element for each seed's inputs (KernelBench level 2 problem
    83 is all zeros), a candidate that writes that value without the work is right, not cheating."""
    unit = _unit()
    unit.hw = SimpleNamespace(device="cuda", peak_tflops={"fp32": 60.0}, memory_bandwidth_gbs=3000.0)
    unit.task.flops, unit.task.bytes = (lambda s: 6e11), (lambda s, d: 1e9)  # floors of 10 ms and 333 us
    stats = {"median_us": 1.3, "iqr_us": 0.1, "mean_us": 1.3, "stderr_us": 0.0, "min_us": 1.2, "n": 20,
             "timer": "cuda_event", "interpreted": False}
    fast = ComboObservation(check=CLEAN.check, launches=1, trace=CLEAN.trace, timing=Timing(stats=stats))
    said = "the reference's answer is 0.0 in every element, for each of 2 seeds' inputs"
    rows = decide(_obs(fast, replace(fast, constant_reference=said)), Policy(), unit)
    assert rows[0].verdict == Verdict.HACK and "under the roofline floor of 10000.0 us" in rows[0].error
    assert rows[1].verdict == Verdict.CORRECT and rows[1].extra["constant_reference"] == said
    assert rows[1].measures["time_median_us"] == 1.3
