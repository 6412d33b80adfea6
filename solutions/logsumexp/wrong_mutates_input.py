import numpy as np


def logsumexp(z, axis=-1):
    peak = np.max(z, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    z -= peak
    return np.squeeze(peak, axis=axis) + np.log(np.sum(np.exp(z), axis=axis))
