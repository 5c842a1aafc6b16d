"""A CUDA tensor handed to the judge by IPC is imported in three timed parts (mkbench.transfer): the
handles opened (``import_map``), the copy (``import_copy``), the handles closed (``import_unmap``)."""

import multiprocessing as mp

import pytest

from mkbench import transfer


def _export(conn):
    import torch
    t = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    conn.send(transfer.export(t))
    conn.recv()  # kept alive until the importer is done


@pytest.mark.gpu
def test_a_cuda_import_says_its_three_parts_in_order():
    import torch
    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    p = ctx.Process(target=_export, args=(there,))
    p.start()
    try:
        desc = here.recv()
        laps = []
        got = transfer.materialize(desc, "cuda", laps.append)
        assert laps == ["import_map", "import_copy", "import_unmap"]
        assert torch.equal(got, torch.arange(1 << 20, dtype=torch.float32, device="cuda"))
    finally:
        here.send("done")
        p.join(30)


def test_other_descriptors_say_no_part():
    laps = []
    assert transfer.materialize({"kind": "scalar", "value": 3}, None, laps.append) == 3
    assert transfer.materialize(transfer.export(None), None, laps.append) is None
    assert laps == []
