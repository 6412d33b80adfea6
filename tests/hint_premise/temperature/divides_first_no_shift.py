"""Divides the scores by T before exponentiating, but never subtracts a maximum, so a tiny T overflows.

Already:
divide the scores by T before exponentiating
not the weights after it
"""

import numpy as np


def softmax_with_temperature(z, T):
    if T <= 0:
        raise ValueError("T must be positive")
    e = np.exp(np.asarray(z, dtype=float) / T)
    return e / e.sum()
