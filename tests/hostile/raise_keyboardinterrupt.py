"""#3 Raise KeyboardInterrupt inside the function, as if someone pressed Ctrl-C."""


def softmax(z, axis=-1):
    raise KeyboardInterrupt
