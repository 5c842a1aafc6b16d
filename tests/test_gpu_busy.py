"""The GPUs' busy share sampled from the driver's tool while a run goes on (mkbench.engine.gpu_busy)."""

import os
import stat
import time

from mkbench.engine.clock import UnitClock, engine_line, run_gpu, session_table
from mkbench.engine.gpu_busy import SLOWDOWN, GpuBusy, Sample, busy_text, parse, summarize


def test_lines_parse_and_anything_else_is_dropped():
    assert parse("0, 87, 40213\n") == Sample(0, 87.0, 40213.0, None, None)  # an older query's three fields
    assert parse("2, 87, 40213, 1755, 0x0000000000000004") == Sample(2, 87.0, 40213.0, 1755.0, 0x4)
    # a clock or reason the tool cannot give is unknown, the sample kept
    assert parse("1, 5, 512, [N/A], [Not Supported]") == Sample(1, 5.0, 512.0, None, None)
    assert parse("3, [N/A], 512") is None
    assert parse("3, [N/A], 512, 1980, 0x0") is None
    assert parse("No devices were found") is None
    assert parse("1, 2") is None
    assert parse("1, 2, 3, 4") is None


def test_summary_per_gpu():
    got = summarize({0: [Sample(0, 100.0, 1024.0), Sample(0, 50.0, 2048.0), Sample(0, 0.0, 3072.0)], 1: []})
    assert list(got["gpus"]) == ["0"]  # a GPU with no sample is left out
    g = got["gpus"]["0"]
    assert g["samples"] == 3 and g["busy_mean"] == 50.0 and g["busy_median"] == 50.0
    assert (g["memory_gib_median"], g["memory_gib_p90"], g["memory_gib_max"]) == (2.0, 3.0, 3.0)
    assert "sm_mhz_busy_median" not in g and "slowdown_share" not in g  # the tool gave neither
    assert summarize({}) is None


def test_clock_and_slowdown_are_summarized_over_busy_samples():
    idle = Sample(0, 0.0, 10.0, 345.0, 0x1)  # idle at 345 MHz: not what the GPU ran kernels at
    got = summarize({0: [idle, Sample(0, 90.0, 10.0, 1980.0, 0x0), Sample(0, 95.0, 10.0, 1755.0, 0x4),
                         Sample(0, 80.0, 10.0, 1700.0, 0x40 | 0x1), Sample(0, 70.0, 10.0, 1980.0, 0x10 | 0x2)]})
    g = got["gpus"]["0"]
    assert g["sm_mhz_busy_median"] == (1755.0 + 1980.0) / 2  # of 1700, 1755, 1980, 1980
    assert g["slowdown_share"] == 0.5  # the power cap and the hardware thermal slowdown; sync boost is not one
    assert SLOWDOWN & 0x1 == 0 and SLOWDOWN & 0x4


def test_busy_text_for_one_gpu_and_several():
    assert busy_text(None) is None
    assert busy_text({"gpus": {"0": {"busy_mean": 73.6}}}) == "GPU busy 74%"
    assert busy_text({"gpus": {"0": {"busy_mean": 90.0}, "1": {"busy_mean": 60.2}}}) == "GPUs busy 60-90% (2)"


def _fake_smi(tmp_path):
    """A stand-in for nvidia-smi -lms: two GPUs, a sample each every 20 ms, one line it cannot read."""
    path = tmp_path / "nvidia-smi"
    path.write_text("#!/bin/sh\necho 'garbage'\nwhile true; do echo '0, 80, 1024, 1980, 0x0'; "
                    "echo '1, 20, 2048, 1500, 0x4'; sleep 0.02; done\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_sampler_reads_the_tool_until_stopped(tmp_path):
    sampler = GpuBusy(command=str(_fake_smi(tmp_path))).start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (sampler.record() or {}).get("gpus", {}).get("1"):
        time.sleep(0.05)
    got = sampler.stop()
    assert got["gpus"]["0"]["busy_mean"] == 80.0 and got["gpus"]["1"]["busy_mean"] == 20.0
    assert got["gpus"]["1"]["memory_gib_median"] == 2.0
    assert got["gpus"]["0"]["sm_mhz_busy_median"] == 1980.0 and got["gpus"]["0"]["slowdown_share"] == 0.0
    assert got["gpus"]["1"]["sm_mhz_busy_median"] == 1500.0 and got["gpus"]["1"]["slowdown_share"] == 1.0
    n = got["gpus"]["0"]["samples"]
    time.sleep(0.1)
    assert sampler.record()["gpus"]["0"]["samples"] == n  # stopped: no more samples


def test_a_tool_that_refuses_the_clock_fields_is_asked_for_busy_and_memory_only(tmp_path):
    """A driver's nvidia-smi that knows no throttle-reasons field under this name exits at once on the
    full query: the busy share and the memory are still sampled, without the clocks."""
    path = tmp_path / "nvidia-smi"
    path.write_text("#!/bin/sh\ncase \"$1\" in *clocks*) echo 'Field is not a valid field to query.'; exit 2;; esac\n"
                    "while true; do echo '0, 55, 1024'; sleep 0.02; done\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    sampler = GpuBusy(command=str(path)).start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (sampler.record() or {}).get("gpus"):
        time.sleep(0.05)
    got = sampler.stop()
    assert got["gpus"]["0"]["busy_mean"] == 55.0 and "sm_mhz_busy_median" not in got["gpus"]["0"]


def test_no_tool_samples_nothing():
    assert GpuBusy(command=os.path.join("/nonexistent", "nvidia-smi")).start().stop() is None


def test_engine_line_and_session_table_say_it():
    clocks = [UnitClock(False, 10.0, {"judge": 1.0})]
    busy = {"period_ms": 500, "gpus": {"0": {"samples": 4, "busy_mean": 42.0, "busy_median": 40.0,
                                             "memory_gib_median": 30.0, "memory_gib_p90": 55.5,
                                             "memory_gib_max": 60.0}}}
    assert engine_line(clocks, 20.0, 2, None, busy).endswith(", GPU busy 42%")
    assert "GPU busy" not in engine_line(clocks, 20.0, 2, None, None)
    env = {"engine_clock": {"sessions": [{"wall_s": 30.0, "units": 1, "gpu_busy": busy},
                                         {"wall_s": 10.0, "units": 1,
                                          "gpu_busy": {"gpus": {"0": dict(busy["gpus"]["0"], busy_mean=82.0)}}},
                                         {"wall_s": 5.0, "units": 1}]}}
    assert run_gpu(env) == {"gpus": {"0": {"busy_mean": 52.0}}}  # (42 x 30 + 82 x 10) / 40
    headers, rows = session_table(env)
    assert headers[-3:] == ["GPU busy", "GPU memory GiB (median / p90)", "SM MHz while busy (slowed)"]
    assert rows[0][-3:] == ["42%", "30.0 / 55.5", "-"] and rows[2][-3:] == ["-", "-", "-"]
    clocked = {"gpus": {"0": dict(busy["gpus"]["0"], sm_mhz_busy_median=1980.0, slowdown_share=0.0),
                        "1": dict(busy["gpus"]["0"], sm_mhz_busy_median=1755.4, slowdown_share=0.404)}}
    _, rows = session_table({"engine_clock": {"sessions": [{"wall_s": 1.0, "gpu_busy": clocked}]}})
    assert rows[0][-1] == "1980 (0%); 1755 (40%)"
    assert run_gpu({"engine_clock": {"sessions": [{"wall_s": 5.0}]}}) is None
