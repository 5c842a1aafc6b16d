"""Per-row KL divergence between two categorical distributions given as logits, the fused
distillation / RLHF-penalty kernel (two log-softmaxes and the weighted difference in one pass).

  P = softmax(target_logits[n]) (the teacher / reference policy), Q = softmax(logits[n])
  kl[n] = sum_v P_v * (log P_v - log Q_v)      (KL(P || Q); F.kl_div(log Q, log P, log_target=True))
Output float32 [N] whatever the logits dtype; arithmetic float32 or wider, the logits used as
given (no rounding of intermediates to the logits dtype). Judged against the float64 computation
with |kl - kl_ref| <= 1e-4 + 1e-4 |kl_ref| (nats, absolute: see TOLERANCES).
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose, Tol
from mkbench.taskkit import itemsize, randn, uniform

# Tolerance, derived. A float32 kernel's error in kl is dominated by its error in the two
# log-sum-exps: an error c in logsumexp(logits) shifts every log Q_v by -c and kl by +c at full
# weight, whatever kl's size, so the bound is absolute (in nats), not relative to rms(kl). That
# error depends on the summation order over V: ~u log2(V) for a tree reduction, but a per-lane
# sequential sum drops tail terms smaller than half an ulp of the running sum. Measured on CPU
# (torch's float32 log_softmax, 384 rows per size over 3 seeds): max |err| = 8.5e-7 nats at
# V = 1000 and 3001, 2.9e-5 nats at V = 128256 (the large shape's vocabulary). The default
# (1e-5 x rms(kl), rms ~0.5) would fail that; 1e-4 nats absolute leaves 3.5x over it, while the
# same computation on logits rounded to bfloat16 errs by a median 5e-4 and a max 1e-2 .. 3e-2 nats
# per set (the bf16_compute control is rejected). rtol 1e-4 as usual. The output is float32 for
# every input dtype, so this is the only tolerance used.
TOLERANCES = {"float32": Tol(rtol=1e-4, atol=1e-4)}


def reference(logits, target_logits):
    compute = torch.promote_types(logits.dtype, torch.float32)
    log_q = torch.log_softmax(logits.to(compute), dim=-1)
    log_p = torch.log_softmax(target_logits.to(compute), dim=-1)
    return (log_p.exp() * (log_p - log_q)).sum(dim=-1)


def make_inputs(shape, dtype, gen):
    n, v = shape["N"], shape["V"]
    # Teacher rows of different peakedness (logit std 0.75 .. 3), with a few strongly preferred
    # tokens but not so peaked that P and Q put all their mass on one token (KL ~ 0).
    spread = torch.exp2(randn(gen, (n, 1), torch.float32, scale=0.5)) * 1.5
    teacher = randn(gen, (n, v), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=3.0) * spread
    # The student differs from the teacher by per-row noise of std 0.3 .. 1.5 (KL ~ sigma^2 / 2),
    # and each side has its own row offset (a kernel must shift each by its own max).
    sigma = uniform(gen, (n, 1), torch.float32, 0.3, 1.5)
    student = teacher + sigma * randn(gen, (n, v), torch.float32, scale=1.0)
    student = student + randn(gen, (n, 1), torch.float32, scale=5.0, offset=1.0)
    teacher = teacher + randn(gen, (n, 1), torch.float32, scale=5.0, offset=-1.0)
    return (student.to(dtype), teacher.to(dtype))


def flops(shape):
    return 12.0 * shape["N"] * shape["V"]  # two max/exp/sum passes, the log-prob difference and weighted sum


def nbytes_moved(shape, dtype):
    n, v = shape["N"], shape["V"]
    return float(2 * n * v * itemsize(dtype) + n * 4)


TASK = Task(
    name="kl_div_logits",
    category="fusion",
    description="per-row KL(P || Q) with P = softmax(target_logits), Q = softmax(logits), both [N, V]: two fused log-softmaxes and the weighted difference; float32 [N] output",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 64, "V": 1000}, "small"),
        Shape("awkward", {"N": 33, "V": 3001}, "awkward"),
        # Distillation over the Llama-3 vocabulary (128256), 1024 tokens: 1 GiB of float32 logits read.
        Shape("large", {"N": 1024, "V": 128256}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES, scale="abs"),
    flops=flops,
    bytes=nbytes_moved,
)
