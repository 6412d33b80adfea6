"""Masks the scores before the softmax, but inverts the caller's mask in place to do it.

Already:
mask the scores before the softmax
Q /= np.sqrt(d_k)
"""

import numpy as np


def attention_weights(Q, K, mask=None):
    scores = Q @ K.T / np.sqrt(Q.shape[1])
    if mask is not None:
        np.logical_not(mask, out=mask)
        scores = np.where(mask, -np.inf, scores)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
