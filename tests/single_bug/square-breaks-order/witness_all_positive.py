"""The counterexample has only positive scores, where squaring keeps the order."""

import numpy as np


def square_normalise(z):
    squares = np.asarray(z, dtype=float) ** 2
    return squares / squares.sum()


def order_counterexample():
    return np.array([1.0, 2.0]), 0, 1
