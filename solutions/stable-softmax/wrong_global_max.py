import numpy as np


def softmax(z, axis=-1):
    e = np.exp(z - np.max(z))
    return e / e.sum(axis=axis, keepdims=True)
