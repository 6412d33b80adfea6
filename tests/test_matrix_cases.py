"""Case sets of the common matrix families (``matrices:``): what each family holds, seeded like random cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader.checks.cases import MatrixGenerator, build_cases, matrix_of
from grader.errors import SpecError
from grader.spec.loader import load_catalog


def _cases(spec: dict, kinds: dict | None = None, seed: tuple[str, ...] = ("ex", "set")) -> list:
    generator = MatrixGenerator.model_validate({"matrices": spec})
    return build_cases([generator], kinds or {"A": "float_array"}, seed)


def test_hilbert_matrices_are_one_over_i_plus_j_plus_one_one_per_size_smallest_first() -> None:
    cases = _cases({"arg": "A", "family": "hilbert", "sizes": [4, [3, 2], 2], "count": 5})
    assert [case.args["A"].shape for case in cases] == [(2, 2), (3, 2), (4, 4)]
    np.testing.assert_array_equal(cases[0].args["A"], [[1.0, 0.5], [0.5, 1.0 / 3.0]])
    assert cases[2].args["A"][3, 3] == 1.0 / 7.0


def test_orthogonal_matrices_have_orthonormal_columns_or_rows() -> None:
    rng = np.random.default_rng(0)
    tall, wide, square = (matrix_of("orthogonal", *shape, 1.0, rng) for shape in ((6, 3), (2, 5), (4, 4)))
    np.testing.assert_allclose(tall.T @ tall, np.eye(3), atol=1e-14)
    np.testing.assert_allclose(wide @ wide.T, np.eye(2), atol=1e-14)
    np.testing.assert_allclose(square @ square.T, np.eye(4), atol=1e-14)


@pytest.mark.parametrize("condition", [10.0, 1e6, 1e12], ids=["mild", "ill", "nearly-singular"])
def test_spd_and_near_singular_matrices_have_the_condition_number_asked_for(condition: float) -> None:
    rng = np.random.default_rng(1)
    spd = matrix_of("spd", 5, 5, condition, rng)
    assert np.array_equal(spd, spd.T)
    eigenvalues = np.linalg.eigvalsh(spd)
    assert eigenvalues.min() > 0
    assert eigenvalues.max() / eigenvalues.min() == pytest.approx(condition, rel=1e-3)
    near = matrix_of("near-singular", 6, 4, condition, rng)
    assert near.shape == (6, 4)
    assert np.linalg.cond(near) == pytest.approx(condition, rel=1e-3)


def test_drawn_families_are_seeded_by_the_case_set_and_give_the_other_arguments() -> None:
    spec = {"arg": "A", "family": "gaussian", "sizes": [3], "count": 3, "args": {"b": [[1.0, 2.0, 3.0]], "k": [1, 2]}}
    kinds = {"A": "float_array", "b": "float_array", "k": "int"}
    first, again, other = _cases(spec, kinds), _cases(spec, kinds), _cases(spec, kinds, ("ex", "other"))
    assert all(np.array_equal(a.args["A"], b.args["A"]) for a, b in zip(first, again, strict=True))
    assert not np.array_equal(first[0].args["A"], other[0].args["A"])
    assert len(first) == 3 and len({case.args["A"].tobytes() for case in first}) == 3
    assert first[0].args["b"].dtype == np.float64 and type(first[0].args["k"]) is int


@pytest.mark.parametrize(
    ("matrices", "message"),
    [
        ("{arg: B, family: hilbert, sizes: [3]}", "'B' is not an argument of orthonormalise(A)"),
        ("{arg: A, family: spd, sizes: [[3, 2]]}", "square"),
        ("{arg: A, family: hilbert, sizes: [2000]}", "each from 1 to 1000"),
        ("{arg: A, family: hilbret, sizes: [3]}", "hilbert"),
    ],
    ids=["unknown-argument", "spd-not-square", "too-large", "unknown-family"],
)
def test_a_bad_matrix_case_set_is_a_spec_error_at_its_line(tmp_path: Path, matrices: str, message: str) -> None:
    spec = (Path(__file__).parent / "fixtures/linalg/exercises/gram-schmidt.yaml").read_text()
    line = "    - matrices: {arg: A, family: hilbert, sizes: [3, 4, 5, 6, [8, 5]]}"
    assert line in spec
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises/gram-schmidt.yaml").write_text(spec.replace(line, f"    - matrices: {matrices}"))
    with pytest.raises(SpecError) as raised:
        load_catalog(tmp_path / "exercises")
    assert raised.value.line == 1 + spec.splitlines().index(line)
    assert message in raised.value.message
