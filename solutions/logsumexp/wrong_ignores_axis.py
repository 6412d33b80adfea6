import numpy as np


def logsumexp(z, axis=-1):
    z = np.asarray(z, dtype=float)
    peak = np.max(z, axis=-1, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    return np.squeeze(peak, axis=-1) + np.log(np.sum(np.exp(z - peak), axis=-1))
