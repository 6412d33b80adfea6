"""abs(z) is normalised instead of z ** 2."""

import numpy as np


def square_normalise(z):
    a = np.abs(np.asarray(z, dtype=float))
    return a / a.sum()


def order_counterexample():
    return np.array([2.0, -4.0]), 0, 1
