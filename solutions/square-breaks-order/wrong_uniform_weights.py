import numpy as np


def square_normalise(z):
    # Equal weights whatever the scores: they are non-negative and sum to 1, but nothing is computed from z.
    return np.full(np.shape(z), 1.0 / np.size(z))


def order_counterexample():
    return np.array([2.0, -4.0]), 0, 1
