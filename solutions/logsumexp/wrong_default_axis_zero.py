import numpy as np


def logsumexp(z, axis=0):
    z = np.asarray(z, dtype=float)
    peak = np.max(z, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    return np.squeeze(peak, axis=axis) + np.log(np.sum(np.exp(z - peak), axis=axis))
