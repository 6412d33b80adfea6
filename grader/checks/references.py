"""Trusted implementations that checks compare learners' results against.

They run in the grader's process only, on the same arguments the learner's
function received, and take the same argument names as the entry functions
(``softmax(z, axis=-1)``). They are written for accuracy, not speed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "REFERENCES",
    "numerical_jacobian",
    "reference",
    "trusted_function_jacobian",
    "trusted_function_value",
]


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


def trusted_function_value(fn: Any, z: np.ndarray) -> np.ndarray:
    """What the function ``fn`` (a ``TrustedFunction``) handed to a learner returns at ``z``.

    The parent's copy of ``grader/sandbox/trusted.py``, with the same arithmetic,
    so a central difference taken here reproduces the learner process's one.
    That file is deliberately not imported: it is the child's, read as text.
    """
    z = np.asarray(z, dtype=float)
    if fn.name == "softmax":
        shifted = np.exp(z - np.max(z))
        return shifted / shifted.sum()
    if fn.name == "hard_argmax":
        out = np.zeros_like(z)
        out[int(np.argmax(z))] = 1.0
        return out
    if fn.name == "linear":
        matrix = np.array(fn.arrays[0], dtype=float)
        offset = np.array(fn.arrays[1], dtype=float) if len(fn.arrays) > 1 else np.zeros(matrix.shape[0])
        return matrix @ z + offset
    raise ValueError(f"unknown trusted function {fn.name!r}")


def trusted_function_jacobian(fn: Any, z: np.ndarray) -> np.ndarray:
    """The exact ``(m, n)`` Jacobian of a trusted function at ``z``.

    Hard argmax is piecewise constant, so away from ties its Jacobian is 0.
    """
    z = np.asarray(z, dtype=float)
    if fn.name == "softmax":
        return softmax_jacobian(z)
    if fn.name == "hard_argmax":
        return np.zeros((z.size, z.size))
    if fn.name == "linear":
        return np.array(fn.arrays[0], dtype=float)
    raise ValueError(f"unknown trusted function {fn.name!r}")


def numerical_jacobian(f: Any, z: np.ndarray, h: float = 1e-5) -> np.ndarray:
    """Central differences of a trusted function: column ``j`` is ``(f(z + h e_j) - f(z - h e_j)) / 2h``."""
    z = np.asarray(z, dtype=float)
    columns = []
    for j in range(z.size):
        step = np.zeros_like(z)
        step[j] = h
        columns.append((trusted_function_value(f, z + step) - trusted_function_value(f, z - step)) / (2 * h))
    return np.stack(columns, axis=1) if columns else np.zeros((trusted_function_value(f, z).size, 0))


REFERENCES: dict[str, Callable[..., np.ndarray]] = {
    "softmax": softmax,
    "log_softmax": log_softmax,
    "softmax_jacobian": softmax_jacobian,
    "softmax_with_temperature": softmax_with_temperature,
    "attention_weights": attention_weights,
    "cross_entropy": cross_entropy,
    "square_normalise": square_normalise,
    "divide_by_sum": divide_by_sum,
    "numerical_jacobian": numerical_jacobian,
}


def reference(name: str, args: dict[str, Any], memo: dict[Any, Any] | None = None) -> np.ndarray:
    """Call the named reference on a case's arguments (by name).

    ``memo`` (a case's ``extra`` dict) keeps the result: cases are built once
    per process and every submission is compared with the same values.
    """
    if memo is not None and ("reference", name) in memo:
        return memo[("reference", name)]
    with np.errstate(all="ignore"):
        value = np.asarray(REFERENCES[name](**args), dtype=float)
    value.setflags(write=False)
    if memo is not None:
        memo[("reference", name)] = value
    return value


def close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    """``np.allclose`` for arrays of one shape (NaN never close), without its per-call overhead."""
    with np.errstate(invalid="ignore", over="ignore"):
        return bool(np.all((a == b) | (np.abs(a - b) <= atol + rtol * np.abs(b))))
