import numpy as np


def sigmoid(x):
    negative = x < 0
    np.abs(x, out=x)
    small = np.exp(-x)
    return np.where(negative, small / (1.0 + small), 1.0 / (1.0 + small))
