"""#27 Lift the recursion limit and recurse until the C stack overflows."""
import sys

sys.setrecursionlimit(10**8)


def _down(n):
    return _down(n + 1) + 1


def softmax(z, axis=-1):
    return _down(0)
