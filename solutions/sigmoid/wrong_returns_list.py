import numpy as np


def sigmoid(x):
    x = np.asarray(x, dtype=float)
    small = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + small), small / (1.0 + small)).tolist()
