import numpy as np


def sigmoid(x):
    return 0.5 * (1.0 + np.tanh(np.asarray(x, dtype=float) / 2.0))
