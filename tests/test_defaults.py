"""Default arguments: a failing call that relied on a default names the learner's default when it differs.

Driven through the in-process fake runner (fast); one slow test goes
through a real learner process, which reports the defaults at import.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.defaults import signature_defaults
from grader.engine.memory import GradingMemo
from grader.sandbox.signatures import MAX_DEFAULT_CHARS, clean_defaults, describe_defaults
from tests.fakes import InProcessFactory

ROOT = Path(__file__).resolve().parents[1]
SOFTMAX_BODY = "    e = np.exp(z - z.max(axis=axis, keepdims=True))\n    return e / e.sum(axis=axis, keepdims=True)\n"


def _grade(exercise, source: str):
    return grade_implementation(
        exercise,
        SourceModule({"mine.py": source.encode()}, "mine.py"),
        InProcessFactory(),
        memo=GradingMemo(),
        references=ROOT,
    )


def _check(result, check_id):
    return next(c for c in result.checks if c.id == check_id)


@pytest.mark.parametrize(
    ("signature", "expected"),
    [
        ("softmax(z, axis=-1)", {"z": None, "axis": "-1"}),
        ("dot_product_variance(d_k, n_samples=10000, seed=0)", {"d_k": None, "n_samples": "10000", "seed": "0"}),
        ("attention_weights(Q, K, mask=None)", {"Q": None, "K": None, "mask": "None"}),
        ("f(a, /, b=1e-5, *, c=2, d)", {"a": None, "b": "1e-5", "c": "2", "d": None}),
        ("numerical_jacobian(f, z, h=1e-5)", {"f": None, "z": None, "h": "1e-5"}),
        ("not a signature (", {}),
    ],
    ids=["axis", "two-defaults", "none", "every-kind", "as-written", "unreadable"],
)
def test_signature_defaults_reads_the_spec_line(signature: str, expected: dict[str, str | None]) -> None:
    assert signature_defaults(signature) == expected


def test_defaults_wrong_default_is_named(catalog) -> None:
    source = f"import numpy as np\ndef softmax(z, axis=0):\n{SOFTMAX_BODY}"
    check = _check(_grade(catalog.exercise("stable-softmax"), source), "default-axis-is-last")
    assert check.status == "failed"
    assert "your default for axis is 0; the signature asks for -1." in check.reason


def test_defaults_missing_default_is_a_failure_not_a_crash(catalog) -> None:
    source = f"import numpy as np\ndef softmax(z, axis):\n{SOFTMAX_BODY}"
    result = _grade(catalog.exercise("stable-softmax"), source)
    check = _check(result, "default-axis-is-last")
    assert check.status == "failed"
    assert "your softmax has no default for axis; the signature asks for axis=-1." in check.reason
    assert "TypeError" in (check.got or "")


def test_defaults_missing_defaults_are_named_together(catalog) -> None:
    source = (ROOT / "solutions" / "scaling-experiment" / "wrong_no_defaults.py").read_text()
    check = _check(_grade(catalog.exercise("scaling-experiment"), source), "defaults-work")
    assert check.status == "failed"
    assert "no default for n_samples and seed; the signature asks for n_samples=10000, seed=0." in check.reason


def test_defaults_that_agree_are_not_mentioned(catalog) -> None:
    # Right defaults, wrong first value: the failure is the values, and the hint about defaults does not fit.
    source = (
        "import numpy as np\n"
        "def dot_product_variance(d_k, n_samples=10000, seed=0):\n"
        "    rng = np.random.default_rng(seed)\n"
        "    dots = (rng.standard_normal((n_samples, d_k)) * rng.standard_normal((n_samples, d_k))).sum(axis=1)\n"
        "    return float(3 * np.var(dots)), float(np.var(dots / np.sqrt(d_k)))\n"
    )
    check = _check(_grade(catalog.exercise("scaling-experiment"), source), "defaults-work")
    assert check.status == "failed"
    assert "your default" not in check.reason and "no default" not in check.reason
    assert "give n_samples and seed their default values" not in check.reason
    assert check.hint is None


def test_defaults_a_catch_all_keyword_parameter_says_nothing(catalog) -> None:
    source = "import numpy as np\ndef softmax(z, **options):\n    axis = options.get('axis', 0)\n" + SOFTMAX_BODY
    check = _check(_grade(catalog.exercise("stable-softmax"), source), "default-axis-is-last")
    assert check.status != "passed"  # softmax(z, -1) cannot pass axis by position to **options
    assert "your default" not in check.reason and "no default" not in check.reason


def test_defaults_a_missing_parameter_is_named(catalog) -> None:
    source = "import numpy as np\ndef softmax(z):\n    axis = 0\n" + SOFTMAX_BODY
    check = _check(_grade(catalog.exercise("stable-softmax"), source), "default-axis-is-last")
    assert "your softmax has no parameter axis; the signature asks for axis=-1." in check.reason


def test_describe_defaults_runs_no_learner_repr() -> None:
    import types

    class Loud:
        def __repr__(self) -> str:  # pragma: no cover - must never run
            raise AssertionError("the learner's __repr__ ran")

    module = types.ModuleType("submission")
    module.LOUD = Loud()  # type: ignore[attr-defined]
    exec("def f(z, obj=LOUD, text='x' * 500, *rest, flag=True, **more):\n    pass\n", module.__dict__)  # noqa: S102
    described = describe_defaults(module, ["f", "absent"])
    assert set(described) == {"f"}
    assert described["f"]["z"] is None
    assert described["f"]["obj"] == "<Loud object>"
    assert len(described["f"]["text"] or "") == MAX_DEFAULT_CHARS
    assert described["f"]["flag"] == "True"
    assert "*rest" in described["f"] and "**more" in described["f"]


@pytest.mark.parametrize(
    "reported",
    [None, [], {"f": "x"}, {"f": {"a b": "1"}}, {"f": {"a": 3}}, {"f": {"a": "x" * 500}}, {1: {"a": "1"}}],
    ids=["none", "list", "not-a-dict", "bad-name", "not-text", "too-long", "bad-entry"],
)
def test_clean_defaults_keeps_only_well_formed_parts(reported: object) -> None:
    cleaned = clean_defaults(reported)
    assert all(not parameters for parameters in cleaned.values())


@pytest.mark.slow
def test_defaults_reported_by_a_real_learner_process(session) -> None:
    report = session.grade(
        ROOT / "solutions" / "stable-softmax" / "wrong_default_axis_zero.py", exercise_ids=["stable-softmax"]
    )
    (result,) = report.exercises
    check = _check(result, "default-axis-is-last")
    assert "your default for axis is 0; the signature asks for -1." in check.reason


def test_defaults_wrong_default_is_named_even_for_a_hidden_input(catalog) -> None:
    exercise = catalog.exercise("scaling-experiment")
    hidden = [c.model_copy(update={"reveal": "property"}) if c.visibility != "public" else c for c in exercise.checks]
    exercise = exercise.model_copy(update={"checks": hidden})
    source = (ROOT / "solutions" / "scaling-experiment" / "wrong_default_seed.py").read_text()
    check = _check(_grade(exercise, source), "defaults-match-signature")
    assert check.status == "failed" and check.input is None
    assert check.reason.endswith("Your default for seed is 1; the signature asks for 0.")


def test_defaults_that_agree_drop_a_hint_that_spells_the_default(catalog) -> None:
    # Defaults right, values wrong: the hint spelling out n_samples=10000, seed=0 would point the wrong way.
    source = (ROOT / "solutions" / "scaling-experiment" / "wrong_uniform_draws.py").read_text()
    assert "n_samples=10000, seed=0" in source
    check = _check(_grade(catalog.exercise("scaling-experiment"), source), "defaults-work")
    assert check.status == "failed"
    assert "default" not in (check.hint or "") and "your default" not in check.reason


def test_defaults_wrong_step_is_named_as_written_in_the_signature(catalog) -> None:
    source = (ROOT / "solutions" / "argmax-zero-gradient" / "wrong_default_large_step.py").read_text()
    check = _check(_grade(catalog.exercise("argmax-zero-gradient"), source), "default-step-is-small")
    assert "your default for h is 0.1; the signature asks for 1e-5." in check.reason
