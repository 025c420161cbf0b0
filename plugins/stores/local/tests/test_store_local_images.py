"""The `local` image store: the kernel's conformance kit plus layout, integrity and locking."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from agentenv_store_local._files import StoreFileError
from agentenv_store_local.images import LocalImageStore, check_ref
from agentenv_testing.stores import ImageStoreConformance


def make(root: Path) -> LocalImageStore:
    return LocalImageStore({"root": str(root)})


class TestLocalImageConformance(ImageStoreConformance):
    def make_store(self, tmp_path: Path) -> LocalImageStore:
        return make(tmp_path / "images")


def test_digest_is_the_sha256_of_the_archive_stored_once(tmp_path: Path) -> None:
    store = make(tmp_path)
    data = b"pretend this is a tarball"
    hexdigest = hashlib.sha256(data).hexdigest()
    assert store.put("agentenv/slack:0.1.0", data) == f"sha256:{hexdigest}"
    assert store.put("agentenv/slack:latest", data) == f"sha256:{hexdigest}"
    assert [p.name for p in (tmp_path / "blobs" / "sha256").iterdir()] == [hexdigest]
    index = json.loads((tmp_path / "index.json").read_text())
    assert index == {
        "version": 1,
        "refs": {"agentenv/slack:0.1.0": f"sha256:{hexdigest}", "agentenv/slack:latest": f"sha256:{hexdigest}"},
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == [".index.lock", "blobs", "index.json"]


def test_default_root_and_persistence(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    LocalImageStore().put("app:1", b"x")
    assert (tmp_path / ".agentenv/data/images/index.json").is_file()
    assert LocalImageStore().get("app:1") == b"x"


@pytest.mark.parametrize(
    "ref",
    [
        "app:1",
        "agentenv/slack:0.1.0",
        "localhost:5000/agentenv/slack:dev",
        "ghcr.io/acme/app-server:v1.2.3-rc.1",
        "a__b/c.d/e--f:_tag",
        "x:" + "t" * 128,
    ],
)
def test_valid_references(ref: str) -> None:
    assert check_ref(ref) == "tag"


@pytest.mark.parametrize(
    "ref",
    [
        "app",
        "App:1",
        "app:",
        "app:-tag",
        "app:" + "t" * 129,
        "app@sha256:" + "0" * 64,
        "/app:1",
        "app/:1",
        "a" * 256 + ":1",
        "app:t/ag",
        "app: tag",
    ],
)
def test_invalid_references_explain_the_format(tmp_path: Path, ref: str) -> None:
    with pytest.raises(ValueError, match="expected 'name:tag'") as err:
        make(tmp_path).get(ref)
    assert repr(ref) in str(err.value)
    assert "agentenv/slack:0.1.0" in str(err.value)


def test_digests_cannot_be_pushed_to_and_must_be_well_formed(tmp_path: Path) -> None:
    store = make(tmp_path)
    digest = "sha256:" + "a" * 64
    with pytest.raises(ValueError, match="expected 'name:tag',"):
        store.put(digest, b"x")
    with pytest.raises(ValueError, match="invalid image digest"):
        store.get("sha256:" + "A" * 64)
    with pytest.raises(ValueError, match="invalid image digest"):
        store.get("sha256:" + "a" * 63)
    with pytest.raises(TypeError, match="must be bytes"):
        store.put("app:1", "text")  # type: ignore[arg-type]
    assert store.list() == []


def test_corrupt_index_is_reported(tmp_path: Path) -> None:
    store = make(tmp_path)
    store.put("app:1", b"x")
    (tmp_path / "index.json").write_text("{not json")
    with pytest.raises(StoreFileError, match=r"index\.json is corrupt") as err:
        store.list()
    assert "push the images again" in str(err.value)
    (tmp_path / "index.json").write_text('{"refs": {"app:1": 5}}')
    with pytest.raises(StoreFileError, match="corrupt"):
        store.get("app:1")


def test_tampered_or_missing_blob_is_reported(tmp_path: Path) -> None:
    store = make(tmp_path)
    digest = store.put("app:1", b"original")
    blob = tmp_path / "blobs" / "sha256" / digest.removeprefix("sha256:")
    blob.write_bytes(b"tampered")
    with pytest.raises(StoreFileError, match="does not match its digest"):
        store.get("app:1")
    blob.unlink()
    with pytest.raises(StoreFileError, match="is missing"):
        store.get("app:1")
    with pytest.raises(KeyError):
        store.get(digest)


def test_threads_pushing_tags_at_once_lose_none(tmp_path: Path) -> None:
    store = make(tmp_path)
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(15):
                store.put(f"app{t}:v{i}", f"{t}-{i}".encode())
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(store.list()) == 6 * 15
    assert store.get("app3:v7") == b"3-7"


def test_processes_pushing_tags_at_once_lose_none(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys
        from agentenv_store_local.images import LocalImageStore
        store = LocalImageStore({"root": sys.argv[1]})
        for i in range(20):
            store.put(f"proc{sys.argv[2]}:v{i}", f"{sys.argv[2]}-{i}".encode())
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(tmp_path), str(p)], stderr=subprocess.PIPE)
        for p in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    store = make(tmp_path)
    assert len(store.list()) == 4 * 20
    assert store.get("proc2:v19") == b"2-19"
