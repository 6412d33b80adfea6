"""Not a computation: a zero matrix."""

import numpy as np


def softmax_jacobian(z):
    n = np.shape(z)[0]
    return np.zeros((n, n))
