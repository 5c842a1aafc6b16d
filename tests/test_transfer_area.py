"""A worker's transfer area (mkbench.transfer.TransferArea, ``--transfer area``): the tensors of a step
copied into one buffer that the judge maps once, instead of an IPC handle opened and closed per tensor.
On the CPU the buffer is a CPU tensor and its "mapping" a storage handed over in-process; the packing,
the offsets, the bounds and the one mapping per area are the code the GPU runs."""

import multiprocessing as mp

import pytest
import torch

from mkbench import transfer, worker


@pytest.fixture
def cpu_area(monkeypatch):
    """A CPU transfer area whose descriptor maps (in this process) to its own buffer's storage."""
    buffers = {}
    opened = []

    def export_buffer(buf):
        handle = f"h{len(buffers)}".encode()
        buffers[handle] = buf
        return {"device": 0, "handle": handle, "size": buf.numel(), "storage_offset": 0, "ref_handle": b"",
                "ref_offset": 0, "event_handle": None, "event_sync": False, "offset": 0, "shape": [buf.numel()],
                "stride": [1]}

    def new_shared(device, handle, *rest):
        opened.append(handle)
        return buffers[handle].untyped_storage()

    monkeypatch.setattr(torch.UntypedStorage, "_new_shared_cuda", staticmethod(new_shared), raising=False)
    transfer.forget_areas()
    yield transfer.TransferArea("cpu", export_buffer), opened
    transfer.forget_areas()


def _values():
    return [torch.arange(15, dtype=torch.float32).reshape(3, 5),
            torch.arange(12, dtype=torch.float32).reshape(3, 4).to(torch.bfloat16).t(),  # not contiguous
            torch.tensor(7, dtype=torch.int64),  # 0-dim
            torch.tensor([True, False, True]),
            3, None, torch.empty(0, 4)]


def test_an_answer_goes_through_the_area_and_comes_back_as_private_copies(cpu_area):
    area, opened = cpu_area
    values = _values()
    descs = area.export_all(values)
    assert [d["kind"] for d in descs] == ["area", "area", "area", "area", "scalar", "scalar", "shm"]
    assert all(d["offset"] % transfer.AREA_ALIGN == 0 for d in descs if d["kind"] == "area")
    laps = []
    got = transfer.materialize_all(descs, "cpu", laps.append)
    for v, g in zip(values, got):
        if isinstance(v, torch.Tensor):
            assert g.dtype == v.dtype and g.shape == v.shape and torch.equal(g, v)
        else:
            assert g == v
    assert laps == ["import_map"] + ["import_copy"] * 4  # mapped once, four tensors copied out
    area.buffer.fill_(0)  # the worker writes into its area again: what was imported stays as it was
    assert torch.equal(got[0], values[0])
    transfer.unlink(transfer.shm_names(descs))


def test_the_area_is_mapped_once_and_grows_only_when_an_answer_needs_more(cpu_area):
    area, opened = cpu_area
    small, large = [torch.ones(10)], [torch.ones(10_000)]
    transfer.materialize_all(area.export_all(small), "cpu")
    first = area.buffer
    transfer.materialize_all(area.export_all(small), "cpu")
    assert area.buffer is first and opened == [b"h0"]  # the same area: no new mapping
    got = transfer.materialize_all(area.export_all(large), "cpu")
    assert area.buffer.numel() >= 40_000 and opened == [b"h0", b"h1"] and torch.equal(got[0], large[0])
    transfer.materialize_all(area.export_all(small), "cpu")
    assert opened == [b"h0", b"h1"]
    transfer.forget_areas()  # the judge lets go of the unit: the next import maps again
    transfer.materialize_all(area.export_all(small), "cpu")
    assert opened == [b"h0", b"h1", b"h1"]


def test_a_grown_area_in_the_old_ones_segment_is_mapped_anew(monkeypatch):
    """Torch's IPC handle names the allocator's segment: a new, larger area can lie in the segment the
    old one did, behind the same handle at another offset. The judge must not read it through the old
    mapping (it did on an H100: "does not lie in its area", and inputs seen as modified)."""
    buffers, opened = {}, []

    def export_buffer(buf):  # every area in one segment, each at its own offset
        offset = 4096 * len(buffers)
        buffers[offset] = buf
        return {"device": 0, "handle": b"segment", "size": buf.numel(), "storage_offset": offset,
                "ref_handle": b"", "ref_offset": 0, "event_handle": None, "event_sync": False, "offset": 0,
                "shape": [buf.numel()], "stride": [1]}

    def new_shared(device, handle, size, storage_offset, *rest):
        opened.append((handle, storage_offset))
        return buffers[storage_offset].untyped_storage()

    monkeypatch.setattr(torch.UntypedStorage, "_new_shared_cuda", staticmethod(new_shared), raising=False)
    transfer.forget_areas()
    try:
        area = transfer.TransferArea("cpu", export_buffer)
        small, large = torch.arange(10.0), torch.arange(10_000.0)
        assert torch.equal(transfer.materialize_all(area.export_all([small]), "cpu")[0], small)
        (got,) = transfer.materialize_all(area.export_all([large]), "cpu")
        assert torch.equal(got, large) and opened == [(b"segment", 0), (b"segment", 4096)]
    finally:
        transfer.forget_areas()


def test_an_importer_out_of_device_memory_is_its_own_failure_not_a_malformed_descriptor(cpu_area, monkeypatch):
    area, _ = cpu_area
    desc = area.export_all([torch.ones(64)])[0]

    def no_room(*args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 256.00 MiB.")

    monkeypatch.setattr(transfer, "_import_area", no_room)
    with pytest.raises(torch.OutOfMemoryError):
        transfer.materialize(desc, "cpu")


@pytest.mark.parametrize("offset", [-256, 7, 1 << 20])
def test_a_descriptor_outside_its_area_is_refused(cpu_area, offset):
    area, _ = cpu_area
    desc = area.export_all([torch.ones(64)])[0]
    with pytest.raises(ValueError, match="does not lie in its area"):
        transfer.materialize(dict(desc, offset=offset), "cpu")


def test_a_workers_step_exports_its_groups_together_so_none_overwrites_another(cpu_area):
    area, _ = cpu_area
    steps = worker.Steps()
    steps.area = area
    a, b = torch.full((4,), 1.0), torch.full((4,), 2.0)
    outputs_a, inputs_a, outputs_b = steps._export([a], [a + 10], [b])
    got = [transfer.materialize_all(d, "cpu")[0] for d in (outputs_a, inputs_a, outputs_b)]
    assert [g.tolist() for g in got] == [[1.0] * 4, [11.0] * 4, [2.0] * 4]
    steps.area = None  # without an area: each tensor as transfer.export sends it
    (plain,) = steps._export([torch.ones(2)])
    assert plain[0]["kind"] == "shm"
    transfer.unlink(transfer.shm_names(plain))


def test_the_answers_after_timing_do_not_go_through_the_area(cpu_area, monkeypatch):
    """All of a pool's answers at once would make the area hold a copy of each: they go tensor by tensor."""
    area, opened = cpu_area
    steps = worker.Steps()
    steps.area = area
    monkeypatch.setattr(steps, "_arg_sets", lambda cmd: [(torch.ones(4),), (torch.full((4,), 2.0),)])
    steps.backend = type("B", (), {"run": staticmethod(lambda fn, args: args[0] * 3)})()
    steps.fn, steps.device, steps.snapshot, steps.threads_mark = None, "cpu", worker.harness_snapshot(), 0
    got = steps.answers({})
    descs = [d for a in got["answers"] for d in a["outputs"] + a["inputs_after"]]
    assert [d["kind"] for d in descs] == ["shm"] * 4 and area.buffer is None
    assert [transfer.materialize_all(a["outputs"], "cpu")[0].tolist() for a in got["answers"]] == [[3.0] * 4,
                                                                                                  [6.0] * 4]
    transfer.unlink(transfer.shm_names(descs))


def _worker(conn):
    from mkbench import transfer as t
    area = t.TransferArea()
    for k in range(2):  # two answers through the same area
        conn.send(area.export_all([torch.full((1 << 20,), float(k), device="cuda"), torch.arange(5, device="cuda")]))
        conn.recv()


@pytest.mark.gpu
def test_on_a_gpu_the_judge_maps_a_workers_area_once():
    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    p = ctx.Process(target=_worker, args=(there,))
    p.start()
    laps = []
    try:
        transfer.forget_areas()
        for k in range(2):
            out, idx = transfer.materialize_all(here.recv(), "cuda", laps.append)
            assert torch.equal(out, torch.full((1 << 20,), float(k), device="cuda"))
            assert idx.tolist() == [0, 1, 2, 3, 4]
            here.send("next")
        assert laps.count("import_map") == 1 and laps.count("import_copy") == 4
    finally:
        transfer.forget_areas()
        p.join(30)


@pytest.mark.skipif(torch.cuda.is_available(), reason="--hw cpu is refused on a host with a GPU (the GPU tests "
                                                      "above cover the area there)")
def test_the_run_records_how_its_workers_hand_over_and_an_unknown_way_is_refused(tmp_path, cli):
    from mkbench.store import Store
    store = tmp_path / "r.sqlite"
    code, out, err = cli("run", "--backend", "triton", "--hw", "cpu", "--task", "silu", "--shape-role", "small",
                         "--dtype", "float32", "--seeds", "1", "--baselines", "eager", "--no-timing",
                         "--transfer", "area", "--store", store, "--no-progress")
    assert code == 0, err
    run = Store(store).runs()[-1]
    assert run.env["engine"]["transfer"] == "area"  # on a CPU there is no area: answers go as before
    assert {r["verdict"] for r in Store(store).results()} <= {"correct", "skipped"}
    code, out, err = cli("run", "--backend", "triton", "--hw", "cpu", "--transfer", "pigeon", "--store", store)
    assert code != 0 and "--transfer" in err and len(Store(store).results()) > 0  # nothing recorded is lost


@pytest.mark.parametrize("attr", ["copy_", "view"])
def test_replacing_what_fills_the_area_is_tampering(monkeypatch, attr):
    snapshot = worker.harness_snapshot()
    original = getattr(torch.Tensor, attr)
    monkeypatch.setattr(torch.Tensor, attr, lambda self, *a, **k: original(self, *a, **k))
    said = worker.tampered(snapshot, len(worker.threads_started()))
    assert said and attr in said
