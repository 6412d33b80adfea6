"""Squares in place, changing the caller's array."""

import numpy as np


def square_normalise(z):
    z **= 2
    return z / z.sum()


def order_counterexample():
    return np.array([2.0, -4.0]), 0, 1
