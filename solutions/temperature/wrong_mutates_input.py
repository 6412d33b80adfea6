import numpy as np


def softmax_with_temperature(z, T):
    if T <= 0:
        raise ValueError("T must be positive")
    z /= T
    z -= np.max(z)
    weights = np.exp(z)
    return weights / np.sum(weights)
