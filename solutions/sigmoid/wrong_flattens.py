import math

import numpy as np


def sigmoid(x):
    values = []
    for v in np.ravel(x):
        if v >= 0:
            values.append(1.0 / (1.0 + math.exp(-v)))
        else:
            values.append(math.exp(v) / (1.0 + math.exp(v)))
    return np.array(values)
