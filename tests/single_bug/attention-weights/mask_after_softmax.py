"""The mask is applied after the softmax, zeroing weights without renormalising the rest."""

import numpy as np


def attention_weights(Q, K, mask=None):
    Q = np.asarray(Q, dtype=float)
    scores = Q @ np.asarray(K, dtype=float).T / np.sqrt(Q.shape[-1])
    weights = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    weights = weights / np.sum(weights, axis=-1, keepdims=True)
    if mask is not None:
        weights = np.where(mask, weights, 0.0)
    return weights
