import numpy as np


def logsumexp(z, axis=-1):
    peak = np.max(z, axis=axis, keepdims=True)
    total = np.sum(np.exp(z - peak), axis=axis, keepdims=True)
    return np.squeeze(peak + np.log(total), axis=axis)
