import numpy as np


def square_normalise(z):
    squares = np.asarray(z, dtype=float) ** 2
    return squares / squares.sum()


def order_counterexample():
    # -4 < 2, yet (-4)**2 = 16 > 2**2 = 4: the lower score gets the larger weight.
    return np.array([2.0, -4.0]), 0, 1
