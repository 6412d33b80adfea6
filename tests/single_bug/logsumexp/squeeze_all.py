"""keepdims=True, then .squeeze() without an axis, which also removes other axes of length 1."""

import numpy as np


def logsumexp(z, axis=-1):
    top = np.max(z, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return (top + np.log(np.sum(np.exp(z - top), axis=axis, keepdims=True))).squeeze()
