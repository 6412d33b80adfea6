import numpy as np


def divide_by_sum_counterexample():
    # The sum is 1.0, so the weights are the scores themselves: -2 is a negative weight and 3 is above 1.
    return np.array([3.0, -2.0])


def divide_by_sum(z):
    # The method the counterexample breaks: the grader applies it to the learner's scores with this code.
    z = np.asarray(z, dtype=float)
    with np.errstate(all="ignore"):
        return z / z.sum()
