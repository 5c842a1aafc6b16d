"""The worker that tells the device's facts is kept for the launch overheads the run's record asks next
(one interpreter, torch import and CUDA context instead of two), and stopped however the start ends."""

import pytest

from mkbench.engine.lane import Limits
from mkbench.engine.runner import DeviceProbe, probe_device
from mkbench.errors import BadInput


def test_one_worker_answers_each_question_until_closed():
    with DeviceProbe(Limits()) as device:
        first = device.ask()
        child = device.child
        assert first["torch"] and "cuda_available" in first
        assert device.ask() == first and device.child is child  # the same worker, asked again
        pid = child.pid
    assert device.child is None  # closed with the block
    assert probe_device(Limits())["torch"] == first["torch"]  # a probe of its own, as before
    assert pid


def test_a_question_it_cannot_answer_is_a_one_line_error():
    device = DeviceProbe(Limits())
    try:
        with pytest.raises(BadInput, match="device nonsense failed"):
            device.ask("nonsense")
    finally:
        device.close()
    assert device.child is None
