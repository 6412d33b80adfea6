"""report.html, as a real browser draws it: both charts laid out, offline, at any window width, roster sortable.

Needs Chromium (``apt-get install chromium``); skipped with a reason when it
is not installed. ``test_batch_summary`` checks the same charts without a browser.
The width and sorting test drives the browser over its DevTools protocol on a
pipe (``--remote-debugging-pipe``: JSON messages ending in a NUL byte on
descriptors 3 and 4), so it needs no package beyond the standard library.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from batch_helpers import ASSIGNMENT, CORRECT, IGNORES_AXIS, NO_MAX_SHIFT, RIGHT_ANSWERS, WRONG_ANSWERS, make_exercises

from grader.batch import run_batch
from grader.batch.html import SHOWN_CHECKS

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
    # a bar for each check some learner did not pass, most failed first, up to the number the page shows
    failing = min(SHOWN_CHECKS, sum(1 for stat in summary.stats.checks if stat.not_passed))
    assert failing > 0
    assert rendered.group(1) == f"score-histogram=11 failure-rates={failing}"
    shot = tmp_path / "report.png"
    picture = _chromium(tmp_path, "--window-size=1000,1400", f"--screenshot={shot}", page)
    assert picture.returncode == 0 and shot.stat().st_size > 10_000


# Run by a small Python process: the two pipe ends put on descriptors 3 and 4, then the browser in its place.
_ON_THREE_AND_FOUR = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); os.execv(sys.argv[3], sys.argv[3:])"
)


def _above_four(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 5)
    os.close(fd)
    return moved


class _DevTools:
    """A headless Chromium driven over ``--remote-debugging-pipe``: one page, commands answered in order."""

    def __init__(self, tmp_path: Path) -> None:
        assert BROWSER is not None
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        # The child's ends moved to 5 or above, so that putting them on 3 and 4 cannot overwrite one with the other.
        to_browser_read, from_browser_write = (_above_four(fd) for fd in (to_browser_read, from_browser_write))
        command = [
            BROWSER,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            "--remote-debugging-pipe",
            f"--user-data-dir={tmp_path / 'profile-devtools'}",
            "about:blank",
        ]
        # The browser reads commands on descriptor 3 and writes replies on 4.
        self.process = subprocess.Popen(
            [sys.executable, "-c", _ON_THREE_AND_FOUR, str(to_browser_read), str(from_browser_write), *command],
            pass_fds=(to_browser_read, from_browser_write),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next = 0
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:  # events and other replies are skipped: each command waits for its own answer
            while b"\0" not in self._buffer:
                chunk = os.read(self._from_browser, 65536)
                assert chunk, "the browser closed its pipe"
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._next:
                assert "error" not in reply, reply["error"]
                return dict(reply.get("result", {}))

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        return self.send(method, self.session, **params)

    def evaluate(self, expression: str) -> Any:
        found = self.page("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in found, found["exceptionDetails"]
        return found["result"].get("value")

    def open(self, url: str, width: int) -> None:
        self.page("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False)
        self.page("Page.navigate", url=url)
        loaded = (
            "new Promise(r => { const f = () => document.readyState === 'complete' ? r(true) : setTimeout(f, 20);"
            " f(); })"
        )
        assert self.evaluate(loaded) is True

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) at the middle of the element, scrolled into view."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center'}); const b = e.getBoundingClientRect();"
            " return [b.left + b.width / 2, b.top + b.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.page("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except AssertionError:
            pass
        os.close(self._to_browser)
        os.close(self._from_browser)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_NAMES = "Array.from(document.querySelectorAll('#roster tbody tr')).map(r => r.cells[0].textContent)"
_SCORES = "Array.from(document.querySelectorAll('#roster tbody tr')).map(r => r.cells[1].getAttribute('data-key'))"


@pytest.mark.skipif(BROWSER is None, reason="Chromium is not installed (apt-get install chromium)")
def test_report_html_fits_every_window_and_sorts_its_roster(tmp_path: Path) -> None:
    """At 400, 800 and 1400 px the page never scrolls sideways, ids stay whole, and a header click sorts."""
    exercises = make_exercises(tmp_path)
    folder = tmp_path / "class"
    folder.mkdir()
    long_name = "a-learner-with-a-rather-long-hyphenated-folder-name"
    for name, code, answers in (
        ("full", CORRECT, RIGHT_ANSWERS),
        (long_name, NO_MAX_SHIFT, WRONG_ANSWERS),
        ("axis", IGNORES_AXIS, RIGHT_ANSWERS),
    ):
        (folder / name).mkdir()
        (folder / name / "a.py").write_text(code)
        (folder / name / "a.yaml").write_text(answers)
    (folder / "quiz-only.yaml").write_text(WRONG_ANSWERS)
    out = tmp_path / "out"
    run_batch(folder, assignment=ASSIGNMENT, out=out, jobs=2, exercises_dir=exercises)
    browser = _DevTools(tmp_path)
    try:
        for width in (400, 800, 1400):
            browser.open((out / "report.html").as_uri(), width)
            overflow = browser.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 0, f"the page scrolls sideways by {overflow} px at {width} px"
            charts = browser.evaluate(
                "['score-histogram', 'failure-rates'].map(id => document.getElementById(id).getBoundingClientRect())"
                ".map(b => [b.left, b.right, b.height])"
            )
            for left, right, height in charts:
                assert left >= 0 and right <= width and height > 0
            # an id is one line high wherever it is shown: never cut at a hyphen
            lines = browser.evaluate(
                "Array.from(document.querySelectorAll('.id')).map(e => e.getClientRects().length)"
                ".filter(n => n !== 1).length"
            )
            assert lines == 0
            assert browser.evaluate(_NAMES) == sorted(browser.evaluate(_NAMES))
            browser.click("#roster thead th:nth-child(2) button")
            ascending = [float(key) for key in browser.evaluate(_SCORES)]
            assert ascending == sorted(ascending) and ascending[0] < ascending[-1]
            browser.click("#roster thead th:nth-child(2) button")
            descending = [float(key) for key in browser.evaluate(_SCORES)]
            assert descending == sorted(ascending, reverse=True)
            assert browser.evaluate("document.querySelector('#roster thead th:nth-child(2)').ariaSort") == "descending"
            href = browser.evaluate("document.querySelector('#roster tbody a').getAttribute('href')")
            assert (out / href).is_file()
    finally:
        browser.close()
