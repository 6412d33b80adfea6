import numpy as np


def softmax_jacobian(z):
    z -= np.max(z)
    s = np.exp(z) / np.sum(np.exp(z))
    return np.diag(s) - np.outer(s, s)
