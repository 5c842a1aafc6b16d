"""The hidden-work rule on a device trace (``trace._analyze_device``), with events made up in the
profiler's summary form: [name, stream, start ns, duration ns, launch order]."""

from mkbench import trace


def _summary(side_end_ns: float, side_stream: int = 13, kernel_ns: int = 30_000) -> dict:
    # start marker, the candidate's kernel on the timed stream (7), a kernel on another stream, end marker
    end_marker_start = 2_000_000 + kernel_ns
    return {"basis": "device_time", "calls": 1, "truncated": False, "events": [
        [trace.MARKER, 7, 0, 1_000_000, 1],
        ["own_kernel", 7, 2_000_000, kernel_ns, 2],
        ["side_kernel", side_stream, 2_000_000, side_end_ns - 2_000_000 + end_marker_start, 3],
        [trace.MARKER, 7, end_marker_start, 1_000, 4],
    ]}


def _hidden(over_ns: float, kernel_ns: int = 30_000) -> list[str]:
    return trace._analyze_device(_summary(over_ns, kernel_ns=kernel_ns), {"own_kernel", "side_kernel"}).hidden


def test_a_kernel_ending_well_after_the_end_marker_is_hidden_work():
    (found,) = _hidden(50_000)  # 50 us past the end marker's start
    assert "side_kernel on stream 13 ended 50.0 us after the timed stream's work" in found


def test_two_microseconds_past_it_on_a_graph_stream_is_the_record_s_precision_not_hidden_work():
    # CUDA-L1 kb_l2_59 (cuda_graph): a graph-replayed kernel recorded 2.0 us past the end marker
    assert _hidden(2_000) == []


def test_the_slack_never_exceeds_a_tenth_of_the_call_s_device_time():
    # a 10 us call: 1 us of slack at most, so 2 us of unordered work is hidden work
    assert _hidden(2_000, kernel_ns=10_000)
    # and never more than 5 us, however long the call
    assert _hidden(6_000, kernel_ns=1_000_000)
    assert not _hidden(4_000, kernel_ns=1_000_000)


def _calls(n: int, kernels_per_call: int, thread_kernel: bool = False) -> list:
    """n calls on stream 7, each a start marker, kernels, an end marker; then maybe a kernel that a
    thread launched after the last call returned."""
    events, corr, t = [], 0, 0
    for _ in range(n):
        call = [(trace.MARKER, 1_000_000)] + [("conv_kernel", 10_000)] * kernels_per_call + [(trace.MARKER, 1_000)]
        for name, dur in call:
            corr += 1
            events.append([name, 7, t, dur, corr])
            t += dur
    if thread_kernel:
        events.append(["elementwise_kernel", 7, t + 5_000, 10_000, corr + 1])
    return events


def test_a_kernel_launched_after_the_last_call_returned_is_hidden_work():
    summary = {"basis": "device_time", "calls": 3, "truncated": False, "events": _calls(3, 4, thread_kernel=True)}
    (found,) = trace._analyze_device(summary, set()).hidden
    assert "elementwise_kernel was launched after the call had returned" in found


def test_a_trace_cut_inside_a_call_is_no_evidence_of_a_launch_after_it_returned():
    # CUDA-L1 cudnn-variant models (hundreds of kernels a call, three calls traced) were cut at 5000
    # events inside their last call, and six honest ones were called `hack` for it on 4 H100s
    events = _calls(3, 400)
    cap = 2 * 402 + 100  # two whole calls and the start of the third
    kept = trace.first_launched(reversed(events), cap)  # the profiler's order is not the launch order
    assert [ev[4] for ev in kept] == list(range(1, cap + 1))
    summary = {"basis": "device_time", "calls": 3, "truncated": True, "events": kept}
    f = trace._analyze_device(summary, set())
    assert f.hidden == [] and f.truncated and f.as_extra()["trace_truncated"] is True
    # the two whole calls are read (400 kernels of 10 us each); the cut one's kernels count for nothing
    assert f.busy_us_per_call == 400 * 10.0 and f.framework == 2 * 400 * 10_000
    assert trace._analyze_device(dict(summary, truncated=False), set()).hidden  # as read before
