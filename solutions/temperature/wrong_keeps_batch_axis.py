import numpy as np


def softmax_with_temperature(z, T):
    if T <= 0:
        raise ValueError("T must be positive")
    scaled = np.atleast_2d(z) / T
    weights = np.exp(scaled - np.max(scaled, axis=1, keepdims=True))
    return weights / np.sum(weights, axis=1, keepdims=True)
