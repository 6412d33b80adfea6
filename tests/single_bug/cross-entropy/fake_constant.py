"""Not a computation: a constant loss."""

import numpy as np


def cross_entropy(logits, targets):
    return 1.0
