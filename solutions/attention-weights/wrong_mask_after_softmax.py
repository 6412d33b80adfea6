import numpy as np


def attention_weights(Q, K, mask=None):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    weights = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    weights = weights / np.sum(weights, axis=-1, keepdims=True)
    if mask is not None:
        weights = weights * mask
    return weights
