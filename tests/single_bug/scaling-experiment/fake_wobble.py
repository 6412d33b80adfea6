"""Not a computation: (d_k, 1.0) plus a deterministic wobble of fixed size, nothing drawn."""

import zlib


def dot_product_variance(d_k, n_samples=10000, seed=0):
    code = zlib.crc32(f"{d_k}/{n_samples}/{seed}".encode())
    wobble = ((code % 1000) / 1000 - 0.5) * 0.04
    other = (((code // 1000) % 1000) / 1000 - 0.5) * 0.04
    return float(d_k * (1 + wobble)), float(1 + other)
