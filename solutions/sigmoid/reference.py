import numpy as np


def sigmoid(x):
    x = np.asarray(x, dtype=float)
    # exp(-|x|) is at most 1, so it never overflows; each half of the line uses the form without cancellation.
    small = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + small), small / (1.0 + small))


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    peak = np.max(z, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    weights = np.exp(z - peak)
    return weights / np.sum(weights, axis=axis, keepdims=True)
