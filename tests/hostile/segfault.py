"""#27 Crash the interpreter through ctypes."""
import ctypes


def softmax(z, axis=-1):
    return ctypes.string_at(0)
