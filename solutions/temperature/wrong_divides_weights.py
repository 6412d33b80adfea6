import numpy as np


def softmax_with_temperature(z, T):
    if T <= 0:
        raise ValueError("T must be positive")
    weights = np.exp(z - np.max(z))
    return weights / np.sum(weights) / T
