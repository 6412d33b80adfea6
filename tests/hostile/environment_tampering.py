"""#34 Change sys.path, the working folder and the environment at import, hoping the grader shares them."""
import os
import sys

sys.path.insert(0, "/tmp")
sys.path.append("__GRADER__")
os.chdir("/")
os.environ["PYTHONPATH"] = "/tmp"
os.environ["GRADER_SANDBOX_LAYERS"] = "none"
os.environ["HOME"] = "/tmp"


def softmax(z, axis=-1):
    return "tampered"
