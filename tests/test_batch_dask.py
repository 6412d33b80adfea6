"""The Dask executor gives the same outputs, byte for byte, as the local process pool."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_helpers import ASSIGNMENT, make_class, make_exercises, snapshot

from grader.batch import run_batch

distributed = pytest.importorskip("distributed", reason="the optional 'dask' extra is not installed")

pytestmark = [pytest.mark.slow]


def test_batch_on_a_dask_cluster_matches_the_local_pool(tmp_path: Path) -> None:
    exercises = make_exercises(tmp_path)
    folder = make_class(tmp_path / "class")
    local = run_batch(folder, assignment=ASSIGNMENT, out=tmp_path / "local", jobs=2, exercises_dir=exercises)
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        remote = run_batch(
            folder,
            assignment=ASSIGNMENT,
            out=tmp_path / "dask",
            scheduler=cluster.scheduler_address,
            exercises_dir=exercises,
        )
    assert remote.graded == local.graded and not remote.grader_errors and not local.grader_errors
    assert snapshot(tmp_path / "dask") == snapshot(tmp_path / "local")


def test_batch_with_an_unreachable_scheduler_is_a_usage_error(tmp_path: Path) -> None:
    from grader.batch.executors import DaskExecutor
    from grader.errors import UsageError

    exercises = make_exercises(tmp_path)
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "one.yaml").write_text("why-softmax-quiz: {divide-by-sum-fails: A}\n")
    with pytest.raises(UsageError, match="cannot reach the Dask scheduler"):
        run_batch(
            folder,
            assignment=ASSIGNMENT,
            out=tmp_path / "out",
            exercises_dir=exercises,
            executor=lambda config: DaskExecutor(config, "tcp://127.0.0.1:9", connect_timeout=2),
        )
