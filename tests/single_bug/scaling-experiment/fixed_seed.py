"""The generator is seeded with 0 whatever seed is passed."""

import numpy as np


def dot_product_variance(d_k, n_samples=10000, seed=0):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    dots = np.einsum("ij,ij->i", q, k)
    return float(np.var(dots)), float(np.var(dots / np.sqrt(d_k)))
