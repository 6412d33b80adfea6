"""report.html, as a real browser draws it: both charts laid out, offline.

Needs Chromium (``apt-get install chromium``); skipped with a reason when it
is not installed. ``test_batch_summary`` checks the same charts without a browser.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from batch_helpers import ASSIGNMENT, CORRECT, RIGHT_ANSWERS, WRONG_ANSWERS, make_exercises

from grader.batch import run_batch

pytestmark = pytest.mark.slow

BROWSER = next(
    (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None
)


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert BROWSER is not None
    command = [
        BROWSER,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.skipif(BROWSER is None, reason="Chromium is not installed (apt-get install chromium)")
def test_report_html_charts_render_in_headless_chromium(tmp_path: Path) -> None:
    exercises = make_exercises(tmp_path)
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "full").mkdir()
    (folder / "full" / "a.py").write_text(CORRECT)
    (folder / "full" / "a.yaml").write_text(RIGHT_ANSWERS)
    (folder / "quiz-only.yaml").write_text(WRONG_ANSWERS)
    (folder / "nothing").mkdir()
    out = tmp_path / "out"
    summary = run_batch(folder, assignment=ASSIGNMENT, out=out, jobs=2, exercises_dir=exercises)
    page = (out / "report.html").as_uri()
    dom = _chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", page)
    assert dom.returncode == 0, dom.stderr[-2000:]
    rendered = re.search(r'data-charts-rendered="([^"]*)"', dom.stdout)
    assert rendered is not None, "the page's script did not run"
    checks = len(summary.stats.checks)
    assert rendered.group(1) == f"score-histogram=11 failure-rates={checks}"
    shot = tmp_path / "report.png"
    picture = _chromium(tmp_path, "--window-size=1000,1400", f"--screenshot={shot}", page)
    assert picture.returncode == 0 and shot.stat().st_size > 10_000
