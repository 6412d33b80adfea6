import numpy as np


def sigmoid(x):
    x = np.asarray(x)
    out = np.empty_like(x)
    small = np.exp(-np.abs(x))
    out[...] = np.where(x >= 0, 1.0 / (1.0 + small), small / (1.0 + small))
    return out
