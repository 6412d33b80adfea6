"""Not a computation: uniform weights along the axis."""

import numpy as np


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    return np.ones_like(z) / z.shape[axis]
