"""#5 Spin forever inside the function."""


def softmax(z, axis=-1):
    while True:
        pass
