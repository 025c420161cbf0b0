"""The plugin discovery cache: a hit skips the metadata scan, any install or removal is a miss, a bad cache is
never worse than no cache."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from agentenv.plugins import cache, discovery
from agentenv_testing.installs import EXCLUDING_KERNEL_RANGE, install_fixture_plugin

PLUGIN = """
from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_bundles():
    return []
"""


@pytest.fixture
def scans(on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A private cache folder, and a count of real metadata scans."""
    monkeypatch.setenv(cache.CACHE_DIR_VAR, str(tmp_path / "cache"))
    monkeypatch.delenv(cache.NO_CACHE_VAR, raising=False)
    count: list[int] = []
    real_scan = discovery._scan

    def counting() -> list[dict[str, Any]]:
        count.append(1)
        return real_scan()

    monkeypatch.setattr(discovery, "_scan", counting)
    return count


def _names() -> set[str]:
    return {info.name for info in discovery.discover()}


def test_second_discovery_reads_the_cache(scans: list[int]) -> None:
    first = [info.to_dict() for info in discovery.discover()]
    second = [info.to_dict() for info in discovery.discover()]
    assert first == second and len(scans) == 1


def test_installing_or_removing_a_plugin_is_seen_at_once(scans: list[int], on_path: Path) -> None:
    assert "fixture-cached" not in _names()
    install_fixture_plugin(on_path, "agentenv-fixture-cached", "1.0.0", "fixture-cached", "fixture_cached", PLUGIN)
    assert "fixture-cached" in _names()
    for meta in on_path.glob("agentenv_fixture_cached-*.dist-info"):
        for file in meta.iterdir():
            file.unlink()
        meta.rmdir()
    assert "fixture-cached" not in _names()
    assert len(scans) == 2, "back to the first install state: its cached entry answers"


def test_other_files_coming_and_going_keep_the_cache(scans: list[int], on_path: Path) -> None:
    discovery.discover()
    (on_path / "notes.txt").write_text("the working folder is on the path under `python -m`", encoding="utf-8")
    (on_path / ".agentenv").mkdir()
    discovery.discover()
    assert len(scans) == 1


def test_requirement_problems_come_from_the_cache_too(scans: list[int], on_path: Path) -> None:
    install_fixture_plugin(
        on_path,
        "agentenv-fixture-old",
        "1.0.0",
        "fixture-old",
        "fixture_old",
        PLUGIN,
        requires=[EXCLUDING_KERNEL_RANGE],
    )
    for _ in range(2):
        (info,) = [i for i in discovery.discover() if i.name == "fixture-old"]
        assert info.requirement_problems and info.requirement_problems[0].code == "kernel-range"
    assert len(scans) == 1


def test_no_cache_variable_scans_every_time(scans: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.NO_CACHE_VAR, "1")
    discovery.discover()
    discovery.discover()
    assert len(scans) == 2


def test_without_a_home_folder_nothing_is_cached(scans: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(cache.CACHE_DIR_VAR)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(cache.os.path, "expanduser", lambda path: path)  # as when HOME and passwd give nothing
    assert cache.cache_dir(cache.os.environ) is None
    discovery.discover()
    discovery.discover()
    assert len(scans) == 2


def test_a_corrupt_cache_file_is_replaced(scans: list[int], tmp_path: Path) -> None:
    discovery.discover()
    (path,) = (tmp_path / "cache").glob("plugins-*.json")
    path.write_text("{not json", encoding="utf-8")
    assert _names() and len(scans) == 2
    assert _names() and len(scans) == 2, "the rewritten file is used again"


def test_an_unwritable_cache_folder_only_costs_the_scan(
    scans: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv(cache.CACHE_DIR_VAR, str(blocker / "cache"))
    assert _names() == _names()
    assert len(scans) == 2


def test_a_different_import_path_keeps_its_own_entry(
    scans: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    discovery.discover()
    other = tmp_path / "other"
    other.mkdir()
    sys.path.insert(0, str(other))  # as `python -m agentenv` puts the working folder first
    try:
        discovery.discover()
    finally:
        sys.path.remove(str(other))
    monkeypatch.setattr(discovery, "_scan", lambda: pytest.fail("the first path's entry was dropped"))
    discovery.discover()
    assert len(scans) == 2
