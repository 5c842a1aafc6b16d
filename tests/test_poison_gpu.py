"""The allocator's free memory poisoned before every candidate call (mkbench.worker): an output the
candidate never writes cannot inherit an earlier answer, from either of the caching allocator's pools.
A scalar loss lives in the small pool; in bfloat16 the previous seed's answer can pass for this
seed's, which once made mkbench's own nll_loss reference look like a decoy hack under load."""

import pytest

pytestmark = pytest.mark.gpu


def test_every_free_block_is_poisoned_in_both_pools():
    import torch

    from mkbench.worker import poison_allocator, poison_free_blocks
    small = torch.full((7,), 3.0, device="cuda")            # small pool (under 1 MiB)
    large = torch.full((3 << 20,), 3.0, device="cuda")      # large pool
    del small, large
    torch.cuda.synchronize()
    assert poison_free_blocks() >= (3 << 20) * 4 + 7 * 4
    again_small = torch.empty(7, device="cuda")
    again_large = torch.empty(3 << 20, device="cuda")
    assert torch.isnan(again_small).all() and torch.isnan(again_large).all()
    # and through the worker's entry point, with a call's inputs
    del again_small, again_large
    scalar = torch.tensor(1.25, device="cuda", dtype=torch.bfloat16)
    del scalar
    inputs = (torch.ones(16, device="cuda"),)  # alive through the call, as the worker keeps them
    poison_allocator("cuda", inputs)
    assert torch.isnan(torch.empty((), device="cuda", dtype=torch.bfloat16)).item()
