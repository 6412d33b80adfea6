import numpy as np


def divide_by_sum_counterexample():
    return np.array([1.0, np.inf, -2.0])
