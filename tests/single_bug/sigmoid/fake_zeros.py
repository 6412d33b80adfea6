"""Not a computation: zeros."""

import numpy as np


def sigmoid(x):
    return np.zeros(np.shape(x))
