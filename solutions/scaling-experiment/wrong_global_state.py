import numpy as np


def dot_product_variance(d_k, n_samples=10000, seed=0):
    q = np.random.normal(size=(n_samples, d_k))
    k = np.random.normal(size=(n_samples, d_k))
    dots = np.sum(q * k, axis=1)
    return float(np.var(dots)), float(np.var(dots / np.sqrt(d_k)))
