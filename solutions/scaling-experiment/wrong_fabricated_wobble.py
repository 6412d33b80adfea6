import hashlib
import math


def dot_product_variance(d_k, n_samples=10000, seed=0):
    # Looks like a measurement, draws nothing: the true values plus a wobble of about one sampling
    # error at the default size, the same for the same arguments.
    digest = hashlib.sha256(f"{d_k},{n_samples},{seed}".encode()).digest()
    wobble = (digest[0] / 255 - 0.5) * 2 * math.sqrt((2 + 6 / d_k) / 10000)
    other = (digest[1] / 255 - 0.5) * 2 * math.sqrt((2 + 6 / d_k) / 10000)
    return float(d_k * (1 + wobble)), float(1 + other)
