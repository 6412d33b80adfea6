"""Write frames with huge length prefixes straight to the grader's pipe, and stream their payload.

A length prefix just under the largest frame, for a header and for an
array, followed by the bytes it announces: the grader must refuse the frame
on its prefix, before it reads (and buffers) what follows (issue 16).
"""
import os
import struct

HEADER = b'{"op":"result","index":0,"ok":true,"kind":"single","types":["ndarray"],"values":1,"blobs":1}'
FORGERIES = [
    struct.pack(">I", len(HEADER)) + HEADER + struct.pack(">I", 60 << 20) + b"\x00\x01" + struct.pack("<Q", 60 << 17),
    struct.pack(">I", 60 << 20) + b'{"blobs":0,"pad":"',
]
CHUNK = b"\x00" * (1 << 20)
calls = [0]


def softmax(z, axis=-1):
    forged = FORGERIES[calls[0] % len(FORGERIES)]
    calls[0] += 1
    for fd in range(3, 64):
        try:
            os.write(fd, forged)
        except OSError:
            continue
        try:
            os.set_blocking(fd, True)
            for _ in range(60):
                os.write(fd, CHUNK)
        except OSError:
            pass
    return "forged"
