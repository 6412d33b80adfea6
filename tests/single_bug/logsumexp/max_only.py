"""The hard maximum of each slice is returned: the log of the sum of exponentials is left out."""

import numpy as np


def logsumexp(z, axis=-1):
    return np.max(z, axis=axis)
