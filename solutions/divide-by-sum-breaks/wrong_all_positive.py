import numpy as np


def divide_by_sum_counterexample():
    return np.array([1.0, 2.0, 3.0])
