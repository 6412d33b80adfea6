"""The validated-spec cache: a hit equals a fresh load; any edit misses; unsafe files are ignored."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from grader import cache
from grader.spec.loader import load_spec_file

SPEC = Path(__file__).resolve().parents[1] / "exercises" / "stable-softmax.yaml"


def test_load_spec_file_from_cache_equals_a_fresh_load(tmp_path: Path, cache_dir: Path) -> None:
    copy = tmp_path / "stable-softmax.yaml"
    shutil.copy(SPEC, copy)
    fresh = load_spec_file(copy)
    assert len(list(cache_dir.glob("spec-*.pickle"))) == 1
    assert load_spec_file(copy) == fresh


def test_load_spec_file_edit_misses_the_cache(tmp_path: Path, cache_dir: Path) -> None:
    copy = tmp_path / "stable-softmax.yaml"
    shutil.copy(SPEC, copy)
    load_spec_file(copy)
    copy.write_text(SPEC.read_text().replace("title: A softmax that never overflows", "title: Edited"))
    assert load_spec_file(copy).title == "Edited"


def test_cache_ignores_a_file_others_can_write(cache_dir: Path) -> None:
    cache.store("k", {"x": 1})
    assert cache.load("k") == {"x": 1}
    os.chmod(cache_dir / "spec-k.pickle", 0o666)
    assert cache.load("k") is None


def test_cache_off_with_grader_no_cache(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_NO_CACHE", "1")
    cache.store("k", 1)
    assert not cache_dir.exists()
