import numpy as np


def attention_weights(Q, K, mask=None):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    return weights / np.sum(weights, axis=-1, keepdims=True)
