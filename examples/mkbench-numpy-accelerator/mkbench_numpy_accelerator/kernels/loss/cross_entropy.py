"""Per-row cross entropy, reduction='none': logsumexp(row) - row[target], with the row max
subtracted before exp (the task's rows are offset by up to +/-200, where a bare exp overflows)."""

import numpy as np


def kernel_function(logits, target):
    x = logits.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(x - m).sum(axis=1))
    picked = np.take_along_axis(x, target[:, None], axis=1)[:, 0]
    return (lse - picked).astype(logits.dtype)
