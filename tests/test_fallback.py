"""The fallback runner: a learner's public checks where the kernel has no layers, plainly labelled; nothing else.

The kernel layers are made to look missing with the test-only switch
``GRADER_PRETEND_NO_KERNEL_LAYERS`` (``kernel_layers.kernel_layers_missing``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.errors import WeakSandboxError
from grader.grading import GradingSession
from grader.report import render
from grader.results import Report, SandboxInfo
from grader.sandbox.fallback import PlainParent, unsandboxed_label
from grader.sandbox.kernel_layers import PRETEND_NO_KERNEL_LAYERS, kernel_layers_missing
from grader.sandbox.parents import LEARNER_FORMATS, refuse_without_kernel_layers, start_parent

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "solutions/stable-softmax/reference.py"
NO_MAX_SHIFT = "solutions/stable-softmax/wrong_no_max_shift.py"
HOSTILE = ROOT / "tests" / "hostile"
LABEL_START = "These public checks ran without the sandbox on this machine (reason: "
LABEL_END = "your graded result will run in the full sandbox."
NO_LAYERS = {PRETEND_NO_KERNEL_LAYERS: "1"}


def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **NO_LAYERS, **(env or {})},
    )


def first_paragraph(text: str) -> str:
    """The text report's first paragraph, its wrapped lines joined."""
    return " ".join(line.strip() for line in text.split("\n\n")[0].splitlines())


def one_line_refusal(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("grader: error: "), done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


# -- choosing the runner ---------------------------------------------------------


def test_kernel_layers_missing_follows_the_test_switch(monkeypatch) -> None:
    monkeypatch.setenv(PRETEND_NO_KERNEL_LAYERS, "1")
    assert PRETEND_NO_KERNEL_LAYERS in (kernel_layers_missing() or "")
    monkeypatch.setenv(PRETEND_NO_KERNEL_LAYERS, "0")
    off = kernel_layers_missing()
    monkeypatch.delenv(PRETEND_NO_KERNEL_LAYERS)
    assert off == kernel_layers_missing()
    assert off is None or PRETEND_NO_KERNEL_LAYERS not in off


@pytest.mark.parametrize(
    ("public_only", "format_name", "needs"),
    [
        (False, "text", "hidden checks need"),
        (False, "json", "hidden checks need"),
        (True, "gradescope", "--format gradescope"),
        (True, "junit", "--format junit"),
        (True, "prairielearn", "--format prairielearn"),
        (True, "exercism", "--format exercism"),
    ],
    ids=["hidden-text", "hidden-json", "gradescope", "junit", "prairielearn", "exercism"],
)
def test_without_kernel_layers_only_public_checks_for_a_learner_run(
    monkeypatch, public_only: bool, format_name: str, needs: str
) -> None:
    monkeypatch.setenv(PRETEND_NO_KERNEL_LAYERS, "1")
    with pytest.raises(WeakSandboxError) as refused:
        start_parent(public_only=public_only, format_name=format_name)
    message = str(refused.value)
    assert needs in message and "\n" not in message
    assert "--public" in message and PRETEND_NO_KERNEL_LAYERS in message


@pytest.mark.parametrize("format_name", LEARNER_FORMATS)
def test_without_kernel_layers_public_checks_get_the_fallback_runner(monkeypatch, format_name: str) -> None:
    monkeypatch.setenv(PRETEND_NO_KERNEL_LAYERS, "1")
    with start_parent(public_only=True, format_name=format_name) as parent:
        assert isinstance(parent, PlainParent)
        assert PRETEND_NO_KERNEL_LAYERS in parent.reason


def test_batch_is_refused_without_kernel_layers(monkeypatch) -> None:
    monkeypatch.setenv(PRETEND_NO_KERNEL_LAYERS, "1")
    with pytest.raises(WeakSandboxError, match="grader batch needs"):
        refuse_without_kernel_layers("grader batch")


def test_a_session_on_the_fallback_runner_refuses_hidden_checks_even_when_weakness_is_allowed() -> None:
    with (
        PlainParent("a test") as parent,
        GradingSession(exercises_dir=ROOT / "exercises", warm_parent=parent, allow_weak_sandbox=True) as session,
    ):
        with pytest.raises(WeakSandboxError, match="hidden checks need"):
            session.grade(ROOT / REFERENCE, exercise_ids=["stable-softmax"])
        assert session.factory.info().tier == "none"
        assert session.factory.unsandboxed == unsandboxed_label("a test")


# -- the label in every learner format ------------------------------------------


def labelled_report() -> Report:
    return Report(
        grader_version="0.1.0",
        submission="softmax.py",
        score=1.0,
        max_score=2.0,
        public_only=True,
        hidden_not_run=3,
        sandbox=SandboxInfo(tier="none"),
        unsandboxed=unsandboxed_label("macOS has no Landlock or seccomp"),
    )


def test_text_says_first_that_the_checks_ran_without_the_sandbox() -> None:
    head = first_paragraph(render(labelled_report(), "text"))
    assert head.startswith("note: " + LABEL_START + "macOS has no Landlock or seccomp)")
    assert head.endswith(LABEL_END)


def test_markdown_says_it_under_the_heading() -> None:
    lines = render(labelled_report(), "markdown").splitlines()
    assert lines[0].startswith("# Grading results")
    assert lines[2].startswith("**Note:** " + LABEL_START) and lines[2].endswith(LABEL_END)


def test_json_has_the_label_as_its_first_field() -> None:
    data = json.loads(render(labelled_report(), "json"))
    assert next(iter(data)) == "unsandboxed"
    assert data["unsandboxed"].startswith(LABEL_START) and data["unsandboxed"].endswith(LABEL_END)


def test_a_sandboxed_report_has_no_label() -> None:
    report = labelled_report()
    report.unsandboxed = None
    assert "unsandboxed" not in json.loads(render(report, "json"))
    assert LABEL_START not in render(report, "text") + render(report, "markdown")


# -- live runs of `grader grade --public` on the fallback runner ----------------------


@pytest.mark.slow
def test_fallback_passes_a_correct_solution_with_the_label_on_top() -> None:
    done = run("grade", REFERENCE, "--exercise", "stable-softmax", "--public")
    assert done.returncode == 0, done.stderr
    assert first_paragraph(done.stdout).startswith("note: " + LABEL_START)
    assert "PASS rows-sum-to-one" in done.stdout and "FAIL" not in done.stdout
    assert "Only public checks ran" in done.stdout


@pytest.mark.slow
def test_fallback_fails_a_buggy_solution_with_the_usual_reasons() -> None:
    done = run("grade", NO_MAX_SHIFT, "--exercise", "stable-softmax", "--public", "--format", "markdown")
    assert done.returncode == 1, done.stderr
    assert "**Note:** " + LABEL_START in done.stdout.splitlines()[2]
    assert "**FAIL** `rows-sum-to-one`" in done.stdout
    assert "smallest failing input: `softmax(z=array([1000., 1001.]))`" in done.stdout


@pytest.mark.slow
def test_fallback_json_is_labelled_and_byte_identical_twice() -> None:
    first = run("grade", NO_MAX_SHIFT, "--exercise", "stable-softmax", "--public", "--format", "json")
    second = run("grade", NO_MAX_SHIFT, "--exercise", "stable-softmax", "--public", "--format", "json")
    assert first.returncode == 1, first.stderr
    assert first.stdout == second.stdout
    report = json.loads(first.stdout)
    assert next(iter(report)) == "unsandboxed" and report["unsandboxed"].startswith(LABEL_START)
    assert report["sandbox"]["tier"] == "none" and report["sandbox"]["unprotected"]
    assert report["public_only"] is True


@pytest.mark.slow
@pytest.mark.parametrize("name", ["busy_loop_in_call.py", "sleep_forever.py"], ids=["busy", "sleeping"])
def test_fallback_still_ends_a_call_that_never_returns(name: str) -> None:
    env = {"GRADER_CALL_SECONDS": "1", "GRADER_IMPORT_SECONDS": "5"}
    done = run("grade", str(HOSTILE / name), "--exercise", "stable-softmax", "--public", env=env)
    assert done.returncode == 1, done.stderr
    assert first_paragraph(done.stdout).startswith("note: " + LABEL_START)
    assert "TIMEOUT" in done.stdout and "Traceback" not in done.stdout + done.stderr


@pytest.mark.slow
def test_fallback_cpu_limit_holds(tmp_path: Path) -> None:
    env = {"GRADER_CPU_SECONDS": "1", "GRADER_CALL_SECONDS": "15"}
    done = run("grade", str(HOSTILE / "busy_loop_in_call.py"), "--exercise", "stable-softmax", "--public", env=env)
    assert done.returncode == 1, done.stderr
    assert "TIMEOUT" in done.stdout and "CPU" in done.stdout


@pytest.mark.slow
def test_fallback_keeps_what_the_learner_prints_out_of_the_answers() -> None:
    done = run("grade", str(HOSTILE / "fake_results_output.py"), "--exercise", "stable-softmax", "--public")
    assert done.returncode in (0, 1), done.stderr
    assert first_paragraph(done.stdout).startswith("note: " + LABEL_START)
    assert "Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "extra",
    [[], ["--allow-weak-sandbox"], ["--public", "--format", "gradescope"], ["--public", "--format", "junit"]],
    ids=["hidden", "hidden-allow-weak", "gradescope", "junit"],
)
def test_grading_for_the_record_is_refused_in_one_line(extra: list[str]) -> None:
    line = one_line_refusal(run("grade", REFERENCE, "--exercise", "stable-softmax", *extra))
    assert "cannot run the grader's sandbox" in line and PRETEND_NO_KERNEL_LAYERS in line


@pytest.mark.slow
def test_batch_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "class" / "ada").mkdir(parents=True)
    (tmp_path / "class" / "ada" / "softmax.py").write_text((ROOT / REFERENCE).read_text())
    done = run("batch", str(tmp_path / "class"), "--assignment", "why-softmax", "--out", str(tmp_path / "out"))
    assert "grader batch needs" in one_line_refusal(done)
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_version_says_there_is_no_sandbox() -> None:
    done = run("--version")
    assert done.returncode == 0
    assert "sandbox: none (" in done.stdout and "--public" in done.stdout


@pytest.mark.slow
def test_fallback_learner_process_ends_with_a_killed_grader() -> None:
    env = {**os.environ, **NO_LAYERS, "GRADER_CALL_SECONDS": "60"}
    argv = [sys.executable, "-m", "grader.cli", "grade", str(HOSTILE / "sleep_forever.py"), "--exercise"]
    grader = subprocess.Popen(
        [*argv, "stable-softmax", "--public"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        learner = wait_for(lambda: children_running("serve_plain", grader.pid), 60)
        time.sleep(3)  # into the call that sleeps: a learner process still importing ends when its answer fails
    finally:
        grader.kill()
        grader.wait()
    assert learner
    assert wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in learner), 10)


def children_running(marker: str, parent: int) -> list[int]:
    """Pids of ``parent``'s children whose command line holds ``marker`` (from ``/proc``)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or marker.encode() not in (entry / "cmdline").read_bytes():
                continue
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == parent:
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def wait_for(condition, seconds: float):
    """``condition()``'s first true value within ``seconds``, polled; else its last value."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


# -- the fallback's cache ---------------------------------------------------------------


def test_without_kernel_layers_the_cache_is_a_folder_no_confined_run_reads(tmp_path: Path, monkeypatch) -> None:
    from grader import cache

    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("GRADER_NO_CACHE", raising=False)
    monkeypatch.setenv(PRETEND_NO_KERNEL_LAYERS, "1")
    assert cache.directory() == tmp_path / cache.UNCONFINED
    monkeypatch.setenv(PRETEND_NO_KERNEL_LAYERS, "0")
    if kernel_layers_missing() is None:
        assert cache.directory() == tmp_path


PLANT = """
import os
import pickle


class _Payload:
    def __reduce__(self):
        return (open, ({canary!r}, "w"))


_forged = pickle.dumps(_Payload())
for _folder, _dirs, _files in os.walk({folder!r}):
    for _name in _files:
        _stem = _name.rsplit(".", 1)[0]
        for _planted in (_name, _stem + ".json", _stem + ".pickle"):
            with open(os.path.join(_folder, _planted), "wb") as _handle:
                _handle.write(_forged)
"""


@pytest.mark.slow
def test_a_learner_write_under_the_fallback_runs_no_code_in_a_later_grader(tmp_path: Path) -> None:
    """Unconfined learner code pickles a payload over every cache entry; no later grader process runs it.

    The fallback's grader keeps its cache apart from a confined run's, and
    every entry is JSON checked on reading: the forged ones are discarded
    with a note, and the later grades are exactly the earlier ones.
    """
    folder, canary = tmp_path / "cache", tmp_path / "code-ran-in-the-grader"
    env = {"GRADER_CACHE_DIR": str(folder)}
    confined_env = {**env, PRETEND_NO_KERNEL_LAYERS: "0"}
    args = ("grade", REFERENCE, "--exercise", "stable-softmax", "--format", "json")
    confined = kernel_layers_missing() is None
    if confined:
        first_confined = run(*args, env=confined_env)
        assert first_confined.returncode == 0, first_confined.stderr
    main_entries = {path.name: path.read_bytes() for path in folder.glob("*.json")}
    first = run(*args, "--public", env=env)
    assert first.returncode == 0, first.stderr
    assert {path.name: path.read_bytes() for path in folder.glob("*.json")} == main_entries  # apart
    assert list((folder / "unconfined").glob("spec-*.json"))

    learner = tmp_path / "planting.py"
    learner.write_text(PLANT.format(canary=str(canary), folder=str(folder)) + (ROOT / REFERENCE).read_text())
    planted = run("grade", str(learner), "--exercise", "stable-softmax", "--public", "--format", "json", env=env)
    assert planted.returncode == 0, planted.stderr
    assert (folder / "unconfined").is_dir() and list((folder / "unconfined").glob("*.pickle"))  # it did write

    later = run(*args, "--public", env=env)
    assert later.returncode == 0 and later.stdout == first.stdout, later.stderr
    assert "grader: note: discarded the cache entry" in later.stderr
    if confined:
        later_confined = run(*args, env=confined_env)
        assert later_confined.returncode == 0, later_confined.stderr
        assert later_confined.stdout == first_confined.stdout
    assert not canary.exists()
    assert all(line.startswith("grader: note: ") for line in later.stderr.splitlines())
