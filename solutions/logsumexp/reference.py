import numpy as np


def logsumexp(z, axis=-1):
    z = np.asarray(z, dtype=float)
    peak = np.max(z, axis=axis, keepdims=True)
    finite = np.isfinite(peak)
    # A slice whose maximum is -inf or +inf has that maximum as its answer; shifting it by its own
    # maximum would compute -inf - -inf or inf - inf, which is nan. Other slices shift by their maximum,
    # so every exponential is at most 1 and their sum is at least 1.
    shift = np.where(finite, peak, 0.0)
    total = np.sum(np.exp(np.where(finite, z - shift, -np.inf)), axis=axis, keepdims=True)
    result = np.where(finite, shift + np.log(np.where(finite, total, 1.0)), peak)
    return np.squeeze(result, axis=axis)
