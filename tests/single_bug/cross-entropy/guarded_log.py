"""1e-7 is added inside the log, which moves every loss by about 1e-7 and a loss near zero by far more than its size."""

import numpy as np


def cross_entropy(logits, targets):
    logits = np.asarray(logits, dtype=float)
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True) + 1e-7)
    return -np.mean(log_probs[np.arange(len(targets)), targets])
