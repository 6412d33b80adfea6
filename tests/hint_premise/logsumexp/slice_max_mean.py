"""Shifts by each slice's maximum and adds it back, but averages the exponentials instead of summing them.

Already:
not the maximum of the whole array
with m the maximum of each slice
subtract each slice's maximum before exponentiating
"""

import numpy as np


def logsumexp(z, axis=-1):
    z = np.asarray(z, dtype=float)
    m = np.max(z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out = m + np.log(np.mean(np.exp(z - m), axis=axis, keepdims=True))
    return np.squeeze(out, axis=axis)
