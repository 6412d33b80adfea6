"""#7 Ignore SIGTERM and the CPU limit's warning signal, then spin."""
import signal

signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGXCPU, signal.SIG_IGN)


def softmax(z, axis=-1):
    while True:
        pass
