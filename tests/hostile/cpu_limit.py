"""#5 Burn CPU time (graded with a CPU limit shorter than the wall clock, so the CPU limit stops it)."""


def softmax(z, axis=-1):
    total = 0
    while True:
        total += 1
