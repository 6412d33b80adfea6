"""outer(s, s) - diag(s): the negative of the Jacobian."""

import numpy as np


def softmax_jacobian(z):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - np.max(z))
    s = e / e.sum()
    return np.outer(s, s) - np.diag(s)
