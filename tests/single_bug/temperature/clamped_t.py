"""T is clamped to at least 0.01 instead of used as given."""

import numpy as np


def softmax_with_temperature(z, T):
    if not T > 0:
        raise ValueError(f"the temperature must be positive, got T={T!r}")
    scaled = np.asarray(z, dtype=float) / max(T, 0.01)
    weights = np.exp(scaled - np.max(scaled))
    return weights / np.sum(weights)
