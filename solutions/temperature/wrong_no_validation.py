import numpy as np


def softmax_with_temperature(z, T):
    scaled = z / T
    weights = np.exp(scaled - np.max(scaled))
    return weights / np.sum(weights)
