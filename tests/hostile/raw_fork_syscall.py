"""#9 Fork through a raw syscall (57 on x86_64, clone(SIGCHLD) on aarch64) via ctypes, past any Python-level check."""
import ctypes
import os
import platform

libc = ctypes.CDLL(None, use_errno=True)


def softmax(z, axis=-1):
    if platform.machine() == "x86_64":
        pid = libc.syscall(57)
    else:
        pid = libc.syscall(220, 17, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    if pid < 0:
        err = ctypes.get_errno()
        raise OSError(err, "raw fork failed: " + os.strerror(err))
    return "forked"
