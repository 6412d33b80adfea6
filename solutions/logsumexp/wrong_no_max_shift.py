import numpy as np


def logsumexp(z, axis=-1):
    return np.log(np.sum(np.exp(z), axis=axis))
