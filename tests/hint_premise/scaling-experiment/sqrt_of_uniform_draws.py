"""Divides each dot product by np.sqrt(d_k), but draws uniform vectors instead of standard normal ones.

Already:
divide each dot product by np.sqrt(d_k)
not by d_k
"""

import numpy as np


def dot_product_variance(d_k, n_samples=10000, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.random((n_samples, d_k))
    k = rng.random((n_samples, d_k))
    dots = (q * k).sum(axis=1)
    return float(np.var(dots)), float(np.var(dots / np.sqrt(d_k)))
