"""1 / (1 + exp(-x)) with the overflow warning silenced: exp(-x) still overflows and the tiny values are lost."""

import numpy as np


def sigmoid(x):
    # The warning is silenced, but exp(-x) still overflows to inf and the tiny values are lost.
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))
