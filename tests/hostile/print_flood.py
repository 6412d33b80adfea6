"""#13 Print 200 MB in 64 KiB writes."""
import sys

CHUNK = "x" * 65536


def softmax(z, axis=-1):
    for _ in range(3200):
        sys.stdout.write(CHUNK)
    return "printed"
