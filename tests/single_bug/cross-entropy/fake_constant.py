"""Not a computation: a constant loss."""


def cross_entropy(logits, targets):
    return 1.0
