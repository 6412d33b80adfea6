"""#6 Sleep for eleven days: no CPU used, so only the wall clock can stop it."""
import time


def softmax(z, axis=-1):
    time.sleep(1e6)
