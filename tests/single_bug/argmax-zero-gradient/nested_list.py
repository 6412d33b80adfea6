"""The Jacobian is built as a nested Python list and returned as one, not as an array."""

import numpy as np


def numerical_jacobian(f, z, h=1e-5):
    z = np.asarray(z, dtype=float)
    columns = []
    for j in range(z.size):
        step = np.zeros_like(z)
        step[j] = h
        columns.append((np.asarray(f(z + step)) - np.asarray(f(z - step))) / (2 * h))
    return [[float(column[i]) for column in columns] for i in range(len(columns[0]))]
