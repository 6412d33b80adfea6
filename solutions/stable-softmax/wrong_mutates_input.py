import numpy as np


def softmax(z, axis=-1):
    z -= np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)
