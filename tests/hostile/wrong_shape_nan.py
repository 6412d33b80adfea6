"""#30 Values that slip past careless checks: a (1, n) row that broadcasts, an empty array, NaN."""
import numpy as np


def softmax(z, axis=-1):
    z[...] = 0.0  # and a changed input, so that not even "leaves its input unchanged" holds
    if z.ndim == 1:
        return np.full((1, z.size), np.nan)
    if z.ndim == 2:
        return np.empty((0,))
    return np.full(z.shape + (1,), np.nan)
