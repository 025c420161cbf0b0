"""Issue 16: artifacts are read with a size and file-type limit (a path like /dev/zero once read 23.5 GB)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from agentenv_runtime.env import artifact as artifact_module
from agentenv_runtime.env.artifact import Artifact, ArtifactError

DOCUMENT = {"name": "a", "env": "shelf", "version": "1", "data": {"books": [{"title": "x" * 100}]}}


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
def test_a_device_is_refused_before_reading() -> None:
    with pytest.raises(ArtifactError, match="/dev/zero: not a regular file"):
        Artifact.from_file(Path("/dev/zero"))


def test_a_fifo_or_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match=r"not a regular file|cannot read artifact"):
        Artifact.from_file(tmp_path)


def test_too_large_files_and_gzip_bombs_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(artifact_module, "MAX_ARTIFACT_BYTES", 1000)
    big = tmp_path / "big.json"
    big.write_text(json.dumps(DOCUMENT | {"description": "y" * 2000}))
    with pytest.raises(ArtifactError, match=r"big.json: artifact of \d+ bytes is larger than 1000"):
        Artifact.from_file(big)
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(json.dumps(DOCUMENT | {"description": " " * 100_000}).encode()))
    assert bomb.stat().st_size < 1000
    with pytest.raises(ArtifactError, match="once decompressed"):
        Artifact.from_file(bomb)
    small = tmp_path / "small.json.gz"
    small.write_bytes(gzip.compress(json.dumps(DOCUMENT).encode()))
    assert Artifact.from_file(small).data == DOCUMENT["data"]


def test_a_gzip_bomb_is_refused_before_it_fills_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bomb is measured a chunk at a time: memory stays near one chunk, not the limit (or twice it, as when
    it was inflated into one growing buffer: 1.09 GB at the default 512 MiB)."""
    import tracemalloc
    import zlib

    limit = 64 * 1024 * 1024
    monkeypatch.setattr(artifact_module, "MAX_ARTIFACT_BYTES", limit)
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1024 * 1024)
    bomb = b"".join(packer.compress(zeros) for _ in range(96)) + packer.flush()  # 96 MiB inflated, ~100 KB packed
    tracemalloc.start()
    try:
        with pytest.raises(ArtifactError, match="once decompressed"):
            Artifact.from_bytes(bomb, source="bomb.json.gz")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB while refusing a bomb over a {limit >> 20} MiB limit"


def test_non_utf8_and_deep_json_are_artifact_errors(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="not valid JSON"):
        Artifact.from_bytes(b'{"name": "\xff"}', source="x.json")
    with pytest.raises(ArtifactError, match="nested too deep"):
        Artifact.from_bytes(b"[" * 100_000 + b"]" * 100_000, source="x.json")
