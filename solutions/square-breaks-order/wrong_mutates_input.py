import numpy as np


def square_normalise(z):
    z **= 2
    return z / z.sum()


def order_counterexample():
    return np.array([1.5, 0.0, -2.5]), 0, 2
