"""#11 A classic daemon: fork, setsid, fork again, ignore SIGTERM, sleep; the grader must still kill it."""
import ctypes
import os
import signal
import time


def _name_me():
    try:  # PR_SET_NAME: lets the test find the daemon by name in /proc/*/comm
        ctypes.CDLL(None).prctl(15, b"__MARKER__"[:15], 0, 0, 0)
    except Exception:
        pass


def softmax(z, axis=-1):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            _name_me()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            time.sleep(300)
        os._exit(0)
    return "daemon started"
