"""Divides by the square of the sum instead of the sum of the squares."""

import numpy as np


def square_normalise(z):
    z = np.asarray(z, dtype=float)
    return z**2 / z.sum() ** 2


def order_counterexample():
    return np.array([2.0, -4.0]), 0, 1
