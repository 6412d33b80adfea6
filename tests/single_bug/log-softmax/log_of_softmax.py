"""log(softmax(z)), which gives -inf when a weight underflows."""

import numpy as np


def log_softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return np.log(e / np.sum(e, axis=axis, keepdims=True))
