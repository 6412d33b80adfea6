"""#24 Write forged protocol frames straight to the grader's pipe: a pickle payload, an absurd size, a garbage length."""
import os
import pickle
import struct

CANARY = "__CANARY_DIR__/pickle-ran-in-the-grader"


class Payload:
    def __reduce__(self):
        return (open, (CANARY, "w"))


def _frame(data):
    return struct.pack(">I", len(data)) + data


FORGERIES = [
    _frame(b'{"op":"result","index":0,"ok":true,"kind":"single","types":["ndarray"],"values":1,"blobs":1}')
    + _frame(b"\xff\x01" + struct.pack("<Q", 3) + pickle.dumps(Payload())),
    _frame(b'{"op":"result","index":0,"ok":true,"kind":"single","types":["ndarray"],"values":1,"blobs":1}')
    + _frame(b"\x00\x01" + struct.pack("<Q", 10**11) + b"\x00" * 64),
    b"\xff\xff\xff\xff" + b"garbage" * 100,
    _frame(pickle.dumps(Payload())),
]
calls = [0]


def softmax(z, axis=-1):
    forged = FORGERIES[calls[0] % len(FORGERIES)]
    calls[0] += 1
    for fd in range(3, 64):
        try:
            os.write(fd, forged)
        except OSError:
            pass
    return "forged"
