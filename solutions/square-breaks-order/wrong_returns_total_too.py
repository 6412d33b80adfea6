import numpy as np


def square_normalise(z):
    squares = z**2
    total = squares.sum()
    return squares / total, total


def order_counterexample():
    return np.array([1.5, 0.0, -2.5]), 0, 2
