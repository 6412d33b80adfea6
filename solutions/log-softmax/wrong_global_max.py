import numpy as np


def log_softmax(z, axis=-1):
    shifted = z - np.max(z)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
