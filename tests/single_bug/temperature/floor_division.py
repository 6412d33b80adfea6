"""Divides the scores by T with floor division, z // T, which rounds each quotient down."""

import numpy as np


def softmax_with_temperature(z, T):
    if T <= 0:
        raise ValueError("T must be positive")
    scaled = np.asarray(z, dtype=float) // T
    e = np.exp(scaled - scaled.max())
    return e / e.sum()
