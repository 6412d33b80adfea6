"""The softmax runs over the queries (axis 0) instead of the keys."""

import numpy as np


def attention_weights(Q, K, mask=None):
    Q = np.asarray(Q, dtype=float)
    scores = Q @ np.asarray(K, dtype=float).T / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - np.max(scores, axis=0, keepdims=True))
    return weights / np.sum(weights, axis=0, keepdims=True)
