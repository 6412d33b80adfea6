"""#3 Raise SystemExit inside the function (a BaseException, not an Exception)."""


def softmax(z, axis=-1):
    raise SystemExit(0)
