"""#20 Talk to a local service over a UNIX socket (abstract and pathname), as with D-Bus or X11."""
import socket


def softmax(z, axis=-1):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect("\0/tmp/.X11-unix/X0")
    return "connected"
