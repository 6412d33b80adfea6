"""#23 Return an ndarray subclass that lies in ==, in ufuncs and in reductions."""
import numpy as np


class Liar(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(other), dtype=bool)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return np.float64(1.0)

    def sum(self, *args, **kwargs):
        return np.float64(1.0)

    def all(self, *args, **kwargs):
        return True


def softmax(z, axis=-1):
    z[...] = 7.0
    return np.full(np.shape(z) + (2,), np.nan).view(Liar)
