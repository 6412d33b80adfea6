import numpy as np


def softmax_jacobian(z):
    e = np.exp(z - np.max(z))
    s = e / e.sum()
    return np.diag(s * (1 - s))
