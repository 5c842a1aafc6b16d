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
