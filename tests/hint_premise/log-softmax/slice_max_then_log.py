"""Shifts each slice by its own maximum, then takes the log of probabilities that underflow to 0.

Already:
not the maximum of the whole array
subtract each slice's maximum before exponentiating
"""

import numpy as np


def log_softmax(z, axis=-1):
    shifted = np.asarray(z, dtype=float) - np.max(z, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return np.log(e / np.sum(e, axis=axis, keepdims=True))
