"""The weights are divided by T after the softmax instead of the scores before it."""

import numpy as np


def softmax_with_temperature(z, T):
    if not T > 0:
        raise ValueError(f"the temperature must be positive, got T={T!r}")
    z = np.asarray(z, dtype=float)
    weights = np.exp(z - np.max(z))
    return weights / np.sum(weights) / T
