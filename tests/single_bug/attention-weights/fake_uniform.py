"""Not a computation: every key gets the same weight."""

import numpy as np


def attention_weights(Q, K, mask=None):
    n_q, n_k = np.shape(Q)[0], np.shape(K)[0]
    weights = np.ones((n_q, n_k))
    if mask is not None:
        weights = np.where(mask, weights, 0.0)
    return weights / weights.sum(axis=-1, keepdims=True)
