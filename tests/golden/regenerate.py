"""Rewrite the golden files of ``tests/test_report_formats.py``.

Run from the repository root after an intended change to a report format::

    python -m tests.golden.regenerate

and review ``git diff tests/golden`` before committing.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def main() -> None:
    spec = importlib.util.spec_from_file_location("test_report_formats", TESTS / "test_report_formats.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for path in module.regenerate():
        print(path.relative_to(TESTS.parent))


if __name__ == "__main__":
    main()
