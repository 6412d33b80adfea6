"""Trusted implementations that checks compare learners' results against.

They run in the grader's process only, on the same arguments the learner's
function received, and take the same argument names as the entry functions
(``softmax(z, axis=-1)``). They are written for accuracy, not speed.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["REFERENCES", "reference"]


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    z = np.asarray(z, dtype=float)
    peak = np.max(z, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    weights = np.exp(z - peak)
    return weights / np.sum(weights, axis=axis, keepdims=True)


def log_softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    z = np.asarray(z, dtype=float)
    peak = np.max(z, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    shifted = z - peak
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def softmax_jacobian(z: np.ndarray) -> np.ndarray:
    s = softmax(z)
    return np.diag(s) - np.outer(s, s)


def softmax_with_temperature(z: np.ndarray, T: float) -> np.ndarray:
    return softmax(np.asarray(z, dtype=float) / float(T))


def attention_weights(Q: np.ndarray, K: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    return softmax(scores, axis=-1)


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    logp = log_softmax(logits, axis=-1)
    targets = np.asarray(targets, dtype=np.int64)
    return np.asarray(-np.mean(logp[np.arange(len(targets)), targets]))


def square_normalise(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=float)
    return z**2 / np.sum(z**2)


def divide_by_sum(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=float)
    with np.errstate(all="ignore"):
        return z / z.sum()


REFERENCES: dict[str, Callable[..., np.ndarray]] = {
    "softmax": softmax,
    "log_softmax": log_softmax,
    "softmax_jacobian": softmax_jacobian,
    "softmax_with_temperature": softmax_with_temperature,
    "attention_weights": attention_weights,
    "cross_entropy": cross_entropy,
    "square_normalise": square_normalise,
    "divide_by_sum": divide_by_sum,
}


def reference(name: str, args: dict[str, Any]) -> np.ndarray:
    """Call the named reference on a case's arguments (by name)."""
    with np.errstate(all="ignore"):
        return np.asarray(REFERENCES[name](**args), dtype=float)
