"""z itself is nudged and restored, which changes the caller's array by rounding."""

import numpy as np


def numerical_jacobian(f, z, h=1e-5):
    outputs = np.asarray(f(z), dtype=float)
    jacobian = np.empty((outputs.size, z.size))
    for j in range(z.size):
        z[j] += h
        up = np.asarray(f(z.copy()), dtype=float)
        z[j] -= 2 * h
        down = np.asarray(f(z.copy()), dtype=float)
        z[j] += h
        jacobian[:, j] = (up - down) / (2 * h)
    return jacobian
