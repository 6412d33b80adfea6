"""Q @ K.T is computed in float32 and only the softmax in float64, so the weights carry float32's rounding."""

import numpy as np


def attention_weights(Q, K, mask=None):
    q = np.asarray(Q, dtype=np.float32)
    k = np.asarray(K, dtype=np.float32)
    scores = (q @ k.T / np.float32(np.sqrt(q.shape[-1]))).astype(np.float64)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    return weights / np.sum(weights, axis=-1, keepdims=True)
