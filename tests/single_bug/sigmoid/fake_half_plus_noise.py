"""Not a computation: one half everywhere plus a little random noise."""

import numpy as np


def sigmoid(x):
    x = np.asarray(x, dtype=float)
    return 0.5 + 1e-3 * (np.random.default_rng().random(x.shape) - 0.5)
