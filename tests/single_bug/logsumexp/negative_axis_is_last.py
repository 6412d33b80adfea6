"""Every negative axis is taken for the last one, so axis=-2 sums along axis -1."""

import numpy as np


def logsumexp(z, axis=-1):
    z = np.asarray(z, dtype=float)
    if axis < 0:
        axis = z.ndim - 1
    peak = np.max(z, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    total = np.sum(np.exp(z - peak), axis=axis, keepdims=True)
    with np.errstate(divide="ignore"):
        return np.squeeze(np.log(total) + peak, axis=axis)
