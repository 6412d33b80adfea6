"""The central difference is divided by h instead of 2h."""

import numpy as np


def numerical_jacobian(f, z, h=1e-5):
    z = np.asarray(z, dtype=float)
    outputs = np.asarray(f(z), dtype=float)
    jacobian = np.empty((outputs.size, z.size))
    for j in range(z.size):
        step = np.zeros_like(z)
        step[j] = h
        jacobian[:, j] = (np.asarray(f(z + step)) - np.asarray(f(z - step))) / h
    return jacobian
