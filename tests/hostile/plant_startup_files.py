"""#19 Plant code that every later Python would run: a .pth file, a sitecustomize module, a poisoned .pyc."""
import os
import site
import sys

TARGETS = [os.path.join(d, "__MARKER__.pth") for d in site.getsitepackages() + [site.getusersitepackages()]]
TARGETS += [os.path.join(d, "__MARKER__sitecustomize.py") for d in sys.path if d.endswith("site-packages")]
TARGETS += ["__GRADER__/sandbox/__pycache__/__MARKER__.cpython-311.pyc"]


def softmax(z, axis=-1):
    first = None
    for target in TARGETS:
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "x") as handle:
                handle.write("# harmless comment planted by a hostile test\n")
        except OSError as exc:
            first = first or exc
    if first:
        raise first
    return "planted"
