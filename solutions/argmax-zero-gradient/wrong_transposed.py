import numpy as np


def numerical_jacobian(f, z, h=1e-5):
    z = np.asarray(z, dtype=float)
    rows = []
    for j in range(z.size):
        step = np.zeros_like(z)
        step[j] = h
        rows.append((f(z + step) - f(z - step)) / (2 * h))
    return np.array(rows)
