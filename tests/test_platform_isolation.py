"""The platform scripts in ``grader/export/platforms/`` start every Python isolated: learner files cannot shadow it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(ROOT.glob("grader/export/platforms/*/*.sh"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[path.parent.name for path in SCRIPTS])
def test_every_python_a_platform_script_starts_is_isolated(script: Path) -> None:
    starts = re.findall(r'"\$PYTHON" (\S+)', script.read_text())
    assert starts and all(flag == "-I" for flag in starts), starts
