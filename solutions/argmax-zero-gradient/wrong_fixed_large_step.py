import numpy as np


def numerical_jacobian(f, z, h=1e-5):
    z = np.asarray(z, dtype=float)
    eps = 0.01
    jacobian = np.empty((f(z).size, z.size))
    for j in range(z.size):
        step = np.zeros_like(z)
        step[j] = eps
        jacobian[:, j] = (f(z + step) - f(z - step)) / (2 * eps)
    return jacobian
