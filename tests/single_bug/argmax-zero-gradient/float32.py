"""The point is cast to float32 before differencing."""

import numpy as np


def numerical_jacobian(f, z, h=1e-5):
    z = np.asarray(z, dtype=np.float32)
    outputs = np.asarray(f(z), dtype=float)
    jacobian = np.empty((outputs.size, z.size))
    for j in range(z.size):
        step = np.zeros_like(z)
        step[j] = h
        jacobian[:, j] = (np.asarray(f(z + step), dtype=float) - np.asarray(f(z - step), dtype=float)) / (2 * h)
    return jacobian
