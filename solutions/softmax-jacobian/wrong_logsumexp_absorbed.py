import numpy as np


def softmax_jacobian(z):
    z = np.asarray(z, dtype=float)
    peak = z.max()
    log_total = peak + np.log(np.sum(np.exp(z - peak)))
    s = np.exp(z - log_total)
    return np.einsum("i,ij->ij", s, np.eye(s.size)) - np.einsum("i,j->ij", s, s)
