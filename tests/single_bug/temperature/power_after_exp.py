"""softmax(z) ** (1 / T) renormalised: right on paper, but exp underflows first."""

import numpy as np


def softmax_with_temperature(z, T):
    if not T > 0:
        raise ValueError(f"the temperature must be positive, got T={T!r}")
    z = np.asarray(z, dtype=float)
    e = np.exp(z - np.max(z))
    p = (e / e.sum()) ** (1 / T)
    return p / p.sum()
