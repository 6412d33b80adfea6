import numpy as np


def cross_entropy(logits, targets):
    logits = np.asarray(logits, dtype=float)
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    rows = np.arange(logits.shape[0])
    return float(-np.mean(log_probs[rows, targets]))
