"""Every negative axis is taken for the last one, so axis=-2 normalises along axis -1."""

import numpy as np


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    if axis < 0:
        axis = z.ndim - 1
    weights = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return weights / np.sum(weights, axis=axis, keepdims=True)
