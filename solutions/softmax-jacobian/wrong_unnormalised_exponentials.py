import numpy as np


def softmax_jacobian(z):
    e = np.exp(z)
    total = e.sum()
    return (total * np.diag(e) - np.outer(e, e)) / total**2
