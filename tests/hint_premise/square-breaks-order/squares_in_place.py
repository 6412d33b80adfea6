"""Squares every score and divides by the sum of the squares, but squares the caller's array in place.

Already:
square every score, then divide by the sum of the squares
divide by the sum of the squares
"""

import numpy as np


def square_normalise(z):
    z **= 2
    return z / z.sum()


def order_counterexample():
    return np.array([1.0, -2.0]), 0, 1
