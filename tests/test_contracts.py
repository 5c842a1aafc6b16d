"""Contracts that survive tiny outputs, and the other benchmarks' own judgements: each check is
paired with a wrong answer it must still reject."""

import pytest
import torch

from mkbench.contracts import (
    AllClose,
    CheckContext,
    SimilarityThresholds,
    Tol,
    absolute_floor,
    compare_close,
    cuda_l1_allclose,
    kernelbench_allclose,
    kernelbench_x_allclose,
    similarity_metrics,
)


def _ctx(outputs, reference, dtype=torch.float32):
    return CheckContext(dtype, (), tuple(outputs), lambda: tuple(reference), lambda *a: tuple(outputs))


def _denormal_case():
    """The shape of the reported KernelBench conv case: float32 outputs whose float64 reference is
    denormal-scale (down to 6.2e-46, below float32's smallest subnormal), and eager's float32
    answer, which rounds such values to 0."""
    g = torch.Generator().manual_seed(0)
    ref = torch.randn(4096, generator=g, dtype=torch.float64) * 1e-41
    ref[::300] = 6.2e-46
    eager = ref.to(torch.float32)
    return eager, ref


def test_floor_is_the_smallest_normal_of_the_arithmetic_type():
    assert absolute_floor(torch.float32) == torch.finfo(torch.float32).tiny
    assert absolute_floor(torch.float16) == torch.finfo(torch.float32).tiny  # computed in float32, then rounded
    assert absolute_floor(torch.bfloat16) == torch.finfo(torch.float32).tiny
    assert absolute_floor(torch.float64) == torch.finfo(torch.float64).tiny
    assert absolute_floor(torch.complex64) == torch.finfo(torch.float32).tiny
    assert absolute_floor(torch.int32) == 0.0


def test_denormal_outputs_do_not_make_eager_fail():
    eager, ref = _denormal_case()
    assert (eager[::300] == 0).all()  # float32 cannot hold 6.2e-46
    # what the bound was without the floor: atol collapses with the rms of the outputs
    s = float(ref.square().mean().sqrt())
    old_bound = 1e-5 * s + 1e-4 * ref.abs()
    assert ((eager.double() - ref).abs() > old_bound).any()
    assert compare_close(eager, ref, Tol(1e-4, 1e-5), "rms").ok
    assert AllClose().check(_ctx([eager], [ref])).ok


def test_a_wrong_answer_still_fails_with_denormal_reference():
    eager, ref = _denormal_case()
    wrong = eager.clone()
    wrong[7] = 1e-30  # far above the floor, though tiny
    res = AllClose().check(_ctx([wrong], [ref]))
    assert not res.ok and "1/4096 elements" in res.message
    assert not AllClose().check(_ctx([torch.ones_like(eager)], [ref])).ok
    # and at ordinary magnitudes nothing changed
    x = torch.randn(1000, dtype=torch.float64)
    off = x.to(torch.float32)
    off[3] += 1e-3
    assert not AllClose().check(_ctx([off], [x])).ok
    assert AllClose().check(_ctx([x.to(torch.float32)], [x])).ok


def test_kernelbench_tolerance_is_raw_allclose():
    contract = kernelbench_allclose()
    assert contract.reference_precision is None and contract.scale == "abs"
    ref = torch.full((10,), 1000.0)
    assert contract.check(_ctx([ref + 0.09], [ref])).ok  # 1e-4 + 1e-4 * 1000 = 0.1001
    assert not contract.check(_ctx([ref + 0.11], [ref])).ok
    small = torch.full((10,), 1e-3)
    assert not contract.check(_ctx([small + 2e-4], [small])).ok  # raw atol, not scaled by the rms
    half = torch.ones(8, dtype=torch.float16)
    assert contract.check(_ctx([half * 1.015], [half], torch.float16)).ok  # 1e-2 + 1e-2
    assert kernelbench_x_allclose().tolerances["float32"] == Tol(1e-5, 1e-5)


def test_similarity_thresholds():
    contract = SimilarityThresholds(cosine_min=0.99, l1_relative_max=0.01, rmse_max=0.01)
    g = torch.Generator().manual_seed(1)
    ref = torch.randn(256, generator=g)
    assert contract.check(_ctx([ref + 1e-3], [ref])).ok
    res = contract.check(_ctx([ref * 1.05], [ref]))
    assert not res.ok and "relative L1" in res.message
    assert not contract.check(_ctx([-ref], [ref])).ok
    nan = ref.clone()
    nan[0] = float("nan")
    assert not contract.check(_ctx([nan], [ref])).ok
    assert contract.check(_ctx([torch.tensor([True, False])], [torch.tensor([True, False])])).ok
    assert not contract.check(_ctx([torch.tensor([True, True])], [torch.tensor([True, False])])).ok
    assert similarity_metrics(torch.zeros(3), torch.zeros(3))["cosine_sim"] == 1.0
    assert similarity_metrics(torch.zeros(3), torch.ones(3))["cosine_sim"] == 0.0
    # integer outputs (a quantized kernel's) are judged by similarity too, as KernelBench-X does
    q = torch.randint(-127, 127, (64,), generator=g, dtype=torch.int8)
    assert contract.check(_ctx([q], [q])).ok


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_outputs_keep_their_scaled_tolerance(dtype):
    """The floor is float32's smallest normal, far below any half-precision output: a half kernel
    returning zeros for small but representable values still fails."""
    ref = torch.full((64,), 1e-4, dtype=torch.float64)
    assert not AllClose().check(_ctx([torch.zeros(64, dtype=dtype)], [ref], dtype)).ok
    assert AllClose().check(_ctx([ref.to(dtype)], [ref], dtype)).ok


# --- issue 29: a task-level baseline compute dtype, honoured by the eager and torch.compile baselines


def _cumsum_task():
    from pathlib import Path

    from mkbench.task import load_task_file
    return load_task_file(Path(__file__).resolve().parent.parent / "tasks" / "math" / "cumsum.py")


def test_baseline_compute_dtype_is_honoured_by_the_eager_baseline():
    from backends.baselines import EagerBaseline
    from mkbench.task import baseline_reference, baseline_variant
    task = _cumsum_task()
    assert task.baseline_compute_dtype == "float32" and task.baseline_compute_reason
    seen = []
    plain = task.reference

    def spy(x):
        seen.append(x.dtype)
        return plain(x)

    task.reference = spy
    try:
        fn = EagerBaseline().compile(task, None, None)
        x = torch.randn(4, 300, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
        out = fn(x)
        assert seen == [torch.float32]  # the reference ran in float32 ...
        assert out.dtype == torch.bfloat16  # ... and the result is cast back to the task's dtype
        assert torch.equal(out, torch.cumsum(x.float(), -1).to(torch.bfloat16))
        seen.clear()
        x32 = x.float()
        assert torch.equal(baseline_reference(task)(x32), torch.cumsum(x32, -1)) and seen == [torch.float32]
    finally:
        task.reference = plain
    assert baseline_variant(task, "bfloat16") == "eager computed in float32, cast to bfloat16"
    assert baseline_variant(task, "float32") is None
    assert baseline_variant(task, "bfloat16", "torch_compile") == "torch_compile computed in float32, cast to bfloat16"


def test_baseline_rows_name_the_variant():
    from backends.baselines import EagerBaseline
    from mkbench.engine.plan import Unit
    from mkbench.engine.rows import _skeleton, skipped_rows
    task = _cumsum_task()
    unit = Unit(task, EagerBaseline(), None, "eager", None, [("small", "bfloat16"), ("small", "float32")], [])
    rows, _ = _skeleton(unit)
    assert rows[("small", "bfloat16")]["extra"]["baseline_variant"] == "eager computed in float32, cast to bfloat16"
    assert "baseline_variant" not in rows[("small", "float32")]["extra"]
    assert skipped_rows(unit) == []


# --- Task.baseline: what the PyTorch baselines run where the reference is ground truth, not PyTorch's way


def _tiny_task(**kw):
    from mkbench import Shape, Task
    from mkbench.contracts import AllClose

    def reference(x):
        return x * 2

    return Task(name="tiny", category="math", description="x * 2", reference=reference,
                make_inputs=lambda shape, dtype, gen: (torch.ones(4, dtype=dtype),), shapes=[Shape("s", {}, "small")],
                contract=AllClose(), flops=lambda s: 4.0, bytes=lambda s, d: 32.0, **kw)


def test_task_baseline_is_what_the_baselines_run_and_rows_say_so():
    from backends.baselines import EagerBaseline
    from mkbench.engine.plan import Unit
    from mkbench.engine.rows import _skeleton
    from mkbench.task import baseline_reference, baseline_variant

    def doubled_by_addition(x):
        return x + x

    task = _tiny_task(baseline=doubled_by_addition, baseline_reason="x + x, as users write it")
    assert baseline_reference(task) is doubled_by_addition
    assert EagerBaseline().compile(task, None, None) is doubled_by_addition
    for dtype in ("float32", "bfloat16"):
        assert baseline_variant(task, dtype) == ("eager runs doubled_by_addition, not the reference: x + x, as users "
                                                 "write it")
    assert baseline_variant(task, "float32", "torch_compile").startswith("torch_compile runs doubled_by_addition")
    unit = Unit(task, EagerBaseline(), None, "eager", None, [("s", "float32")], [])
    rows, _ = _skeleton(unit)
    assert rows[("s", "float32")]["extra"]["baseline_variant"] == baseline_variant(task, "float32")
    plain = _tiny_task()  # no baseline: the reference, no variant
    assert baseline_reference(plain) is plain.reference and baseline_variant(plain, "float32") is None


@pytest.mark.parametrize("kw,message", [
    ({"baseline": lambda x: x + x}, "baseline needs baseline_reason"),
    ({"baseline": lambda x: x + x, "baseline_reason": ""}, "baseline needs baseline_reason"),
    ({"baseline": "x + x", "baseline_reason": "r"}, "baseline must be a function"),
    ({"baseline_reason": "r"}, "baseline_reason is set without a baseline"),
    ({"baseline": lambda x: x + x, "baseline_reason": "r", "baseline_compute_dtype": "float32",
      "baseline_compute_reason": "r"}, "not both"),
])
def test_task_baseline_needs_its_reason(kw, message):
    from mkbench.errors import BadInput
    with pytest.raises(BadInput, match=message):
        _tiny_task(**kw)


@pytest.mark.parametrize("params", [{"batch": 16, "n": 32}, {"batch": 5, "n": 67}])
def test_power_iteration_baseline_passes_its_contract(params):
    """The reference is a float64 eigh (41 s a call at the large shape on an H200: eager timed out);
    the baselines run power iteration at the task's dtype, which must pass the contract, and too few
    steps must not."""
    import sys

    from mkbench.task import baseline_reference, baseline_variant
    task = _task("linear_algebra/power_iteration.py")
    mod = sys.modules[task.reference.__module__]
    base = baseline_reference(task)
    assert base is not task.reference and base.__name__ == "power_iteration"
    assert baseline_variant(task, "float32").startswith("eager runs power_iteration, not the reference: power")
    for seed in range(4):
        inputs = task.make_inputs(params, torch.float32, torch.Generator().manual_seed(seed))
        ref = task.reference(*(a.double() for a in inputs))
        out = base(*inputs)
        assert all(o.dtype == torch.float32 for o in out)
        res = task.contract.check(CheckContext(torch.float32, inputs, out, lambda: ref, None))
        assert res.ok, res.message
        assert float((out[1].double() - ref[1]).abs().max()) < 1e-4  # the reference's sign convention
    steps = mod.STEPS
    try:
        mod.STEPS = 8  # an error of ~2^-8 / c_0: far above tol = 10 n eps
        inputs = task.make_inputs(params, torch.float32, torch.Generator().manual_seed(0))
        ref = task.reference(*(a.double() for a in inputs))
        assert not task.contract.check(CheckContext(torch.float32, inputs, base(*inputs), lambda: ref, None)).ok
    finally:
        mod.STEPS = steps


def test_power_iteration_baseline_compiles_as_one_graph():
    """A fixed number of steps: no data-dependent Python control flow, so torch.compile captures it
    whole (fullgraph=True raises at a graph break)."""
    import torch._dynamo

    from mkbench.task import baseline_reference
    task = _task("linear_algebra/power_iteration.py")
    (a,) = task.make_inputs({"batch": 5, "n": 67}, torch.float32, torch.Generator().manual_seed(0))
    torch._dynamo.reset()
    compiled = torch.compile(baseline_reference(task), fullgraph=True, backend="aot_eager")
    lam, v = compiled(a)
    elam, ev = baseline_reference(task)(a)
    assert torch.allclose(lam, elam) and torch.allclose(v, ev, atol=1e-6)


def test_bfloat16_running_sum_is_still_rejected():
    """What eager's CUDA scan does at bfloat16 (the running sum carried in bfloat16) fails the
    cumsum contract on a long row; the float32-computed baseline passes it."""
    from mkbench.task import baseline_reference
    task = _cumsum_task()
    (x,) = task.make_inputs({"rows": 8, "cols": 8192}, torch.bfloat16, torch.Generator().manual_seed(1))
    ref = torch.cumsum(x.double(), -1)
    acc, outs = x[:, 0].clone(), [x[:, 0]]
    for j in range(1, x.shape[1]):
        acc = acc + x[:, j]
        outs.append(acc)
    carried = torch.stack(outs, 1)
    assert not task.contract.check(_ctx([carried], [ref], torch.bfloat16)).ok
    assert task.contract.check(_ctx([baseline_reference(task)(x)], [ref], torch.bfloat16)).ok


# --- issue 29: derived rounding bounds accept eager-style bfloat16 arithmetic and still reject wrong answers


def _task(rel):
    from pathlib import Path

    from mkbench.task import load_task_file
    return load_task_file(Path(__file__).resolve().parent.parent / "tasks" / rel)


WRONG_FACTOR = {"math/polyval.py": 1.25}


@pytest.mark.parametrize("rel,params", [
    ("fusion/bias_swish_residual_scale.py", {"rows": 512, "cols": 1536}),
    ("fusion/masked_softmax.py", {"batch": 1, "heads": 2, "seq": 1024}),
    ("optimizer/rmsprop.py", {"n": 2 ** 20}),
    ("optimizer/lion.py", {"n": 2 ** 20}),
    ("fusion/rope_apply.py", {"batch": 2, "seq": 512, "heads": 8, "head_dim": 128}),
    # Horner's worst-case bound at |x| = 1.6 reaches a few times the default tolerance (eager's
    # own errors reach 3% of |y| there): a 5% error passes where |x| is large, 25% does not
    ("math/polyval.py", {"rows": 33, "cols": 4097}),
    ("optimizer/sgd_nesterov.py", {"n": 2 ** 20}),
    ("linear_algebra/ger_rank1_update.py", {"M": 1024, "N": 1024}),
])
def test_rounding_bound_accepts_eager_bfloat16_and_rejects_wrong(rel, params):
    from mkbench.contracts import upcast
    from mkbench.inputs import normalize
    task = _task(rel)
    for seed in (0, 1):
        inputs = task.make_inputs(params, torch.bfloat16, torch.Generator().manual_seed(seed))
        eager = normalize(task.reference(*inputs))  # CPU eager: every op's result rounded to bfloat16
        ref = normalize(task.reference(*upcast(inputs, torch.float64)))
        ok = task.contract.check(CheckContext(torch.bfloat16, inputs, eager, lambda: ref, None))
        assert ok.ok, ok.message
        wrong = tuple((o.double() * WRONG_FACTOR.get(rel, 1.05)).to(o.dtype) for o in eager)
        assert not task.contract.check(CheckContext(torch.bfloat16, inputs, wrong, lambda: ref, None)).ok


def test_bias_swish_default_tolerance_rejects_eager_where_the_bound_accepts():
    """A cancelling residual next to an outlier branch: eager's bfloat16 roundings of the large
    intermediates exceed rtol |y| + atol rms(y), but not the derived bound."""
    from mkbench.contracts import AllClose
    task = _task("fusion/bias_swish_residual_scale.py")
    x = torch.tensor([[40.0, 1.0]]).to(torch.bfloat16)
    bias = torch.tensor([0.25, 0.0]).to(torch.bfloat16)
    gamma = torch.tensor([1.9, 0.5]).to(torch.bfloat16)
    res = (-(gamma.double() * torch.nn.functional.silu(x.double() + bias.double()))[0] + torch.tensor([0.01, 1.0],
           dtype=torch.float64)).to(torch.bfloat16).unsqueeze(0)
    inputs = (x, bias, gamma, res)
    eager = (task.reference(*inputs),)
    ref = (task.reference(*(v.double() for v in inputs)),)
    ctx = CheckContext(torch.bfloat16, inputs, eager, lambda: ref, None)
    assert task.contract.check(ctx).ok
    err = (eager[0].double() - ref[0]).abs().max()
    assert err > 0.05  # rounding of the ~77 branch and the residual: far above rtol x |y| ~ 0.02
    assert not AllClose().check(ctx).ok


@pytest.mark.parametrize("rel,params,seeds", [
    # seeds whose coefficients cancel (as the H100's awkward seed 1 did: 316 elements outside)
    ("math/polyval.py", {"rows": 33, "cols": 4097}, (7, 8, 80)),
    ("optimizer/sgd_nesterov.py", {"n": 2 ** 22}, (0, 1, 2)),
])
def test_default_tolerance_rejected_eager_bfloat16_where_the_derived_bound_accepts(rel, params, seeds):
    """What the H100 run saw (issue 29): eager bfloat16, every op rounded (CPU eager rounds as CUDA's
    elementwise kernels do), outside the default allclose on a few elements; within the bound."""
    from mkbench.contracts import AllClose, upcast
    from mkbench.inputs import normalize
    task = _task(rel)
    rejected = 0
    for seed in seeds:
        inputs = task.make_inputs(params, torch.bfloat16, torch.Generator().manual_seed(seed))
        eager = normalize(task.reference(*inputs))
        ref = normalize(task.reference(*upcast(inputs, torch.float64)))
        ctx = CheckContext(torch.bfloat16, inputs, eager, lambda: ref, None)
        res = task.contract.check(ctx)
        assert res.ok, res.message
        assert not task.contract.check(CheckContext(torch.bfloat16, inputs, tuple(
            (o.double() * 1.25).to(o.dtype) for o in eager), lambda: ref, None)).ok
        rejected += not AllClose().check(ctx).ok
    assert rejected


def test_ger_cancelling_element_passes_where_eager_rounds_and_fails_a_few_ulps_off():
    """The H200 finding: eager bfloat16 ger at the large shape, 1 element of 67M outside the default
    allclose (got -1.0625, expected -1.00781), where A and alpha x y (~13 each) cancel. The same
    roundings on the CPU: a = 12.0625, x = -6.1875, y = -2.640625 give -1.0625 against -1.00859
    (0.054, 7 ulps of the result, under half an ulp of the terms). The derived bound accepts it;
    answers 3 or more ulps of |a| + |alpha x y| off fail."""
    from mkbench.contracts import AllClose
    task = _task("linear_algebra/ger_rank1_update.py")
    alpha = -0.8
    a = torch.tensor([[12.0625]], dtype=torch.bfloat16)
    x = torch.tensor([-6.1875], dtype=torch.bfloat16)
    y = torch.tensor([-2.640625], dtype=torch.bfloat16)
    inputs = (a, x, y, alpha)
    eager = (task.reference(*inputs),)
    ref = (task.reference(a.double(), x.double(), y.double(), alpha),)
    err = float((eager[0].double() - ref[0]).abs())
    assert float(eager[0]) == -1.0625 and abs(float(ref[0]) + 1.00859) < 1e-4 and 0.05 < err < 0.06
    ctx = CheckContext(torch.bfloat16, inputs, eager, lambda: ref, None)
    assert not AllClose().check(ctx).ok  # what the H200 run judged
    res = task.contract.check(ctx)
    assert res.ok, res.message
    terms = float(a.double().abs() + (alpha * x.double() * y.double()).abs())  # |a| + |alpha x y| ~ 25.1
    ulp = 2.0 ** (torch.floor(torch.log2(torch.tensor(terms))).item() - 7)  # bfloat16: 8 significant bits
    for k in (3, 4, 8):
        for sign in (1, -1):
            wrong = ((ref[0] + sign * k * ulp).to(torch.bfloat16),)
            assert not task.contract.check(CheckContext(torch.bfloat16, inputs, wrong, lambda: ref, None)).ok, (k, sign)


def test_perturbed_control_changes_finite_elements_beyond_tolerance():
    """xlogy at float16 on an H100: 'perturbed' was accepted. Its picks were the largest |v| (a NaN
    or an inf: argmax takes NaN) and fixed positions changed to 1.5 v + 1 (unchanged at NaN, inf
    and v = -2). Now three finite elements move away from zero by at least 1."""
    from mkbench.contracts import AllClose
    from mkbench.validate import _perturb_few
    out = torch.tensor([float("nan"), 3.0, float("inf"), 0.5, -2.0, -float("inf"), -2.0], dtype=torch.float16)
    p = _perturb_few(out)
    changed = (p.double() - out.double()).abs().nan_to_num(0.0)
    assert int((changed >= 1).sum()) == 3
    assert float(changed[1]) >= 1 and float(changed[-1]) >= 1  # the largest finite and the last finite
    ctx = CheckContext(torch.float16, (), (p,), lambda: (out.double(),), None)
    assert not AllClose().check(ctx).ok
    # xlogy itself: the control is rejected on every seed at float16
    task = _task("math/xlogy.py")
    for seed in range(4):
        inputs = task.make_inputs({"rows": 64, "cols": 1024}, torch.float16, torch.Generator().manual_seed(seed))
        ref = (task.reference(*(v.double() for v in inputs)),)
        bad = (_perturb_few(task.reference(*inputs)),)
        assert not task.contract.check(CheckContext(torch.float16, inputs, bad, lambda: ref, None)).ok


def _fp8_quant_module():
    import sys
    from pathlib import Path

    from mkbench.task import load_task_file
    task = load_task_file(Path(__file__).resolve().parent.parent / "tasks" / "quantization" /
                          "fp8_e4m3_quant_per_tensor.py")
    return sys.modules[task.reference.__module__]


def test_e4m3_spacing_is_exact_at_every_code():
    """The step to the next E4M3 value, for every finite positive code, powers of two included (on
    an H200 the float64 floor(log2(8)) came out 2, which halved the step at 8 and rejected mkbench's
    own reference on the tie x / scale = 8.5)."""
    m = _fp8_quant_module()
    values = m.decode_e4m3(torch.arange(0, 0x7F, dtype=torch.uint8))
    assert torch.equal(m.e4m3_spacing(values[:-1].clone()), values[1:] - values[:-1])


@pytest.mark.parametrize("got, expected, v, ok", [
    (0x51, 0x50, 8.5, True),           # the H200's tie: 9 for 8 (ties to even), one step at a power of two
    (0x51, 0x50, 8.5 + 5e-4, True),    # a near-tie inside the window (1e-3 of a step)
    (0x51, 0x50, 8.3, False),          # one step, far from the midpoint
    (0x52, 0x50, 8.5, False),          # two steps
])
def test_e4m3_near_ties_at_a_power_of_two(got, expected, v, ok):
    m = _fp8_quant_module()
    res = m.compare_e4m3(torch.tensor([got], dtype=torch.uint8), torch.tensor([expected], dtype=torch.uint8),
                         torch.tensor([v], dtype=torch.float64))
    assert res.ok is ok, res.message


# --- sdpa_gqa: the softmax-carried rounding bound (float32) ---------------------------------------

def _flash_float32(q, k, v, scale, block=64):
    """A flash kernel's float32 arithmetic: key blocks, exp2 of log2(e)-scaled logits, running max and
    rescaled accumulator (mkbench's Triton reference computes so)."""
    b, hq, sq, d = q.shape
    hkv = k.shape[1]
    g = hq // hkv
    out = torch.empty_like(q)
    for i in range(b):
        for h in range(hkv):
            qg = q[i, h * g:(h + 1) * g].reshape(g * sq, d) * (scale * 1.4426950408889634)
            m = torch.full((g * sq, 1), -float("inf"))
            den, acc = torch.zeros(g * sq, 1), torch.zeros(g * sq, d)
            for j in range(0, k.shape[2], block):
                s = qg @ k[i, h, j:j + block].T
                new = torch.maximum(m, s.amax(-1, keepdim=True))
                p, alpha = torch.exp2(s - new), torch.exp2(m - new)
                den, acc, m = den * alpha + p.sum(-1, keepdim=True), acc * alpha + p @ v[i, h, j:j + block], new
            out[i, h * g:(h + 1) * g] = (acc / den).reshape(g, sq, d)
    return out


def _tf32(t):
    bits = t.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)  # 10 explicit mantissa bits, rounded


def test_sdpa_gqa_bound_accepts_float32_arithmetic_and_rejects_lower_precision():
    task = _task("fusion/sdpa_gqa.py")
    params = {"batch": 1, "q_heads": 4, "kv_heads": 1, "q_len": 256, "k_len": 1024, "head_dim": 128}
    for seed in (0, 1):
        q, k, v, scale = inputs = task.make_inputs(params, torch.float32, torch.Generator().manual_seed(seed))
        ref = (task.reference(q.double(), k.double(), v.double(), scale),)

        def judged(out):
            return task.contract.check(CheckContext(torch.float32, inputs, (out,), lambda: ref, None))
        for honest in (task.reference(*inputs), _flash_float32(q, k, v, scale)):
            res = judged(honest)
            assert res.ok, res.message
        # TF32 logits (cuBLAS with TF32 on), bfloat16 operands, a 1e-3 relative error: each rejected
        assert not judged(task.reference(_tf32(q), _tf32(k), v, scale)).ok
        assert not judged(task.reference(q.bfloat16().float(), k.bfloat16().float(), v.bfloat16().float(), scale)).ok
        assert not judged((ref[0] * (1 + 1e-3)).float()).ok


def test_rounding_bound_dtypes_leaves_the_other_dtypes_to_their_tolerances():
    from mkbench.contracts import RoundingBound

    def magnitudes(x):
        raise AssertionError("computed for a dtype the bound does not name")
    bound = RoundingBound(magnitudes=magnitudes, description="float32 only", dtypes=("float32",))
    x = torch.ones(8, dtype=torch.float16)
    ref = (x.double(),)
    assert bound.check(CheckContext(torch.float16, (x,), (x,), lambda: ref, None)).ok
    assert not bound.check(CheckContext(torch.float16, (x,), (x * 1.1,), lambda: ref, None)).ok
    with pytest.raises(AssertionError, match="does not name"):
        bound.check(CheckContext(torch.float32, (x.float(),), (x.float(),), lambda: ref, None))


def test_cuda_l1_tolerance_is_its_own_raw_allclose():
    # CUDA-L1's eval: torch.allclose(original, custom, atol=1e-2, rtol=1e-2), float32 included
    contract = cuda_l1_allclose()
    assert contract.reference_precision is None and contract.scale == "abs"
    ref = torch.full((10,), 10.0)
    assert contract.check(_ctx([ref + 0.11], [ref])).ok  # 1e-2 + 1e-2 * 10 = 0.11
    assert not contract.check(_ctx([ref + 0.12], [ref])).ok
    assert not kernelbench_allclose().check(_ctx([ref + 0.11], [ref])).ok  # KernelBench's float32 is 1e-4


# --- lion: the coefficients' float32 rounding (1 - beta formed from a float32 beta) ------------------

#: three elements (param, exp_avg, the three steps' gradients, as float32 hex) whose sign came out the
#: other way in a float32 kernel that forms 1 - beta in float32: drawn by lion's make_inputs for
#: n = 2^24, CPU generator seed 1; an H200 showed the same on its own seed's draws (call 48)
LION_FLIPS = [
    ("0x1.6e8ef0p-6", "0x1.39ddbep-13", ("-0x1.611972p-10", "0x1.80c8d0p-11", "-0x1.824cc6p-13")),
    ("0x1.468268p-6", "-0x1.85927ap-15", ("0x1.b644c4p-12", "0x1.83f11cp-10", "0x1.6f0824p-13")),
    ("0x1.83cb50p-7", "0x1.5b6a6cp-16", ("-0x1.1eb534p-9", "0x1.3aa40cp-14", "0x1.7035e0p-18")),
]


def _lion_float32_kernel(param, grads, exp_avg, lr, beta1, beta2, weight_decay):
    """Lion as the backends' references compute it: float32 throughout, 1 - beta from a float32 beta."""
    f = torch.float32
    b1, b2 = torch.tensor(beta1, dtype=f), torch.tensor(beta2, dtype=f)
    p, m = param.clone(), exp_avg.clone()
    for g in grads:
        c = b1 * m + (1.0 - b1) * g
        p = p * torch.tensor(1.0 - lr * weight_decay, dtype=f) - torch.tensor(lr, dtype=f) * torch.sign(c)
        m = b2 * m + (1.0 - b2) * g
    return p, m


def test_lion_accepts_a_float32_kernel_whose_rounded_coefficients_flip_a_sign():
    task = _task("optimizer/lion.py")
    param, grads, exp_avg, *hyper = task.make_inputs({"n": 4096}, torch.float32, torch.Generator().manual_seed(0))
    for i, (p, m, gs) in enumerate(LION_FLIPS):
        at = 1000 * (i + 1)
        param[at], exp_avg[at] = float.fromhex(p), float.fromhex(m)
        for k, g in enumerate(gs):
            grads[k, at] = float.fromhex(g)
    inputs = (param, grads, exp_avg, *hyper)
    out = _lion_float32_kernel(*inputs)
    ref = task.reference(*(x.double() if torch.is_tensor(x) else x for x in inputs))
    flipped = ((out[0].double() - ref[0]).abs() > 1.5 * hyper[0]).nonzero().flatten().tolist()
    assert flipped == [1000, 2000, 3000]  # each planted element's sign came out the other way
    res = task.contract.check(CheckContext(torch.float32, inputs, out, lambda: ref, None))
    assert res.ok, res.message
    # a sign flipped where no rounding can flip it is still wrong: 2 lr off at an ordinary element
    wrong = (out[0].clone(), out[1])
    wrong[0][17] -= 2 * hyper[0]
    assert not task.contract.check(CheckContext(torch.float32, inputs, wrong, lambda: ref, None)).ok
