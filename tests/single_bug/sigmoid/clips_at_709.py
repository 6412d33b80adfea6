"""x is clipped to [-709, 709], just inside the overflow, which still loses sigmoid(-710)."""

import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.clip(x, -709.0, 709.0)))
