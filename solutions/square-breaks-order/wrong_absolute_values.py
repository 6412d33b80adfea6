import numpy as np


def square_normalise(z):
    return np.abs(z) / np.sum(np.abs(z))


def order_counterexample():
    return np.array([1.5, 0.0, -2.5]), 0, 2
