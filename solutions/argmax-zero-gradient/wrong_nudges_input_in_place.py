import numpy as np


def numerical_jacobian(f, z, h=1e-5):
    jacobian = np.empty((f(z).size, z.size))
    for j in range(z.size):
        z[j] += h
        up = f(z)
        z[j] -= 2 * h
        down = f(z)
        z[j] += h
        jacobian[:, j] = (up - down) / (2 * h)
    return jacobian
