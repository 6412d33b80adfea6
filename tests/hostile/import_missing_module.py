"""#28 Import a helper library that no machine has: the reason must not depend on what is installed."""
import softmax_answers_from_the_internet  # noqa: F401


def softmax(z, axis=-1):
    return softmax_answers_from_the_internet.softmax(z, axis=axis)
