import numpy as np


def logsumexp(z, axis=-1):
    z = np.asarray(z, dtype=float)
    peak = np.max(z)
    if not np.isfinite(peak):
        peak = 0.0
    return peak + np.log(np.sum(np.exp(z - peak), axis=axis))
