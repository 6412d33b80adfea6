import numpy as np


def attention_weights(Q, K, mask=None):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    shifted = scores - np.max(scores, axis=-1, keepdims=True)
    if mask is not None:
        shifted = np.where(mask, shifted, -np.inf)
    weights = np.exp(shifted)
    return weights / np.sum(weights, axis=-1, keepdims=True)
