"""The `filesystem` object store: the kernel's conformance kit plus local-file behaviour."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from agentenv_store_local._files import TMP_PREFIX
from agentenv_store_local.objects import FilesystemObjectStore
from agentenv_testing.stores import ObjectStoreConformance


def make(root: Path) -> FilesystemObjectStore:
    return FilesystemObjectStore({"root": str(root)})


def files_under(path: Path) -> list[str]:
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())


class TestFilesystemObjectConformance(ObjectStoreConformance):
    def make_store(self, tmp_path: Path) -> FilesystemObjectStore:
        return make(tmp_path / "objects")


def test_default_root_is_resolved_against_the_current_directory(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    store = FilesystemObjectStore()
    assert store.root == tmp_path / ".agentenv" / "data" / "objects"
    store.put("runs/1/t.json", b"{}")
    assert (tmp_path / ".agentenv/data/objects/runs/1/t.json").read_bytes() == b"{}"


def test_list_of_a_store_never_written_is_empty(tmp_path: Path) -> None:
    store = make(tmp_path / "missing")
    assert store.list() == []
    assert store.list("runs/") == []
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize(
    "key",
    ["../outside", "../../etc/passwd", "a/../../outside", "/tmp/abs", "a\\..\\..\\outside", "a/./b", "a\x00b"],
)
def test_path_traversal_is_refused_before_touching_disk(tmp_path: Path, key: str) -> None:
    root = tmp_path / "inner" / "objects"
    store = make(root)
    with pytest.raises(ValueError, match="invalid object key"):
        store.put(key, b"evil")
    with pytest.raises(ValueError, match="invalid object key"):
        store.get(key)
    with pytest.raises(ValueError, match="invalid object key"):
        store.delete(key)
    assert files_under(tmp_path) == []


def test_bad_key_message_names_the_key_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as err:
        make(tmp_path).put("a//b", b"x")
    assert "'a//b'" in str(err.value) and "empty segment" in str(err.value)
    assert "runs/42/trajectory.json" in str(err.value)


def test_reserved_temporary_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="reserved"):
        make(tmp_path).put(f"runs/{TMP_PREFIX}x", b"x")


def test_non_bytes_data_is_refused(tmp_path: Path) -> None:
    store = make(tmp_path)
    with pytest.raises(TypeError, match="must be bytes"):
        store.put("a", "text")  # type: ignore[arg-type]
    store.put("b", bytearray(b"ok"))  # type: ignore[arg-type]
    assert store.get("b") == b"ok"
    with pytest.raises(TypeError, match="prefix"):
        store.list(None)  # type: ignore[arg-type]


def test_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    store = make(tmp_path)
    for i in range(5):
        store.put("runs/1/t.json", str(i).encode())
    assert files_under(tmp_path) == ["runs/1/t.json"]


def test_a_failed_write_keeps_the_old_object(tmp_path: Path, monkeypatch: Any) -> None:
    store = make(tmp_path)
    store.put("snap", b"old")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        store.put("snap", b"new")
    monkeypatch.undo()
    assert store.get("snap") == b"old"
    assert files_under(tmp_path) == ["snap"]


def test_stray_temporary_files_are_not_listed(tmp_path: Path) -> None:
    store = make(tmp_path)
    store.put("runs/a", b"a")
    (tmp_path / "runs" / f"{TMP_PREFIX}abc").write_bytes(b"half")
    (tmp_path / f"{TMP_PREFIX}dir").mkdir()
    (tmp_path / f"{TMP_PREFIX}dir" / "x").write_bytes(b"half")
    assert store.list() == ["runs/a"]


def test_object_and_folder_of_one_name_conflict_clearly(tmp_path: Path) -> None:
    store = make(tmp_path)
    store.put("runs/1", b"file")
    with pytest.raises(ValueError, match=r"object 'runs/1' exists"):
        store.put("runs/1/trajectory.json", b"x")
    store.put("snaps/a/b", b"x")
    with pytest.raises(ValueError, match="prefix"):
        store.put("snaps/a", b"x")
    assert store.list() == ["runs/1", "snaps/a/b"]


def test_delete_prunes_empty_folders_but_not_the_root(tmp_path: Path) -> None:
    root = tmp_path / "objects"
    store = make(root)
    store.put("a/b/c/d", b"x")
    store.put("a/keep", b"y")
    assert store.delete("a/b/c/d") is True
    assert not (root / "a" / "b").exists()
    assert (root / "a" / "keep").is_file()
    assert store.delete("a/keep") is True
    assert root.is_dir() and list(root.iterdir()) == []
    store.put("a", b"now a file")  # no leftover folder blocks this
    assert store.get("a") == b"now a file"


def test_a_folder_is_not_an_object(tmp_path: Path) -> None:
    store = make(tmp_path)
    store.put("runs/1/a", b"x")
    assert store.delete("runs/1") is False
    with pytest.raises(KeyError):
        store.get("runs")
    assert store.list() == ["runs/1/a"]


def test_list_with_malformed_prefix_folder_is_empty(tmp_path: Path) -> None:
    store = make(tmp_path / "objects")
    store.put("a/b", b"x")
    (tmp_path / "outside").write_bytes(b"x")
    assert store.list("../") == []
    assert store.list("a//") == []
    assert store.list("a/") == ["a/b"]


def test_threads_writing_and_deleting_in_shared_folders(tmp_path: Path) -> None:
    store = make(tmp_path)
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(60):
                key = f"shared/{i % 3}/t{t}-{i}"
                store.put(key, key.encode())
                assert store.get(key) == key.encode()
                if i % 2:
                    assert store.delete(key) is True
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(store.list("shared/")) == 8 * 30


def test_put_stream_of_chunks_writes_an_object_atomically(tmp_path: Path) -> None:
    """Issue 16: a long trajectory is written chunk by chunk (the runtime's `ChunkReader` over `put_stream`),
    never joined into one bytes object; a failure midway leaves the old object."""
    from agentenv_runtime.engine.records import ChunkReader

    store = FilesystemObjectStore({"root": str(tmp_path)})
    produced: list[int] = []

    def chunks() -> Any:
        for i in range(100):
            produced.append(i)
            yield f"line {i}\n".encode()

    store.put_stream("runs/r1/world.trajectory.jsonl", ChunkReader(chunks()))
    assert produced == list(range(100))
    assert store.get("runs/r1/world.trajectory.jsonl") == b"".join(f"line {i}\n".encode() for i in range(100))

    def failing() -> Any:
        yield b"partial"
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        store.put_stream("runs/r1/world.trajectory.jsonl", ChunkReader(failing()))
    assert store.get("runs/r1/world.trajectory.jsonl").startswith(b"line 0\n")  # the old object, untouched
    assert not [p for p in (tmp_path / "runs" / "r1").iterdir() if p.name.startswith(TMP_PREFIX)]
