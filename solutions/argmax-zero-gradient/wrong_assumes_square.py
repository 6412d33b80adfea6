import numpy as np


def numerical_jacobian(f, z, h=1e-5):
    z = np.asarray(z, dtype=float)
    n = len(z)
    jacobian = np.zeros((n, n))
    for j in range(n):
        step = np.zeros(n)
        step[j] = h
        jacobian[:, j] = (f(z + step) - f(z - step)) / (2 * h)
    return jacobian
