"""The variance is taken with ddof=d_k, which is infinite once n_samples <= d_k."""

import numpy as np


def dot_product_variance(d_k, n_samples=10000, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    dots = np.einsum("ij,ij->i", q, k)
    return float(np.var(dots, ddof=d_k)), float(np.var(dots / np.sqrt(d_k), ddof=d_k))
