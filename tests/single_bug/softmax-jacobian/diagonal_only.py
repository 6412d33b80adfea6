"""Only the diagonal s(1 - s) is kept."""

import numpy as np


def softmax_jacobian(z):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - np.max(z))
    s = e / e.sum()
    return np.diag(s * (1 - s))
