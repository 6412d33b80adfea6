"""Writes / 2 * h for / (2 * h), so every entry is the derivative times h squared."""

import numpy as np


def numerical_jacobian(f, z, h=1e-5):
    z = np.asarray(z, dtype=float)
    outputs = np.asarray(f(z), dtype=float)
    jacobian = np.empty((outputs.size, z.size))
    for j in range(z.size):
        step = np.zeros_like(z)
        step[j] = h
        jacobian[:, j] = (np.asarray(f(z + step)) - np.asarray(f(z - step))) / 2 * h
    return jacobian
