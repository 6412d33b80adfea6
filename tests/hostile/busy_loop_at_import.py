"""#4 Spin forever while the file is being imported."""
while True:
    pass


def softmax(z, axis=-1):
    return z
