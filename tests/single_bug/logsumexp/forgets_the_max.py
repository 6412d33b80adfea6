"""The maximum is subtracted before exponentiating but never added back."""

import numpy as np


def logsumexp(z, axis=-1):
    z = np.asarray(z, dtype=float)
    top = np.max(z, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(z - top), axis=axis))
