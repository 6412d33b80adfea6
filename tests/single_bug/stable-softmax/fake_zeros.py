"""Not a computation: zeros."""

import numpy as np


def softmax(z, axis=-1):
    return np.zeros(np.shape(z))
