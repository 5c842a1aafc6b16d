"""Numerical contracts: how a candidate's outputs are judged against a task's reference.

Every contract gets a :class:`CheckContext` and returns a :class:`CheckResult`. The harness has
already checked output count, shapes and dtypes against the reference run at the task's dtype,
so contracts compare values only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import torch


@dataclass
class CheckResult:
    ok: bool
    message: str = ""
    max_abs_err: float | None = None
    max_rel_err: float | None = None


@dataclass
class CheckContext:
    """What a contract may look at. ``reference()`` is computed lazily, once, in the contract's
    reference precision from a pristine copy of the inputs; ``candidate(*inputs)`` re-runs the
    candidate (for determinism checks); ``make_inputs(seed)`` draws a fresh input set."""

    dtype: torch.dtype
    inputs: tuple
    outputs: tuple
    reference: Callable[[], tuple]
    candidate: Callable[..., tuple]
    make_inputs: Callable[[int], tuple] | None = None


@dataclass(frozen=True)
class Tol:
    rtol: float
    atol: float


# fp32 follows KernelBench's 1e-4; half precisions leave room for one rounding of inputs and
# outputs plus a few ulps of accumulated error. atol is relative to the RMS of the reference
# (see AllClose.scale) so it means the same thing at every input scale.
DEFAULT_TOLERANCES: dict[str, Tol] = {
    "float64": Tol(1e-7, 1e-9),
    "float32": Tol(1e-4, 1e-5),
    "float16": Tol(1e-2, 1e-2),
    "bfloat16": Tol(2e-2, 2e-2),
}


def use_ieee_float32() -> None:
    """A contract's float32 means IEEE float32: no silent TF32 in references, baselines or the
    judge. Called by every process that computes what a contract is checked against or with (the
    worker, the judge, ``mkbench validate``'s controls): on an H100, validate's processes without
    it had cuDNN's TF32 convolutions rejected by the float32 contracts the engine's eager passes."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def _as_float64(t: torch.Tensor) -> torch.Tensor:
    return t.detach().to(torch.float64)


def absolute_floor(dtype: torch.dtype) -> float:
    """The smallest absolute error any closeness check tolerates for outputs of ``dtype``: the
    smallest normal number of the type the arithmetic runs in (float32 for the 16-bit types,
    which GPUs compute in float32 and round; float64 for float64).

    Why: below the smallest normal, hardware flushes to zero (FTZ/DAZ in cuDNN, cuBLAS and
    ``--use_fast_math`` code), and a float64 reference holds values the output type cannot hold
    at all (6.2e-46 rounds to 0 in float32). When every output is that small, an RMS-scaled atol
    collapses with them and PyTorch eager itself would be judged wrong (seen on a KernelBench
    level-1 convolution on an H100). The floor is far below any output scale a task draws, so a
    wrong answer at normal magnitudes still fails."""
    if not (dtype.is_floating_point or dtype.is_complex):
        return 0.0
    real = torch.empty((), dtype=dtype).real.dtype if dtype.is_complex else dtype
    return float(torch.finfo(torch.promote_types(real, torch.float32)).tiny)


#: elements of an output compared at once. The comparison's float64 temporaries (the output's copy,
#: the error, the bound, their margin: about six of the output's size at eight bytes) were the
#: judge's peak for elementwise tasks, larger than the reference itself: a 2^28-element bfloat16
#: output took some 12 GiB to compare where its float64 reference is 2 GiB. In slices of this many
#: elements they take at most a few hundred MiB; the statistics stay on the device and are read once
#: per stage however many slices there are.
COMPARE_SLICE = 1 << 23


def compare_close(out: torch.Tensor, ref: torch.Tensor, tol: Tol, scale: str = "rms",
                  name: str = "output", extra: torch.Tensor | None = None) -> CheckResult:
    """|out - ref| <= max(atol * s, floor) + rtol * |ref| (+ extra), where s is 1 (scale="abs") or
    rms(ref) (scale="rms"), floor is :func:`absolute_floor` of the output's dtype and ``extra`` an
    optional per-element allowance of ref's shape (a derived rounding bound, :class:`RoundingBound`).

    NaN and +/-Inf must sit at exactly the same positions with the same signs.

    On a GPU each value read back to the host waits for the device, and a judge shares the device
    with every lane (on an H200 main job the judge took 10 s of a candidate unit, about 45 checks at
    0.2 s each, where the comparisons themselves take milliseconds). So the counts and the
    statistics are gathered into one tensor and read once per stage: twice for an output whose
    reference is finite everywhere (the usual case), where the previous form read eight values.
    The values are compared in slices of :data:`COMPARE_SLICE` elements (memory, above); an output
    of one slice is compared exactly as a whole, and over several the rms is their squares' sum over
    the count, the same to rounding.
    """
    if out.shape != ref.shape:
        out, ref = torch.broadcast_tensors(out, ref)
    o_all, r_all = out.detach().reshape(-1), ref.detach().reshape(-1)
    room_all = None if extra is None else torch.nan_to_num(
        extra.to(torch.float64).expand_as(ref).reshape(-1), posinf=0.0)
    n = r_all.numel()
    bounds = [(a, min(a + COMPARE_SLICE, n)) for a in range(0, n, COMPARE_SLICE)] or [(0, 0)]

    # One slice (every output up to COMPARE_SLICE elements: the usual case) is converted to float64 once
    # and kept for both stages; several are converted again in each stage, one at a time (memory).
    kept: tuple[torch.Tensor, torch.Tensor] | None = None

    def pair(a: int, b: int) -> tuple[torch.Tensor, torch.Tensor]:
        return kept if kept is not None else (_as_float64(o_all[a:b]), _as_float64(r_all[a:b]))

    counts = None
    for a, b in bounds:
        o, r = pair(a, b)
        if len(bounds) == 1:
            kept = (o, r)
        o_nan, r_nan = torch.isnan(o), torch.isnan(r)
        o_inf, r_inf = torch.isinf(o), torch.isinf(r)
        part = torch.stack([(o_nan != r_nan).sum(), (o_inf != r_inf).sum(), (o_inf & r_inf & (o != r)).sum(),
                            (r_nan | r_inf).sum()])
        counts = part if counts is None else counts + part
    nan_differ, inf_differ, inf_signs_differ, nonfinite = (int(v) for v in counts.tolist())
    if nan_differ:
        return CheckResult(False, f"{name}: NaN positions differ at {nan_differ} elements")
    if inf_differ or inf_signs_differ:
        return CheckResult(False, f"{name}: Inf positions or signs differ ({inf_differ} positions)")
    judged = n - nonfinite
    if judged == 0:
        return CheckResult(True, "", 0.0, 0.0)

    def finite_slice(a: int, b: int):
        """The slice's finite elements of the reference, with the candidate's and the room there."""
        o, r = pair(a, b)
        room = None if room_all is None else room_all[a:b]
        if nonfinite:  # no index of the finite elements in the usual case (8 bytes per dimension each)
            finite = ~(torch.isnan(r) | torch.isinf(r))
            o, r, room = o[finite], r[finite], (None if room is None else room[finite])
        return o, r, room

    whole = [finite_slice(*bounds[0])] if kept is not None else None

    def finite_slices():
        return whole if whole is not None else (finite_slice(a, b) for a, b in bounds)

    one = torch.ones((), dtype=torch.float64, device=r_all.device)
    if scale != "rms":
        s = one
    elif whole is not None:
        s = whole[0][1].square().mean().sqrt()
    else:
        s = (sum(r.square().sum() for _, r, _ in finite_slices()) / judged).sqrt()
    s = torch.where(s > 0, s, one)
    # max(atol * s, floor), as a device scalar: the same float64 product and maximum as on the host
    atol = (tol.atol * s).clamp_min(absolute_floor(out.dtype))
    rel_floor = torch.where(atol > 0, atol, 1e-300)
    stats = []
    for o, r, room in finite_slices():
        if r.numel() == 0:
            continue
        err = (o - r).abs()
        bound = atol + tol.rtol * r.abs()
        if room is not None:
            bound = bound + room
        margin = err - bound
        worst = torch.argmax(margin)
        stats.append(torch.stack([err.max(), (err / r.abs().clamp_min(rel_floor)).max(),
                                  (err > bound).sum().to(torch.float64), margin.max(),
                                  torch.take(o, worst), torch.take(r, worst)]))
    table = torch.stack(stats)  # one row per slice; the worst element is the first largest margin's
    first = torch.argmax(table[:, 3])
    max_abs, max_rel, nbad, got, expected = torch.stack([
        table[:, 0].max(), table[:, 1].max(), table[:, 2].sum(), table[first, 4], table[first, 5]]).tolist()
    if nbad:
        return CheckResult(
            False,
            f"{name}: {int(nbad)}/{judged} elements outside rtol={tol.rtol:g} "
            f"atol={tol.atol:g}*{'rms' if scale == 'rms' else '1'}{' + rounding bound' if room_all is not None else ''}"
            f" (worst: got {got:.6g}, expected {expected:.6g}); max abs err "
            f"{max_abs:.3g}",
            max_abs, max_rel,
        )
    return CheckResult(True, "", max_abs, max_rel)


class Contract:
    """Base class. ``reference_precision`` is the dtype floating inputs are upcast to before the
    reference runs (None: the task's own dtype)."""

    reference_precision: torch.dtype | None = torch.float64
    description = ""

    def check(self, ctx: CheckContext) -> CheckResult:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass
class AllClose(Contract):
    """Element-wise closeness per dtype, against a float64 reference by default."""

    tolerances: Mapping[str, Tol] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    scale: str = "rms"
    reference_precision: torch.dtype | None = torch.float64

    @property
    def description(self) -> str:
        tols = ", ".join(f"{k}: rtol {v.rtol:g} atol {v.atol:g}" for k, v in self.tolerances.items())
        return (f"allclose vs {self.reference_precision or 'native'} reference ({tols}; atol x {self.scale}); "
                "NaN/Inf positions must match")

    def tol_for(self, out: torch.Tensor, dtype: torch.dtype) -> Tol | None:
        from .task import DTYPE_NAMES
        if not (out.is_floating_point() or out.is_complex()):
            return None
        name = DTYPE_NAMES.get(out.dtype) or DTYPE_NAMES.get(dtype, "float32")
        return self.tolerances.get(name, self.tolerances.get("float32"))

    def check(self, ctx: CheckContext) -> CheckResult:
        ref = ctx.reference()
        worst_abs, worst_rel = 0.0, 0.0
        for i, (o, r) in enumerate(zip(ctx.outputs, ref)):
            name = f"output[{i}]" if len(ref) > 1 else "output"
            tol = self.tol_for(o, ctx.dtype)
            if tol is None:
                res = compare_exact(o, r, name)
            else:
                res = compare_close(o, r, tol, self.scale, name)
            if not res.ok:
                return res
            worst_abs = max(worst_abs, res.max_abs_err or 0.0)
            worst_rel = max(worst_rel, res.max_rel_err or 0.0)
        return CheckResult(True, "", worst_abs, worst_rel)


#: KernelBench's own judgement (``eval_kernel_against_ref``): ``torch.allclose(output, output_new,
#: atol=t, rtol=t)`` on raw values, t = 1e-4 for float32 and 1e-2 for float16/bfloat16, with the
#: reference run at the problem's own precision.
KERNELBENCH_TOLERANCES: dict[str, Tol] = {
    "float32": Tol(1e-4, 1e-4), "float16": Tol(1e-2, 1e-2), "bfloat16": Tol(1e-2, 1e-2),
}

#: CUDA-L1's own judgement (its ``eval/eval_cuda.py``): ``torch.allclose(original, custom, atol=1e-2,
#: rtol=1e-2)`` on raw values whatever the dtype, the reference at the problem's own precision. Its
#: evaluation also puts both models in eval mode: ``mkbench import kernelbench --contract cuda-l1``
#: builds the task's and the candidates' models so (``importers.kernelbench``'s ``eval_mode``).
CUDA_L1_TOLERANCES: dict[str, Tol] = {
    "float32": Tol(1e-2, 1e-2), "float16": Tol(1e-2, 1e-2), "bfloat16": Tol(1e-2, 1e-2),
}

#: KernelBench-X's default judgement (``EVAL/1_exe_acc.py``): ``torch.testing.assert_close`` with
#: rtol = atol = 1e-5 for float32/float64 and 5e-3 for float16/bfloat16 on raw values, other
#: dtypes exactly, both sides at the task's own precision.
KERNELBENCH_X_TOLERANCES: dict[str, Tol] = {
    "float64": Tol(1e-5, 1e-5), "float32": Tol(1e-5, 1e-5), "float16": Tol(5e-3, 5e-3), "bfloat16": Tol(5e-3, 5e-3),
}


def kernelbench_allclose() -> "AllClose":
    """KernelBench's tolerance (:data:`KERNELBENCH_TOLERANCES`), for verdicts comparable like for
    like with KernelBench's (``mkbench import kernelbench --contract kernelbench``)."""
    return AllClose(tolerances=dict(KERNELBENCH_TOLERANCES), scale="abs", reference_precision=None)


def cuda_l1_allclose() -> "AllClose":
    """CUDA-L1's tolerance (:data:`CUDA_L1_TOLERANCES`), for verdicts on CUDA-L1's released kernels
    comparable with the ones it recorded (``mkbench import kernelbench --contract cuda-l1``)."""
    return AllClose(tolerances=dict(CUDA_L1_TOLERANCES), scale="abs", reference_precision=None)


def kernelbench_x_allclose() -> "AllClose":
    """KernelBench-X's default tolerance (:data:`KERNELBENCH_X_TOLERANCES`), for tasks without
    per-task thresholds (``mkbench import kernelbench-x --as-tasks --contract kernelbench-x``)."""
    return AllClose(tolerances=dict(KERNELBENCH_X_TOLERANCES), scale="abs", reference_precision=None)


def similarity_metrics(out: torch.Tensor, ref: torch.Tensor) -> dict[str, float]:
    """Cosine similarity of the flattened tensors (1 when both are all zero, 0 when only one
    is), relative L1 error sum|o - r| / sum|r|, and root-mean-square error; in float64."""
    o, r = out.detach().reshape(-1).to(torch.float64), ref.detach().reshape(-1).to(torch.float64)
    if o.numel() == 0:
        return {"cosine_sim": 1.0, "l1_relative": 0.0, "rmse": 0.0}
    no, nr = float(o.norm()), float(r.norm())
    if no < 1e-12 and nr < 1e-12:
        cosine = 1.0
    elif no < 1e-12 or nr < 1e-12:
        cosine = 0.0
    else:
        cosine = float(torch.dot(o, r) / (no * nr))
    diff = (o - r).abs()
    return {"cosine_sim": cosine, "l1_relative": float(diff.sum() / r.abs().sum().clamp_min(1e-12)),
            "rmse": float(diff.square().mean().sqrt())}


@dataclass
class SimilarityThresholds(Contract):
    """Whole-tensor similarity instead of element-wise closeness: every numeric output must have
    cosine similarity >= ``cosine_min`` with the reference, relative L1 error <= ``l1_relative_max``
    and RMSE <= ``rmse_max`` (:func:`similarity_metrics`); NaN/Inf positions must match; boolean
    outputs must be equal. This is KernelBench-X's per-task ``precision_thresholds`` rule (its
    quantized tasks), so imported tasks can be judged as KernelBench-X judges them."""

    cosine_min: float = 0.99
    l1_relative_max: float = 0.01
    rmse_max: float = 0.01
    reference_precision: torch.dtype | None = None

    @property
    def description(self) -> str:
        return (f"similarity vs {self.reference_precision or 'native'} reference: cosine >= {self.cosine_min:g}, "
                f"relative L1 <= {self.l1_relative_max:g}, RMSE <= {self.rmse_max:g}; NaN/Inf positions must match")

    def check(self, ctx: CheckContext) -> CheckResult:
        worst_abs = 0.0
        for i, (o, r) in enumerate(zip(ctx.outputs, ctx.reference())):
            name = f"output[{i}]"
            if o.dtype == torch.bool:
                res = compare_exact(o, r, name)
                if not res.ok:
                    return res
                continue
            of, rf = o.to(torch.float64), r.to(torch.float64)
            inf = torch.isinf(rf)
            if not torch.equal(torch.isnan(of), torch.isnan(rf)) or not torch.equal(torch.isinf(of), inf) \
                    or not torch.equal(of[inf], rf[inf]):
                return CheckResult(False, f"{name}: NaN/Inf positions or signs differ")
            finite = torch.isfinite(rf)
            m = similarity_metrics(of[finite], rf[finite])
            if not (m["cosine_sim"] >= self.cosine_min and m["l1_relative"] <= self.l1_relative_max
                    and m["rmse"] <= self.rmse_max):
                return CheckResult(False, f"{name}: cosine {m['cosine_sim']:.6g} (>= {self.cosine_min:g}), relative L1 "
                                          f"{m['l1_relative']:.3g} (<= {self.l1_relative_max:g}), RMSE {m['rmse']:.3g} "
                                          f"(<= {self.rmse_max:g})", m["rmse"], m["l1_relative"])
            if finite.any():
                worst_abs = max(worst_abs, float((of[finite] - rf[finite]).abs().max()))
        return CheckResult(True, "", worst_abs, None)


def compare_exact(out: torch.Tensor, ref: torch.Tensor, name: str = "output") -> CheckResult:
    if out.shape != ref.shape:
        return CheckResult(False, f"{name}: shape {tuple(out.shape)} != {tuple(ref.shape)}")
    ref = ref.to(out.dtype) if ref.dtype != out.dtype else ref
    neq = out != ref
    if out.is_floating_point():
        neq &= ~(torch.isnan(out) & torch.isnan(ref))
    if bool(neq.any()):
        idx = int(torch.nonzero(neq.flatten())[0])
        return CheckResult(False,
                           f"{name}: {int(neq.sum())}/{out.numel()} elements differ (first at flat index {idx}: got "
                           f"{out.flatten()[idx].item()}, expected {ref.flatten()[idx].item()})", None, None)
    return CheckResult(True, "", 0.0, 0.0)


def near_tie(v: torch.Tensor, window: float) -> torch.Tensor:
    """Where an unrounded value lies within ``window`` of a .5 tie."""
    return ((v - torch.floor(v)) - 0.5).abs() < window


def compare_rounded(q: torch.Tensor, expected: torch.Tensor, unrounded: torch.Tensor, window: float,
                    name: str = "q") -> CheckResult:
    """Quantized integers: exact, except a difference of exactly 1 where the unrounded value
    (x / scale) lies within ``window`` of a .5 tie (the other side of a tie is as right)."""
    diff = (q.to(torch.int32) - expected.to(torch.int32)).abs()
    bad = (diff > 1) | ((diff == 1) & ~near_tie(unrounded, window))
    worst = float(diff.max()) if diff.numel() else 0.0
    if bool(bad.any()):
        i = int(torch.nonzero(bad.flatten())[0])
        return CheckResult(False, f"{name}: {int(bad.sum())}/{q.numel()} values differ (first at flat index {i}: got "
                                  f"{int(q.flatten()[i])}, expected {int(expected.flatten()[i])}, x/scale = "
                                  f"{float(unrounded.flatten()[i]):.4f})", worst)
    return CheckResult(True, "", worst)


def compare_int8_scaled(q: torch.Tensor, scale: torch.Tensor, unrounded: torch.Tensor, expected_scale: torch.Tensor,
                        scale_rtol: float, tie_window: float) -> CheckResult:
    """Symmetric int8 quantization with one float scale per row, against a float64 recomputation:
    every scale within ``scale_rtol`` (relative) of ``expected_scale``, then ``q`` equal to
    round(unrounded).clamp(-127, 127) except across a .5 tie (compare_rounded).

    Why two steps: the scale carries the reduction's rounding error, which the task bounds with its
    own derivation (``scale_rtol``); once the scale is right, q may differ from the exact rounding
    only where x / scale sits on a tie. max_rel_err reports the scale's relative error."""
    rel = float(((scale.double() - expected_scale).abs() / expected_scale).max()) if scale.numel() else 0.0
    if not rel <= scale_rtol:
        return CheckResult(False, f"scale: max relative error {rel:.3g} > {scale_rtol:g}", None, rel)
    res = compare_rounded(q, torch.round(unrounded).clamp(-127, 127).to(torch.int8), unrounded, tie_window)
    return CheckResult(res.ok, res.message, res.max_abs_err, rel)


@dataclass
class RoundingBound(Contract):
    """Allclose (``tolerances``, atol x ``scale``) plus, per element, the rounding error an
    implementation that rounds every intermediate to the output dtype legitimately commits:
    |out - ref| <= max(atol s, floor) + rtol |ref| + slack u m, u the output dtype's unit roundoff
    (eps / 2), ``m = magnitudes(*inputs in float64)`` one tensor per output (None: no allowance).

    Why: the default tolerances leave room for one rounding of the output and a few ulps; an eager
    chain of k elementwise ops at bfloat16 rounds k times, each rounding carried to the output
    scaled by that intermediate's magnitude and the output's sensitivity to it, and where the
    intermediates are larger than the output (a residual that cancels the branch, a softmax whose
    logits are large, an outlier feeding a GEMM) that exceeds any rms-scaled atol on a few elements
    of a large shape: PyTorch eager itself was judged wrong on H200s (issue 29). ``m`` is the task's
    first-order error analysis, written next to it: sum over rounded intermediates v of
    |dy/dv| |v| (a worst case, for elementwise chains), and for a rounding carried through a dot
    product over K terms, 8 / sqrt(3) x sqrt(sum_j w_j^2 v_j^2) (independent roundings, each uniform
    on +-u|v_j|, std u|v_j| / sqrt(3): 8 standard deviations, exceeded with probability ~1e-15 per
    element, and never less than the worst case of one dominant term). At float32 u = 2^-24, so the
    allowance stays far below what bfloat16 arithmetic (the bf16_compute control) misses by.

    ``dtypes`` names the task dtypes the allowance applies to (None: every one): where the analysis
    is written for one precision (float32 accumulation, say), the others keep ``tolerances`` alone."""

    magnitudes: Callable[..., Sequence[torch.Tensor | None]] = None  # type: ignore[assignment]
    description: str = ""
    slack: float = 2.0
    dtypes: tuple[str, ...] | None = None
    tolerances: Mapping[str, Tol] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    scale: str = "rms"
    reference_precision: torch.dtype | None = torch.float64

    def __post_init__(self):
        if self.magnitudes is None or not self.description:
            raise ValueError("RoundingBound needs magnitudes and a description (its derivation)")

    def check(self, ctx: CheckContext) -> CheckResult:
        from .task import DTYPE_NAMES
        ref = ctx.reference()
        mags: tuple = ()
        if self.dtypes is None or DTYPE_NAMES.get(ctx.dtype) in self.dtypes:
            with torch.no_grad():
                mags = tuple(self.magnitudes(*upcast(ctx.inputs, torch.float64)))
        worst_abs, worst_rel = 0.0, 0.0
        for i, (o, r) in enumerate(zip(ctx.outputs, ref)):
            name = f"output[{i}]" if len(ref) > 1 else "output"
            if not (o.is_floating_point() or o.is_complex()):
                res = compare_exact(o, r, name)
            else:
                tol = self.tolerances.get(DTYPE_NAMES.get(o.dtype, "float32"), self.tolerances["float32"])
                m = mags[i] if i < len(mags) else None
                room = None if m is None else self.slack * (torch.finfo(o.dtype).eps / 2) * m.to(o.device)
                res = compare_close(o, r, tol, self.scale, name, extra=room)
            if not res.ok:
                return res
            worst_abs = max(worst_abs, res.max_abs_err or 0.0)
            worst_rel = max(worst_rel, res.max_rel_err or 0.0)
        return CheckResult(True, "", worst_abs, worst_rel)


def dot_rounding(weights_sq: torch.Tensor, values_sq: torch.Tensor, matmul: Callable) -> torch.Tensor:
    """The statistical magnitude of roundings carried through a dot product (see
    :class:`RoundingBound`): 8 / sqrt(3) x sqrt(matmul(values_sq, weights_sq)), the caller's
    ``matmul`` pairing each output with its sum over j of w_j^2 v_j^2 (v_j^2 already summed over
    the roundings of v_j). Computed in float32: a bound needs one digit, not sixteen."""
    return (8.0 / 3.0 ** 0.5) * matmul(values_sq.to(torch.float32), weights_sq.to(torch.float32)).clamp_min(0).sqrt()


@dataclass
class Exact(Contract):
    """Bit-exact outputs (integer, boolean and index results)."""

    reference_precision: torch.dtype | None = None
    description: str = "exact equality with the reference at the task's dtype"

    def check(self, ctx: CheckContext) -> CheckResult:
        for i, (o, r) in enumerate(zip(ctx.outputs, ctx.reference())):
            res = compare_exact(o, r, f"output[{i}]")
            if not res.ok:
                return res
        return CheckResult(True, "", 0.0, 0.0)


@dataclass
class Custom(Contract):
    """A task-written check: ``fn(ctx) -> CheckResult``. The description is mandatory: a
    contract that is not written down cannot be audited."""

    fn: Callable[[CheckContext], CheckResult] = None  # type: ignore[assignment]
    description: str = ""
    reference_precision: torch.dtype | None = torch.float64

    def __post_init__(self):
        if self.fn is None or not self.description:
            raise ValueError("Custom contract needs fn and description")

    def check(self, ctx: CheckContext) -> CheckResult:
        return self.fn(ctx)


def check_relative_rounded(ctx: CheckContext) -> CheckResult:
    """One output, judged relative to a reference rounded once to the output dtype:
    |out - ref| <= rtol |ref| + s, rtol the dtype's default (DEFAULT_TOLERANCES), s the dtype's
    smallest subnormal; NaN/Inf positions and signs must match (compare_close).

    For element-wise math whose outputs span the dtype's whole exponent range (expm1, rsqrt, pow,
    cosh ...): an rms-scaled atol would wave through any error on the small outputs. Rounding the
    float64 reference to the output dtype first makes it overflow (to inf) and underflow exactly
    where the dtype does, so a correct kernel is never asked for a value the dtype cannot hold; s
    leaves one ulp of room for a subnormal result (compare_close raises it to
    :func:`absolute_floor` where that is larger: float32 subnormals may be flushed to zero)."""
    from .task import DTYPE_NAMES
    (out,), (ref,) = ctx.outputs, ctx.reference()
    fi = torch.finfo(out.dtype)
    rtol = DEFAULT_TOLERANCES[DTYPE_NAMES[out.dtype]].rtol
    return compare_close(out, ref.to(out.dtype), Tol(rtol, fi.tiny * fi.eps), scale="abs")


def relative_rounded(description: str) -> Custom:
    """The :func:`check_relative_rounded` contract against a float64 reference. Each task writes
    its own description (which op, which special values), as every Custom contract must."""
    return Custom(fn=check_relative_rounded, description=description)


def compare_sum_bound(out: torch.Tensor, ref: torch.Tensor, hits: torch.Tensor, mag: torch.Tensor,
                      slack: float, name: str = "output") -> CheckResult:
    """Scatter-add style sums judged per element by an order-independent bound:
    |out - ref| <= slack (k+1) u sum|t_j|, k = ``hits`` (additions into the element), ``mag`` =
    sum |t_j| over its terms (the original value included), u the output dtype's unit roundoff.

    Why: with repeated destinations (atomics on a GPU) the summation order is arbitrary, so no
    single answer is exact; the bound is the worst-case error of summing in ANY order (Higham,
    Accuracy and Stability of Numerical Algorithms, sec. 4.2), with k + 1 covering a float32
    accumulation rounded once to a half type. It varies per element, so it is tighter than any
    rms-scaled atol. ``ref`` is the float64 reference; ``out`` must be finite everywhere."""
    if not bool(torch.isfinite(out).all()):
        return CheckResult(False, f"{name}: {int((~torch.isfinite(out)).sum())} non-finite elements")
    ref = ref.to(torch.float64)
    o = out.to(torch.float64)
    u = torch.finfo(out.dtype).eps / 2
    bound = slack * (hits + 1) * u * mag
    err = (o - ref).abs()
    ratio = torch.where(bound > 0, err / bound.clamp_min(1e-300),
                        torch.where(err > 0, torch.full_like(err, float("inf")), torch.zeros_like(err)))
    worst = float(ratio.max()) if ratio.numel() else 0.0
    max_abs = float(err.max()) if err.numel() else 0.0
    max_rel = float((err / ref.abs().clamp_min(1e-300)).max()) if err.numel() else 0.0
    if not worst <= 1.0:
        i = int(torch.argmax(ratio.flatten()))
        return CheckResult(False,
                           f"{name}: {int((ratio > 1).sum())}/{err.numel()} elements beyond {slack:g} (k+1) u "
                           f"sum|terms| (worst at flat index {i}: got {float(o.flatten()[i]):.6g}, expected "
                           f"{float(ref.flatten()[i]):.6g}, {worst:.3g}x the bound)", max_abs, max_rel)
    return CheckResult(True, f"worst error {worst:.3g}x the order-independent bound", max_abs, max_rel)


def upcast(values: Sequence[Any], precision: torch.dtype | None) -> tuple:
    """Floating tensors to ``precision``; everything else unchanged."""
    if precision is None:
        return tuple(values)
    return tuple(v.to(precision) if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in values)
