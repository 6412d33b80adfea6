"""Divides by T and subtracts the maximum of z / T, but clamps T at 1e-3.

Already:
divide the scores by T before exponentiating
subtract the maximum of z / T
"""

import numpy as np


def softmax_with_temperature(z, T):
    if T <= 0:
        raise ValueError("T must be positive")
    scaled = np.asarray(z, dtype=float) / max(T, 1e-3)
    e = np.exp(scaled - scaled.max())
    return e / e.sum()
