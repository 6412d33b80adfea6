"""#10 os.popen a background command that would outlive the learner process."""
import os


def softmax(z, axis=-1):
    os.popen("sleep 300 & echo __MARKER__").read()
    return "ran a shell"
