import numpy as np


def softmax_with_temperature(z, T):
    if T == 0:
        raise ValueError("T must not be zero")
    scaled = z / T
    weights = np.exp(scaled - np.max(scaled))
    return weights / np.sum(weights)
