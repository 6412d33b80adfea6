"""Return an answer just under the limit of one answer on every call: allowed one by one, too much together.

The grader holds an exercise's answers until they are judged; their sum is
bounded too (issue 16: 24 answers of 64 MiB once took it to 2.9 GiB).
"""
import numpy as np


def softmax(z, axis=-1):
    return np.ones(131072 - 64)  # 1 MiB of numbers less half a KiB
