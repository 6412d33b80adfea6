"""#12 Start a non-daemon thread that never ends (the process cannot exit by itself)."""
import threading
import time


def _forever():
    while True:
        time.sleep(0.01)


def softmax(z, axis=-1):
    threading.Thread(target=_forever).start()
    return "thread started"
