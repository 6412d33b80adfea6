"""1 / (1 + exp(-abs(x))) for every x: the x < 0 branch is missing, so sigmoid(-2) comes out as sigmoid(2)."""

import numpy as np


def sigmoid(x):
    x = np.asarray(x, dtype=float)
    return 1.0 / (1.0 + np.exp(-np.abs(x)))
