"""``prepare``: the batch loads specs and plans once, before its workers are forked, and never serves stale specs."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.batch import worker
from grader.batch.cache import spec_digest
from grader.batch.worker import WorkerConfig, prepare


def test_a_worker_started_after_prepare_grades_with_the_prepared_catalog_and_its_plans(root: Path) -> None:
    exercises = (root / "exercises").resolve()
    catalog = prepare(exercises, "all")
    stable = catalog.exercise("stable-softmax")
    config = WorkerConfig(exercises_dir=str(exercises), assignment="all", spec_digest=spec_digest(catalog, exercises))
    started = worker.start_worker(config)
    try:
        assert started.session.catalog is catalog
        plans = started.session.memo.plans
        assert any(plans[key].exercise is stable for key in plans)  # built (or loaded) before any learner
        assert started.digest == config.spec_digest
    finally:
        started.close()


def test_preparing_again_reads_the_specs_again(root: Path, tmp_path: Path) -> None:
    exercises = tmp_path / "exercises"
    shutil.copytree(root / "exercises", exercises)
    shutil.copytree(root / "solutions", tmp_path / "solutions")  # the specs name their solutions
    first = prepare(exercises, "all")
    spec = exercises / "temperature.yaml"
    spec.write_text(spec.read_text().replace("title: ", "title: Renamed, ", 1))
    second = prepare(exercises, "all")
    assert second is not first
    assert second.exercise("temperature").title.startswith("Renamed, ")
    assert worker.prepared_catalog(exercises) is second


def test_an_assignment_that_does_not_resolve_is_left_for_the_batch_to_report(root: Path) -> None:
    catalog = prepare((root / "exercises").resolve(), "no-such-assignment")
    assert "stable-softmax" in catalog.exercises
