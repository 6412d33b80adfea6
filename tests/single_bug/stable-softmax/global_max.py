"""The maximum of the whole array is subtracted instead of each slice's."""

import numpy as np


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    peak = np.max(z)
    weights = np.exp(z - peak)
    return weights / np.sum(weights, axis=axis, keepdims=True)
