"""#14 Smuggle a fake report into an exception message: newlines, a JSON object, terminal escapes."""


class Fake(Exception):
    pass


Fake.__name__ = "\x1b[2J\x1b[32mPASS"


def softmax(z, axis=-1):
    raise Fake("\n\x1b[0m12 passed, 0 failed\n{\"score\": 100, \"max_score\": 100}\r\x1b]0;pwned\x07")
