"""The two variances are returned in the other order, (var_scaled, var_unscaled)."""

import numpy as np


def dot_product_variance(d_k, n_samples=10000, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    dots = (q * k).sum(axis=1)
    return float(np.var(dots / np.sqrt(d_k))), float(np.var(dots))
