"""A planted class for the similarity tests: disguised copies, a pair sharing wrong outputs, honest look-alikes.

Every learner's file starts from the handout's stubs. ``ana``/``ben`` and
``cleo``/``dan`` are copies, the second of each renamed, reordered, with its
comments, docstrings and layout changed. ``eve`` and ``finn`` wrote their
own code but give the same rare wrong values at hidden inputs. ``hal``,
``ivy``, ``jon``, ``kim``, ``lea`` and ``max`` solved softmax the same short
way, as honest learners do; ``ned``, ``ora`` and ``pia`` wrote solutions of
their own.
"""

from __future__ import annotations

from grader.batch.similarity import WrongOutput

STUB = '''"""stable-softmax: Softmax that does not overflow."""

import numpy as np


def softmax(z, axis=-1):
    """Return the weights."""
    raise NotImplementedError('write softmax')


def log_softmax(z, axis=-1):
    """Return the log-weights."""
    raise NotImplementedError('write log_softmax')


def softmax_jacobian(z):
    """Return the Jacobian."""
    raise NotImplementedError('write softmax_jacobian')
'''

ANA = """import numpy as np

# shift by the row maximum so that exp never overflows
def _shift(z, axis):
    top = np.max(z, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    return z - top


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    shifted = _shift(z, axis)
    e = np.exp(shifted)
    total = np.sum(e, axis=axis, keepdims=True)
    return e / total


def log_softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    shifted = _shift(z, axis)
    lse = np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return shifted - lse


def softmax_jacobian(z):
    s = softmax(np.asarray(z, dtype=float).ravel())
    jac = -np.outer(s, s)
    for i in range(s.size):
        jac[i, i] += s[i]
    return jac
"""

BEN = '''"""My softmax homework."""
import numpy as np


def softmax_jacobian(vector):
    """The Jacobian of softmax."""
    probs = softmax(np.asarray(vector, dtype=float).ravel())
    result = -np.outer(probs, probs)
    for k in range(probs.size):  # the diagonal
        result[k, k] += probs[k]
    return result


def log_softmax(scores, axis=-1):
    scores = np.asarray(scores, dtype=float)
    moved = minus_peak(scores, axis)
    log_total = np.log(
        np.sum(np.exp(moved), axis=axis, keepdims=True,)
    )
    return moved - log_total


def minus_peak(values, axis):
    # subtract the largest value, for stability
    peak = np.max(values, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 1.5)
    return values - peak


def softmax(scores, axis=-1):
    scores = np.asarray(scores, dtype=float)
    moved = minus_peak(scores, axis)
    expd = np.exp(moved)
    denom = np.sum(expd, axis=axis, keepdims=True)
    return expd / denom
'''

CLEO = '''import numpy as np


def softmax(z, axis=-1):
    arr = np.array(z, dtype=np.float64, copy=True)
    moved = np.moveaxis(arr, axis, -1)
    out = np.empty_like(moved)
    for index in np.ndindex(moved.shape[:-1]):
        row = moved[index]
        finite = row[np.isfinite(row)]
        peak = finite.max() if finite.size else 0.0
        weights = np.exp(row - peak)
        out[index] = weights / weights.sum()
    return np.moveaxis(out, -1, axis)


def softmax_jacobian(z):
    s = softmax(z)
    n = len(s)
    jac = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            jac[i, j] = s[i] * ((1.0 if i == j else 0.0) - s[j])
    return jac


def log_softmax(z, axis=-1):
    """Return the log-weights."""
    raise NotImplementedError('write log_softmax')
'''

DAN = '''import numpy as np


def log_softmax(z, axis=-1):
    """Return the log-weights."""
    raise NotImplementedError('write log_softmax')


def softmax_jacobian(x):
    # d s_i / d x_j = s_i (delta_ij - s_j)
    p = softmax(x)
    size = len(p)
    m = np.zeros((size, size))
    for a in range(size):
        for b in range(size):
            m[a, b] = p[a] * ((1.0 if a == b else 0.0) - p[b])
    return m


def softmax(x, axis=-1):
    data = np.array(x, dtype=np.float64, copy=True)
    last = np.moveaxis(data, axis, -1)
    result = np.empty_like(last)
    for where in np.ndindex(last.shape[:-1]):
        r = last[where]
        ok = r[np.isfinite(r)]
        biggest = ok.max() if ok.size else 0.0
        w = np.exp(r - biggest)
        result[where] = w / w.sum()
    return np.moveaxis(result, -1, axis)
'''

EVE = '''import numpy as np


def softmax(z, axis=-1):
    z = np.asarray(z, dtype=float)
    return np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True)


def log_softmax(z, axis=-1):
    return np.log(softmax(z, axis))


def softmax_jacobian(z):
    """Return the Jacobian."""
    raise NotImplementedError('write softmax_jacobian')
'''

FINN = '''import math
import numpy as np


def softmax(z, axis=-1):
    values = [math.exp(v) for v in np.ravel(z)]
    total = sum(values)
    return np.reshape([v / total for v in values], np.shape(z))


def log_softmax(z, axis=-1):
    """Return the log-weights."""
    raise NotImplementedError('write log_softmax')


def softmax_jacobian(z):
    """Return the Jacobian."""
    raise NotImplementedError('write softmax_jacobian')
'''

_SIMPLE = '''import numpy as np


def softmax(z, axis=-1):
    {e} = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return {e} / np.sum({e}, axis=axis, keepdims=True)


def log_softmax(z, axis=-1):
    """Return the log-weights."""
    raise NotImplementedError('write log_softmax')


def softmax_jacobian({z}):
    {s} = softmax({z})
    return np.diag({s}) - np.outer({s}, {s})
'''

NED = '''import numpy as np
from scipy.special import logsumexp


def log_softmax(z, axis=-1):
    return z - logsumexp(z, axis=axis, keepdims=True)


def softmax(z, axis=-1):
    return np.exp(log_softmax(z, axis=axis))


def softmax_jacobian(z):
    """Return the Jacobian."""
    raise NotImplementedError('write softmax_jacobian')
'''

ORA = '''import numpy as np


def softmax(z, axis=-1):
    z = np.array(z, dtype=float)
    z -= z.max(axis=axis, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=axis, keepdims=True)
    return z


def log_softmax(z, axis=-1):
    """Return the log-weights."""
    raise NotImplementedError('write log_softmax')


def softmax_jacobian(z):
    s = softmax(z)[:, None]
    return np.diagflat(s) - s @ s.T
'''

PIA = '''import numpy as np


def softmax(z, axis=-1):
    """Return the weights."""
    raise NotImplementedError('write softmax')


def log_softmax(z, axis=-1):
    c = np.max(z, axis=axis, keepdims=True)
    return z - c - np.log(np.exp(z - c).sum(axis=axis, keepdims=True))


def softmax_jacobian(z):
    """Return the Jacobian."""
    raise NotImplementedError('write softmax_jacobian')
'''

HONEST = ("hal", "ivy", "jon", "kim", "lea", "max")
_NAMES = [
    ("e", "z", "s"),
    ("ex", "v", "p"),
    ("w", "x", "q"),
    ("exps", "logits", "sm"),
    ("t", "a", "b"),
    ("u", "y", "r"),
]


def planted_code() -> dict[str, dict[str, str]]:
    """Every learner's files, as ``find_similar`` takes them."""
    code = {"ana": ANA, "ben": BEN, "cleo": CLEO, "dan": DAN, "eve": EVE, "finn": FINN}
    code |= {"ned": NED, "ora": ORA, "pia": PIA}
    for name, (e, z, s) in zip(HONEST, _NAMES, strict=True):
        code[name] = _SIMPLE.format(e=e, z=z, s=s)
    return {name: {"solution.py": text} for name, text in code.items()}


COPIED = {("ana", "ben"), ("cleo", "dan")}
SAME_WRONG_OUTPUTS = ("eve", "finn")


def planted_outputs() -> dict[str, set[WrongOutput]]:
    """Wrong outputs: a rare set ``eve`` and ``finn`` share, and the usual overflow several learners meet."""
    shared = {
        WrongOutput("stable-softmax", "rows-sum-to-one", f"softmax(z=array([{n}00., 1.]))", f"array([nan, {n}.5])")
        for n in (3, 5, 7)
    }
    overflow = WrongOutput("stable-softmax", "no-overflow", "softmax(z=array([1000., 1.]))", "array([nan, 0.])")
    outputs: dict[str, set[WrongOutput]] = {"eve": shared | {overflow}, "finn": set(shared)}
    for name in ("ned", "ora", "hal", "ivy", "pia", "jon", "kim", "lea", "max", "ana", "ben"):
        outputs[name] = {overflow}
    return outputs
