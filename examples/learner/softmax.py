"""A learner's submission for the why-softmax lesson (the example that the README grades)."""

import numpy as np


def softmax(z, axis=-1):
    """Softmax along `axis`, shifted by each slice's maximum so exp never overflows."""
    z = np.asarray(z, dtype=float)
    top = np.max(z, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)  # a slice of -inf scores stays as it is
    weights = np.exp(z - top)
    return weights / np.sum(weights, axis=axis, keepdims=True)
