"""The forward difference (f(z + h e_j) - f(z)) / h instead of the central one."""

import numpy as np


def numerical_jacobian(f, z, h=1e-5):
    z = np.asarray(z, dtype=float)
    outputs = np.asarray(f(z), dtype=float)
    jacobian = np.empty((outputs.size, z.size))
    for j in range(z.size):
        step = np.zeros_like(z)
        step[j] = h
        jacobian[:, j] = (np.asarray(f(z + step)) - outputs) / h
    return jacobian
