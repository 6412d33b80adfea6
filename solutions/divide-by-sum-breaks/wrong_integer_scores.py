import numpy as np


def divide_by_sum_counterexample():
    return np.array([5, -4])
