import numpy as np


def square_normalise(z):
    return z**2 / np.sum(z)


def order_counterexample():
    return np.array([1.5, 0.0, -2.5]), 0, 2
