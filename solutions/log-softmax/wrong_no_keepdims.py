import numpy as np


def log_softmax(z, axis=-1):
    peak = np.max(z, axis=axis)
    total = np.sum(np.exp(z - np.max(z, axis=axis, keepdims=True)), axis=axis)
    return z - peak - np.log(total)
