"""Scores are not divided by sqrt(d_k)."""

import numpy as np


def attention_weights(Q, K, mask=None):
    scores = np.asarray(Q, dtype=float) @ np.asarray(K, dtype=float).T
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    return weights / np.sum(weights, axis=-1, keepdims=True)
