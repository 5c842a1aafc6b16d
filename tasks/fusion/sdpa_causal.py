import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import attention_working_bytes, nbytes, randn

# float32 atol, derived: each output is a softmax-weighted average over up to S keys; exp() of
# logits up to ~35 (std ~1) carries a relative error of about u * |z| (u = 2^-24) per weight, and the
# float32 P V sum adds u * sqrt(S) more, so near-zero outputs are judged by atol alone. Measured on
# CPU at S = 4096 (4 heads of this input distribution): torch's float32 reference and an emulated
# flash kernel (64-key blocks, online softmax rescaling) both reach 0.44x the default bound
# (1e-5 x rms), with max |err| = 3.1e-5 x rms. A GPU kernel's exp (ex2.approx, ~2 ulp) and the
# 16x more heads of the large shape push that tail towards the bound, so atol is 5e-5 x rms
# (the CPU measurement falls to 0.09x). bfloat16 operands, P or outputs still fail (relative
# errors of 2^-9 against rtol 1e-4), and so do TF32 logits (errors of 2^-11 |z|). rtol stays
# 1e-4; half precisions keep their defaults.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(q, k, v, scale):
    # Scores, softmax and the P V product in (at least) float32, as flash attention keeps them;
    # the output is rounded to the input dtype once. One batch entry at a time: the [H, S, S]
    # scores of the large shape take 4.3 GB in float64.
    acc = torch.promote_types(q.dtype, torch.float32)
    n = q.shape[-2]
    causal = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
    out = []
    for i in range(q.shape[0]):
        s = torch.matmul(q[i].to(acc), k[i].to(acc).transpose(-1, -2)) * scale
        p = torch.softmax(s.masked_fill(causal, float("-inf")), dim=-1)
        out.append(torch.matmul(p, v[i].to(acc)).to(q.dtype))
    return torch.stack(out)


def make_inputs(shape, dtype, gen):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    f32 = torch.float32
    # Per-head temperature (0.5..2.5): some heads attend broadly, some to a few keys. Values carry
    # an offset so that averages over many keys are not all near zero.
    temp = randn(gen, (1, h, 1, 1), f32, scale=0.6).abs() + 0.5
    q = (randn(gen, (b, h, s, d), f32, offset=0.1, outliers=1e-3, outlier_scale=6.0) * temp).to(dtype)
    k = randn(gen, (b, h, s, d), dtype, offset=0.2, outliers=1e-3, outlier_scale=6.0)
    v = randn(gen, (b, h, s, d), dtype, offset=0.3, outliers=1e-3, outlier_scale=10.0)
    return (q, k, v, 1.0 / math.sqrt(d))


def flops(shape):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    pairs = s * (s + 1) / 2  # (query, key) pairs under the causal mask
    return b * h * pairs * (4.0 * d + 5.0)  # QK^T and PV (2d each), softmax


def nbytes_moved(shape, dtype):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return float(4 * nbytes((b, h, s, d), dtype))


def working_bytes(shape, dtype):
    # One batch entry's [H, S, S] scores at a time (the reference's loop), several of them at once
    return attention_working_bytes(shape["heads"] * shape["seq"] ** 2, dtype)


TASK = Task(
    name="sdpa_causal",
    category="fusion",
    description="causal scaled dot-product attention O = softmax(Q K^T * scale, keys j > i masked) V, Q/K/V/O "
                "[B, H, S, D]; float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 2, "heads": 4, "seq": 64, "head_dim": 64}, "small"),
        # One sequence of odd length, 3 heads of width 80 (Pythia / phi-2 head size).
        Shape("awkward", {"batch": 1, "heads": 3, "seq": 77, "head_dim": 80}, "awkward"),
        # Llama-3-8B prefill (32 heads of width 128, no GQA here), 2 x 4096 tokens.
        Shape("large", {"batch": 2, "heads": 32, "seq": 4096, "head_dim": 128}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
    working_bytes=working_bytes,
)
