"""The command line: exit statuses, key lines, and byte-identical JSON (live runs of `grader`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "solutions/stable-softmax/reference.py"
GLOBAL_MAX = "solutions/stable-softmax/wrong_global_max.py"


def run(
    *args: str, cwd: Path = ROOT, timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=None if env is None else {**os.environ, **env},
    )


@pytest.mark.slow
def test_grade_reference_passes_with_exit_0() -> None:
    done = run("grade", REFERENCE, "--exercise", "stable-softmax")
    assert done.returncode == 0, done.stderr
    assert "Total: 15/15" in done.stdout
    assert "PASS finite-for-large-inputs" in done.stdout


@pytest.mark.slow
def test_grade_known_wrong_fails_with_exit_1_and_names_the_mistake() -> None:
    done = run("grade", GLOBAL_MAX, "--exercise", "stable-softmax")
    assert done.returncode == 1
    assert "FAIL matches-reference-on-extremes" in done.stdout
    assert "likely mistake: the maximum of the whole array is subtracted" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("minimum", "status"), [("0.5", 0), ("0.9", 1)], ids=["reached", "not-reached"])
def test_grade_min_score_sets_the_exit_status(minimum: str, status: int) -> None:
    assert run("grade", GLOBAL_MAX, "--exercise", "stable-softmax", "--min-score", minimum).returncode == status


@pytest.mark.slow
def test_grade_json_is_the_contract_shape_and_byte_identical_twice(tmp_path: Path) -> None:
    first = run("grade", GLOBAL_MAX, "--exercise", "stable-softmax", "--format", "json")
    second = run(
        "grade", GLOBAL_MAX, "--exercise", "stable-softmax", "--format", "json", "--output", str(tmp_path / "out.json")
    )
    assert second.stdout == ""
    assert first.stdout == (tmp_path / "out.json").read_text()
    report = json.loads(first.stdout)
    assert report["submission"] == GLOBAL_MAX
    assert (report["score"], report["max_score"]) == (10.0, 15.0)
    (exercise,) = report["exercises"]
    assert set(exercise) >= {"id", "status", "score", "max_score", "reason", "checks"}
    for check in exercise["checks"]:
        assert set(check) >= {"id", "status", "score", "max_score", "visibility", "reason"}
        assert check["reason"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["grade", "nowhere.py"], "nowhere.py: no such file or directory"),
        (["grade", "README.md"], "cannot grade a .md file"),
        (["grade", REFERENCE, "--exercise", "stable-sofmax"], "did you mean 'stable-softmax'"),
        (["grade", REFERENCE, "--assignment", "nope"], "unknown assignment 'nope'"),
        (["show", "nope"], "unknown exercise 'nope'"),
    ],
    ids=["missing-file", "wrong-kind", "unknown-exercise", "unknown-assignment", "show-unknown"],
)
def test_usage_errors_exit_2_with_one_line(args: list[str], expected: str) -> None:
    done = run(*args)
    assert done.returncode == 2
    assert expected in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_grade_empty_directory_exits_2(tmp_path: Path) -> None:
    done = run("grade", str(tmp_path))
    assert done.returncode == 2 and "nothing to grade" in done.stderr


def test_invalid_spec_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "id: bad\nkind: quiz\ntitle: t\nquestions:\n  - id: q\n    type: single\n"
        "    prompt: p\n    points: -1\n    options: []\n"
    )
    done = run("--exercises", str(tmp_path), "list")
    assert done.returncode == 2
    assert f"{tmp_path / 'bad.yaml'}:8: questions[0].points: must be greater than 0" in done.stderr


def test_list_names_every_exercise_and_assignment(catalog) -> None:
    done = run("list")
    assert done.returncode == 0
    for exercise_id in catalog.exercises:
        assert exercise_id in done.stdout
    assert "all" in done.stdout


def test_list_from_the_cache_is_the_same_and_follows_every_change(tmp_path: Path, cache_dir: Path) -> None:
    """A second ``grader list`` reads its rows from the cache without pydantic or numpy; edits are seen at once."""
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises")
    shutil.copytree(ROOT / "solutions", tmp_path / "solutions")
    first = run("list", cwd=tmp_path)
    probe = (
        "import sys\nfrom grader.cli import main\nmain(['list'], standalone_mode=False)\n"
        "print(sorted(m for m in ('numpy', 'pydantic') if m in sys.modules))\n"
    )
    second = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0 and second.returncode == 0, second.stderr
    assert second.stdout == first.stdout + "[]\n"  # the very same rows, and neither module was imported
    spec = tmp_path / "exercises" / "temperature.yaml"
    spec.write_text(spec.read_text().replace("title: Softmax with a temperature", "title: Temperature, renamed"))
    assert "Temperature, renamed" in run("list", cwd=tmp_path).stdout
    (tmp_path / "solutions" / "temperature" / "reference.py").unlink()
    gone = run("list", cwd=tmp_path)
    assert gone.returncode == 2 and "does not exist" in gone.stderr and "temperature.yaml" in gone.stderr


def test_show_never_prints_hidden_checks_or_answers(catalog) -> None:
    stable = run("show", "stable-softmax").stdout
    hidden = [c for c in catalog.exercise("stable-softmax").checks if c.visibility != "public"]
    assert "rows-sum-to-one" in stable
    for check in hidden:
        assert check.id not in stable
        for hint in check.hint_list():
            assert hint.text not in stable
    assert "hidden checks" in stable
    quiz = run("show", "why-softmax-quiz").stdout
    assert "A. non-negative" in quiz
    for question in catalog.exercise("why-softmax-quiz").questions:
        for option in question.options:
            assert option.reason not in quiz


def test_schema_is_json_schema_with_every_kind() -> None:
    schema = json.loads(run("schema").stdout)
    text = json.dumps(schema)
    for tag in ("implementation", "quiz", "assignment", "sums-to-one", "matches-reference"):
        assert tag in text


def test_version_names_the_sandbox_tier() -> None:
    done = run("--version")
    assert done.returncode == 0 and "grader 0.1.0" in done.stdout and "sandbox: tier" in done.stdout


@pytest.mark.parametrize(
    "command",
    [
        ["grade", REFERENCE, "--exercise", "stable-softmax"],
        ["batch", "solutions", "--assignment", "why-softmax", "--out", "unused"],
        ["validate", "--exercise", "stable-softmax"],
    ],
    ids=["grade", "batch", "validate"],
)
def test_unknown_sandbox_layers_are_a_usage_error(command: list[str], tmp_path: Path) -> None:
    if command[0] == "batch":
        command = [*command[:-1], str(tmp_path / "out")]
    done = run(*command, env={"GRADER_SANDBOX_LAYERS": "bogus"})
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "GRADER_SANDBOX_LAYERS" in line and "bogus" in line
    assert all(name in line for name in ("all", "none", "caps", "landlock", "seccomp"))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["list", "--exercises", "{dir}"],
        ["show", "stable-softmax", "--exercises", "{dir}"],
        ["--exercises", "{dir}", "list"],
    ],
    ids=["list-after", "show-after", "before"],
)
def test_exercises_option_works_before_and_after_the_command(args: list[str], tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(ROOT / "exercises", specs / "exercises")
    shutil.copytree(ROOT / "solutions", specs / "solutions")
    done = run(*[a.format(dir=specs / "exercises") for a in args], cwd=tmp_path)  # no ./exercises there
    assert done.returncode == 0, done.stderr
    assert "stable-softmax" in done.stdout or "softmax(z" in done.stdout


@pytest.mark.slow
def test_grade_takes_exercises_after_the_path(tmp_path: Path) -> None:
    done = run(
        "grade",
        str(ROOT / REFERENCE),
        "--exercise",
        "stable-softmax",
        "--exercises",
        str(ROOT / "exercises"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "Total: 15/15" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            ["batch", "solutions", "--assignment", "stable-softmax", "--out", "unused"],
            "'stable-softmax' is an exercise, not an assignment; batch grades whole assignments",
        ),
        (
            ["grade", REFERENCE, "--assignment", "stable-softmax"],
            "'stable-softmax' is an exercise, not an assignment; grade it with --exercise stable-softmax",
        ),
    ],
    ids=["batch", "grade"],
)
def test_an_exercise_given_as_assignment_is_named_as_such(command: list[str], expected: str) -> None:
    done = run(*command)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert expected in line and "why-softmax" in line and "softmax-bridge" in line and "all" in line
    assert "did you mean" not in line


def test_output_files_get_the_usual_mode(tmp_path: Path) -> None:
    from grader.cli.common import write_atomically

    previous = os.umask(0o027)
    try:
        write_atomically(tmp_path / "new.json", "{}")
        kept = tmp_path / "kept.json"
        kept.write_text("old")
        kept.chmod(0o600)
        write_atomically(kept, b"new")
    finally:
        os.umask(previous)
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o640
    assert kept.stat().st_mode & 0o777 == 0o600 and kept.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json", "new.json"]


@pytest.mark.slow
def test_grade_output_file_is_readable_by_others_under_umask_022(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    program = "import os; os.umask(0o022); from grader.cli import main; main()"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            program,
            "grade",
            REFERENCE,
            "--exercise",
            "stable-softmax",
            "--format",
            "json",
            "--output",
            str(target),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert target.stat().st_mode & 0o777 == 0o644


def test_every_command_takes_exercises_after_its_name() -> None:
    import click

    from grader.cli import main

    commands = [c for c in main.commands.values() if not isinstance(c, click.Group)]
    commands += list(main.commands["export"].commands.values())  # type: ignore[attr-defined]
    assert len(commands) >= 10
    for command in commands:
        assert any("--exercises" in param.opts for param in command.params), command.name


def test_a_grade_imports_none_of_the_instructors_commands() -> None:
    """``grader grade`` of a ``.py`` file builds only the commands it may run (``batch``, ``export`` and the rest
    load when named), and imports neither the notebook and answers-file readers nor ``difflib``, which only a
    message about a misspelt name needs."""
    probe = (
        "import sys\nfrom grader.cli import main\n"
        f"try:\n    main(['grade', {str(ROOT / 'solutions/stable-softmax/reference.py')!r}, '--exercise', "
        "'stable-softmax', '--format', 'json'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('grader.') or m == 'difflib'))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    *report, loaded = done.stdout.strip().splitlines()
    graded = json.loads("\n".join(report))
    assert graded["score"] == graded["max_score"] > 0  # it graded, and fully
    for name in ("cli.batch", "cli.export", "cli.authoring", "cli.mistakes", "submission.notebook"):
        assert f"'grader.{name}'" not in loaded, loaded
    assert "'grader.submission.answers'" not in loaded and "'difflib'" not in loaded, loaded
    assert "'grader.cli.commands'" in loaded and "'grader.submission.files'" in loaded


def test_the_lazy_commands_are_the_named_ones_and_can_be_replaced() -> None:
    """Listing names a lazy command without importing it; reading it imports it; a command set later wins."""
    import click

    from grader.cli.lazy import LazyCommands

    commands = LazyCommands({"batch": "grader.cli.batch:batch_command", "gone": "grader.cli.batch:batch_command"})
    assert list(commands) == ["batch", "gone"] and len(commands) == 2
    assert commands["batch"].name == "batch"
    with pytest.raises(RuntimeError, match="is the command 'batch', not 'gone'"):
        commands["gone"]
    del commands["gone"]
    own = click.Command("batch")
    commands["batch"] = own
    assert commands["batch"] is own and list(commands) == ["batch"]
    with pytest.raises(KeyError):
        commands["missing"]
    with pytest.raises(KeyError):
        del commands["missing"]
