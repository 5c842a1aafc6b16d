"""The timer's run-ahead (GPU spin before the start event) and its cross-check calls."""

import math
import os
import random
import statistics
import time

import pytest

from mkbench.plugins import build_registry
from mkbench.timing import (
    RunAhead,
    Samples,
    ThreadUsage,
    TimingSettings,
    _keep_going,
    median_rse,
    summarize,
    time_callable,
)

REG = build_registry()


def test_run_ahead_doubles_on_starved_samples_and_drops_them():
    ahead = RunAhead(delay_us=50, cap_us=1000)
    assert ahead.observe(starved=False) and ahead.delay_us == 50
    assert not ahead.observe(starved=True) and ahead.delay_us == 100
    assert not ahead.observe(starved=True) and ahead.delay_us == 200
    assert ahead.observe(starved=False) and ahead.delay_us == 200
    assert ahead.dropped == 2 and ahead.host_bound == 0


def test_run_ahead_jumps_to_the_hosts_enqueue_time_once_two_starved_samples_agree():
    """A call whose host side takes 1.5 s: two dropped samples reach the cap, not nine doublings."""
    ahead = RunAhead(delay_us=50, cap_us=20000)
    assert not ahead.observe(True, host_us=1.5e6) and ahead.delay_us == 100  # one sample: doubled
    assert not ahead.observe(True, host_us=1.4e6) and ahead.delay_us == 20000 and ahead.dropped == 2
    assert not ahead.observe(True, host_us=1.5e6) and not ahead.spins  # at the cap: one call unspun next
    assert not ahead.observe(False, host_us=1.49e6) and ahead.spins and not ahead.synchronizing
    assert ahead.observe(True, host_us=1.5e6) and ahead.host_bound == 1  # kept, counted host-bound
    # one slow first call (4.3 ms), then the call's own 150 us: the spin follows the call, not the outlier
    ahead = RunAhead(delay_us=50, cap_us=20000)
    assert not ahead.observe(True, host_us=4300) and ahead.delay_us == 100
    assert not ahead.observe(True, host_us=150) and ahead.delay_us == pytest.approx(225)
    assert ahead.observe(False, host_us=150) and ahead.dropped == 2
    # a sample that was not starved in between: the next starved one starts the count again
    ahead = RunAhead(delay_us=50, cap_us=20000)
    assert not ahead.observe(True, host_us=5000) and ahead.observe(False, host_us=60)
    assert not ahead.observe(True, host_us=5000) and ahead.delay_us == 200


def test_run_ahead_keeps_samples_at_its_cap_and_counts_them_host_bound():
    ahead = RunAhead(delay_us=400, cap_us=1000)
    assert not ahead.observe(True) and not ahead.observe(True)  # 800, then capped at 1000
    assert ahead.delay_us == 1000
    assert not ahead.observe(True, host_us=5000) and not ahead.observe(False, host_us=5000)  # compared unspun
    assert ahead.observe(True) and ahead.observe(True)  # a candidate that blocks the host: kept
    assert ahead.host_bound == 2 and ahead.dropped == 4 and not ahead.synchronizing


def test_run_ahead_stops_spinning_for_a_call_that_waits_for_the_device_inside():
    """A call that synchronises (600 us of device work before its host can go on): its enqueue time is
    the spin plus the call, so no spin outlasts it. It used to walk to the 20 ms cap (seven dropped
    calls) and spin that long before every kept sample; now four are dropped and the spin stops."""
    ahead = RunAhead(delay_us=50, cap_us=20000)
    taken = []
    while ahead.spins and len(taken) < 20:
        taken.append(ahead.observe(True, host_us=ahead.delay_us + 600))
    assert taken == [False] * 4 and ahead.synchronizing and ahead.delay_us == 0 and ahead.dropped == 4
    assert ahead.observe(False) and ahead.observe(False) and ahead.host_bound == 2  # kept, unspun, said so


def test_run_ahead_stops_spinning_for_a_synchronizing_call_whose_jump_reaches_the_cap():
    """A synchronizing call with 7.5 ms of its own (a KernelBench-X harness reading its seed with
    ``.item()``): its second tracked sample comes at the 20 ms cap. Checking the cap first kept it
    there, every sample behind a 20 ms spin; it is recognized as synchronizing instead."""
    ahead = RunAhead(delay_us=50, cap_us=20000)
    taken = []
    while ahead.spins and len(taken) < 20:
        taken.append(ahead.observe(True, host_us=ahead.delay_us + 7500))
    assert taken == [False] * 4 and ahead.synchronizing and ahead.host_bound == 0, (taken, ahead.delay_us)


def test_run_ahead_catches_a_jittery_synchronizing_call_at_its_cap():
    """A synchronizing call whose own time jitters (1.3 ms, every other call 3 ms: a harness on a
    busy host) never has two tracked samples in a row on the way up, and reaches the cap. One call
    taken unspun there is about the cap shorter than the starved one: synchronizing, no spin."""
    ahead = RunAhead(delay_us=50, cap_us=20000)
    own = iter([1300, 3000] * 10)
    taken = []
    while not ahead.synchronizing and len(taken) < 12:
        spun = ahead.spins
        taken.append(ahead.observe(spun, host_us=(ahead.delay_us if spun else 0) + next(own)))
    assert ahead.synchronizing and ahead.delay_us == 0 and not any(taken), taken
    assert ahead.dropped == len(taken) <= 8


def test_run_ahead_does_not_call_a_slow_host_side_synchronizing():
    """A host-heavy call (its enqueue time does not follow the spin, jitter of 10% included) keeps
    the run-ahead: it reaches the cap or outlasts the host, as before."""
    ahead = RunAhead(delay_us=50, cap_us=20000)
    for k in range(12):
        ahead.observe(ahead.spins, host_us=30000 * (1.1 if k % 2 else 0.9))
    assert not ahead.synchronizing and ahead.delay_us == 20000 and ahead.dropped == 4
    ahead = RunAhead(delay_us=50, cap_us=20000)
    hosts = iter([1000, 1100, 900, 1150])
    while ahead.delay_us < 1100:
        assert not ahead.observe(True, host_us=next(hosts))
    assert not ahead.synchronizing and ahead.observe(False, host_us=1000)


def test_samples_keep_the_mean_rse_as_statistics_computes_it():
    rng = random.Random(3)
    xs = [rng.lognormvariate(5, 0.3) for _ in range(500)]
    got = Samples()
    for x in xs:
        got.append(x)
    want = statistics.stdev(xs) / math.sqrt(len(xs)) / statistics.fmean(xs)
    assert got.mean_rse() == pytest.approx(want, rel=1e-9)
    assert got.ordered == sorted(xs) and list(got) == xs


def test_median_rse_matches_the_normal_theory_for_normal_samples():
    """1.2533 sigma / sqrt(n) is the median's standard error for normal samples."""
    rng = random.Random(7)
    n, mu, sigma = 4000, 100.0, 5.0
    xs = sorted(rng.gauss(mu, sigma) for _ in range(n))
    assert median_rse(xs) == pytest.approx(1.2533 * sigma / math.sqrt(n) / mu, rel=0.15)
    assert median_rse([1.0]) == math.inf


def test_a_steady_median_with_slow_outliers_stops_at_min_samples():
    """A quarter of the samples 3x slower: the mean's RSE is far above 1% at 20 samples, the
    median's under it, so sampling stops at ``min_samples`` instead of running to the budget."""
    rng = random.Random(11)
    s = TimingSettings(min_samples=20, target_rse=0.01, budget_ms=1000)
    samples = Samples()
    while _keep_going(samples, 0.0, s):
        fast = rng.random() > 0.25
        samples.append(rng.gauss(1000, 3) if fast else rng.gauss(3000, 300))
    assert len(samples) <= 25 and samples.mean_rse() > 0.05 and samples.median_rse() <= 0.01
    assert not _keep_going(list(samples), 0.0, s)  # a plain list is read whole, to the same answer
    assert summarize(samples, timer="t", interpreted=False).median_rse == pytest.approx(samples.median_rse())


def test_a_light_tailed_spread_still_stops_on_the_mean():
    """Spread evenly over +-50%: the mean is the better estimate there and its rule stops sampling,
    as before, long before the budget; the median's rule only ever stops sampling earlier."""
    rng = random.Random(5)
    s = TimingSettings(min_samples=20, target_rse=0.01, budget_ms=1000, max_samples=5000)
    samples = Samples()
    while _keep_going(samples, 0.0, s):
        samples.append(rng.uniform(500, 1500))
    assert 20 < len(samples) < 5000 and samples.mean_rse() <= 0.01 < samples.median_rse()


def test_a_zero_target_is_never_met_by_the_median():
    s = TimingSettings(min_samples=3, target_rse=0.0, budget_ms=1000, max_samples=50)
    samples = Samples()
    while _keep_going(samples, 0.0, s):
        samples.append(1000.0 + (len(samples) % 2))
    assert len(samples) == 50


def test_thread_usage_tells_running_from_sleeping():
    """What a timing records of its thread: a busy loop runs on a core nearly all its wall time, a
    sleep hardly at all and sleeps voluntarily."""
    busy = ThreadUsage()
    end = time.perf_counter() + 0.1
    while time.perf_counter() < end:
        pass
    ran = busy.since_start()
    idle = ThreadUsage()
    for _ in range(5):
        time.sleep(0.02)
    slept = idle.since_start()
    assert ran["host_cpu_share"] > 0.5 > 0.2 > slept["host_cpu_share"], (ran, slept)
    assert slept["switches_voluntary"] >= 5 and slept["switches_involuntary"] >= 0
    if os.path.exists("/proc/thread-self/stat"):  # the cores it ran on, among this process's allowed ones
        assert {int(c) for c in slept["host_cores"].split(",")} <= os.sched_getaffinity(0), slept


def test_host_timer_has_no_gpu_fields():
    t = time_callable(lambda a: sum(a), [(1, 2)], REG.hardware["cpu"], TimingSettings(budget_ms=5, min_samples=3))
    assert t.timer == "perf_counter" and t.run_ahead_us is None and t.launch_bound_median_us is None


@pytest.mark.gpu
def test_host_heavy_call_is_timed_as_device_work():
    """500 us of Python before a tiny kernel: the spun samples see the kernel, the unspun calls the wait."""
    import torch
    x = torch.zeros(1 << 20, device="cuda")

    def call(a):
        time.sleep(0.0005)
        a[0].add_(1)

    hw = REG.hardware["h100"] if "H100" in torch.cuda.get_device_name() else REG.hardware["h200"]
    spun = time_callable(call, [(x,)], hw, TimingSettings(budget_ms=100))
    plain = time_callable(call, [(x,)], hw, TimingSettings(budget_ms=100, run_ahead=False))
    assert spun.median_us < 100, spun
    assert spun.run_ahead_us >= 500 and spun.host_bound_samples == 0, spun
    assert spun.launch_bound_median_us > 400 and plain.median_us > 400, (spun, plain)


@pytest.mark.gpu
def test_a_slow_host_side_costs_one_dropped_call_not_a_doubling_per_call():
    """30 ms of Python per call, past the spin's 20 ms cap: two starved samples take the spin to the
    cap (doubling from 50 us took nine dropped calls), one there and one unspun show it does not
    wait for the spin, and the rest are kept as host-bound."""
    import torch
    x = torch.zeros(1 << 10, device="cuda")

    def call(a):
        time.sleep(0.03)
        a[0].add_(1)

    hw = REG.hardware["h100"] if "H100" in torch.cuda.get_device_name() else REG.hardware["h200"]
    t = time_callable(call, [(x,)], hw, TimingSettings(budget_ms=300, warmup_ms=0))
    assert t.run_ahead_dropped <= 5 and t.run_ahead_us == 20000, t  # two to the cap, two to compare there
    assert t.host_bound_samples >= 3, t  # the spin cannot outlast it: host time in the span, said so


@pytest.mark.gpu
def test_a_call_that_synchronizes_is_not_spun():
    """``.item()`` inside the call: the host waits for the device, so the run-ahead stops (at most
    four dropped calls) and every kept sample is counted host-bound."""
    import torch
    x = torch.randn(1 << 22, device="cuda")

    def call(a):
        return (a[0] * 2).sum().item()

    hw = REG.hardware["h100"] if "H100" in torch.cuda.get_device_name() else REG.hardware["h200"]
    t = time_callable(call, [(x,)], hw, TimingSettings(budget_ms=200))
    # four dropped calls at best; one jittery sample on the way up restarts the count (5 on an H200)
    assert t.run_ahead_us == 0 and t.run_ahead_dropped <= 6, t
    assert t.host_bound_samples >= t.n, t


@pytest.mark.gpu
def test_unspun_samples_serve_as_the_cross_check_calls():
    """With the run-ahead off every sample is a plain call: the cross-check reads them, and no call
    is made after the samples."""
    import torch
    x = torch.zeros(1 << 20, device="cuda")
    calls = []

    def call(a):
        calls.append(1)
        a[0].add_(1)

    hw = REG.hardware["h100"] if "H100" in torch.cuda.get_device_name() else REG.hardware["h200"]
    t = time_callable(call, [(x,)], hw, TimingSettings(budget_ms=50, warmup_ms=0, run_ahead=False))
    assert len(calls) == 1 + t.n, (len(calls), t)  # one warm-up call, then the samples alone
    assert t.launch_bound_median_us is not None and t.host_median_us is not None


@pytest.mark.gpu
def test_a_synchronizing_call_with_a_jittery_host_side_is_not_spun():
    """``.item()`` first, then 1-3 ms of Python that varies from call to call (a KernelBench-X harness
    on a busy host): caught as synchronizing at the latest at the cap, so the median is the call's
    own time, not the 20 ms spin's."""
    import random as rnd

    import torch
    x = torch.randn(1 << 20, device="cuda")
    jitter = rnd.Random(1)

    def call(a):
        a[0].sum().item()
        time.sleep(jitter.choice([0.001, 0.003]))
        return a[0] * 2

    hw = REG.hardware["h100"] if "H100" in torch.cuda.get_device_name() else REG.hardware["h200"]
    t = time_callable(call, [(x,)], hw, TimingSettings(budget_ms=300))
    assert t.run_ahead_us == 0 and t.median_us < 8000, t
