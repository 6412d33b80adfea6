"""Writes 1 / 1 + np.exp(-x), which is 1 + exp(-x): an operator-precedence slip, with no branch at all.

Already:
exp(x) / (1 + exp(x)) is inf / inf
one branch
branches
np.where computes both of its branches
"""

import numpy as np


def sigmoid(x):
    return 1 / 1 + np.exp(-np.asarray(x, dtype=float))
