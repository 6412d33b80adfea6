"""#8 Ask numpy for 80 GB."""
import numpy as np


def softmax(z, axis=-1):
    return np.ones(10**10) * np.sum(z)
