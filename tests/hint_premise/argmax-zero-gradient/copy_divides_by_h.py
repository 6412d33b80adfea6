"""Nudges a fresh copy of z for each column, but divides the central difference by h instead of 2h.

Already:
nudge a copy instead
make a fresh copy
"""

import numpy as np


def numerical_jacobian(f, z, h=1e-5):
    z = np.asarray(z, dtype=float)
    columns = []
    for j in range(z.size):
        up, down = z.copy(), z.copy()
        up[j] += h
        down[j] -= h
        columns.append((np.asarray(f(up)) - np.asarray(f(down))) / h)
    return np.stack(columns, axis=1)
