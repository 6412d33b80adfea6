"""#35 As root: raise the CPU limit, become another user, chroot, signal init, mount a filesystem."""
import ctypes
import os
import resource

libc = ctypes.CDLL(None, use_errno=True)


def softmax(z, axis=-1):
    first = None
    attempts = [
        lambda: resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY)),
        lambda: os.setuid(12345),
        lambda: os.chroot("/"),
        lambda: os.kill(1, 0),
    ]
    for attempt in attempts:
        try:
            attempt()
        except (OSError, ValueError) as exc:
            first = first or exc
    if libc.mount(b"none", b"/mnt", b"tmpfs", 0, None) != 0 and first is None:
        first = PermissionError(ctypes.get_errno(), "mount refused")
    if first:
        raise first
    return "root"
