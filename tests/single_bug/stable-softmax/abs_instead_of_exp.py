"""abs(z) is normalised instead of exp(z)."""

import numpy as np


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    peak = np.max(z, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    weights = np.abs(z - peak)
    return weights / np.sum(weights, axis=axis, keepdims=True)
