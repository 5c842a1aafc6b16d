"""Kernel names as a profiler lists them, reduced to the identifier the candidate's source defines:
what decides whether a kernel in the device trace is the candidate's own or the framework's."""

import pytest

from mkbench.trace import classify, kernel_identifier


@pytest.mark.parametrize("listed, identifier", [
    ("void ns::scale<4, float>(float*, int)", "scale"),
    ('row_sum_f32', "row_sum_f32"),
    # an unnamed namespace: cut at its parenthesis, these had no name (a candidate's own kernel then
    # counted as framework work, and framework kernels were listed as " (38.2 us/call)")
    ("void (anonymous namespace)::fused_kernel<float>(float const*, float*, int)", "fused_kernel"),
    ("void at::native::(anonymous namespace)::conv_depthwise2d_forward_kernel<float>("
     "at::GenericPackedTensorAccessor<float, 4ul>, int)", "conv_depthwise2d_forward_kernel"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&)"
     "::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::detail::Array<char*, 2>)",
     "vectorized_elementwise_kernel"),
])
def test_kernel_identifier(listed, identifier):
    assert kernel_identifier(listed) == identifier


def test_own_kernel_in_an_unnamed_namespace_is_own():
    own = {"fused_kernel"}
    assert classify("void (anonymous namespace)::fused_kernel<float>(float const*, float*, int)", own) == "own"
    assert classify("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10>(float*, int)",
                    own) == "framework"
