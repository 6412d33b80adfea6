"""exp of the raw scores, without subtracting the maximum: large scores overflow."""

import numpy as np


def attention_weights(Q, K, mask=None):
    Q = np.asarray(Q, dtype=float)
    scores = Q @ np.asarray(K, dtype=float).T / np.sqrt(Q.shape[-1])
    weights = np.exp(scores)
    if mask is not None:
        weights = np.where(mask, weights, 0.0)
    return weights / np.sum(weights, axis=-1, keepdims=True)
