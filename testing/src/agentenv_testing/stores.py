"""Conformance kits for store backends: subclass one, provide `make_store`, and pytest runs the contract.

    from agentenv_testing.stores import ObjectStoreConformance

    class TestS3ObjectStore(ObjectStoreConformance):
        def make_store(self, tmp_path: Path) -> ObjectStore:
            return S3ObjectStore({"bucket": fresh_bucket(tmp_path.name)})

`make_store` must return an *empty* store (a fresh file, table, bucket or namespace) each time it is
called, so tests do not see each other's data; a test may call it twice, with different folders. The
secret kit's `make_store` also receives the secrets the store must resolve, since the contract has no
way to write one.

The tests use only the public contract in `agentenv.contracts.store` — no files, no paths — so one kit
checks local backends, cloud services and their emulators alike. The base classes are not named
`Test*`, so pytest collects only the subclasses. This module does not import pytest; test methods take
pytest's `tmp_path` fixture by name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from agentenv.contracts.store import DocumentStore, ImageStore, ObjectStore, SecretStore

E = TypeVar("E", bound=BaseException)

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def _raises(expected: type[E], call: Callable[[], object]) -> E:
    """The exception `call` raised, which must be an `expected`; AssertionError when none is raised."""
    try:
        call()
    except expected as exc:
        return exc
    raise AssertionError(f"expected {expected.__name__} from {call!r}, but nothing was raised")


def _names(message: str, value: str) -> bool:
    """Whether an error message names `value`, quoted or not."""
    return value in message or repr(value) in message


class DocumentStoreConformance:
    """The `DocumentStore` contract: JSON documents by collection and id, queried newest first."""

    def make_store(self, tmp_path: Path) -> DocumentStore:
        """Return a new, empty document store; override in the subclass."""
        raise NotImplementedError(f"{type(self).__name__} must define make_store(self, tmp_path)")

    def test_is_a_document_store(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        assert isinstance(store, DocumentStore)
        assert store.kind == "document"
        assert isinstance(store.name, str) and store.name

    def test_put_get_round_trip(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        doc: dict[str, Any] = {
            "run_id": "run-1",
            "status": "passed",
            "score": 0.75,
            "steps": 3,
            "ok": True,
            "error": None,
            "tags": ["a", "b"],
            "timing": {"start": "2026-01-01T00:00:00Z", "seconds": 1.5},
            "note": "naïve café ✓",
        }
        store.put("runs", "run-1", doc)
        assert store.get("runs", "run-1") == doc

    def test_get_missing_is_none(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        assert store.get("runs", "nope") is None
        store.put("runs", "run-1", {"n": 1})
        assert store.get("runs", "nope") is None
        assert store.get("other", "run-1") is None

    def test_put_replaces_the_whole_document(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        store.put("runs", "run-1", {"status": "running", "partial": True})
        store.put("runs", "run-1", {"status": "passed"})
        assert store.get("runs", "run-1") == {"status": "passed"}
        assert len(store.query("runs")) == 1

    def test_collections_are_separate(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        store.put("runs", "x", {"kind": "run"})
        store.put("steps", "x", {"kind": "step"})
        assert store.get("runs", "x") == {"kind": "run"}
        assert store.get("steps", "x") == {"kind": "step"}
        assert store.query("runs") == [{"kind": "run"}]
        assert store.delete("runs", "x") is True
        assert store.get("steps", "x") == {"kind": "step"}

    def test_delete(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        store.put("runs", "run-1", {"n": 1})
        store.put("runs", "run-2", {"n": 2})
        assert store.delete("runs", "run-1") is True
        assert store.get("runs", "run-1") is None
        assert store.delete("runs", "run-1") is False
        assert store.delete("runs", "never") is False
        assert store.query("runs") == [{"n": 2}]

    def test_query_filters_on_top_level_fields(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        store.put("runs", "1", {"task": "refund", "status": "passed", "attempt": 1, "flag": True})
        store.put("runs", "2", {"task": "refund", "status": "failed", "attempt": 2, "flag": False})
        store.put("runs", "3", {"task": "triage", "status": "passed", "attempt": 1, "flag": 1})
        store.put("runs", "4", {"task": "triage", "status": None, "attempt": 3})

        def ids(where: dict[str, Any]) -> list[str]:
            return sorted(f"{doc['task']}{doc['attempt']}" for doc in store.query("runs", where))

        assert ids({"status": "passed"}) == ["refund1", "triage1"]
        assert ids({"task": "refund", "status": "passed"}) == ["refund1"]
        assert ids({"attempt": 1}) == ["refund1", "triage1"]
        assert ids({"flag": True}) == ["refund1"], "booleans must not equal numbers"
        assert ids({"flag": False}) == ["refund2"]
        assert ids({"status": None}) == ["triage3"]
        assert ids({"status": "cancelled"}) == []
        assert ids({"no_such_field": "x"}) == []
        assert store.query("other", {"status": "passed"}) == []

    def test_query_returns_newest_first(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        for name in ("a", "b", "c"):
            store.put("runs", name, {"name": name, "group": "g"})
        assert [d["name"] for d in store.query("runs")] == ["c", "b", "a"]
        store.put("runs", "a", {"name": "a", "group": "g", "rerun": True})
        assert [d["name"] for d in store.query("runs")] == ["a", "c", "b"]
        assert [d["name"] for d in store.query("runs", {"group": "g"})] == ["a", "c", "b"]

    def test_query_limit(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        for i in range(5):
            store.put("runs", f"run-{i}", {"i": i, "even": i % 2 == 0})
        assert [d["i"] for d in store.query("runs", limit=2)] == [4, 3]
        assert [d["i"] for d in store.query("runs", {"even": True}, limit=2)] == [4, 2]
        assert [d["i"] for d in store.query("runs", limit=50)] == [4, 3, 2, 1, 0]

    def test_query_without_where_returns_the_collection(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        assert store.query("runs") == []
        store.put("runs", "1", {"n": 1})
        store.put("steps", "1", {"n": 2})
        assert store.query("runs") == [{"n": 1}]
        assert store.query("runs", {}) == [{"n": 1}]
        assert store.query("runs", None) == [{"n": 1}]

    def test_returned_documents_are_copies(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        doc: dict[str, Any] = {"tags": ["a"], "n": 1}
        store.put("runs", "1", doc)
        doc["tags"].append("mutated-after-put")
        got = store.get("runs", "1")
        assert got is not None and got == {"tags": ["a"], "n": 1}
        got["n"] = 99
        store.query("runs")[0]["n"] = 98
        assert store.get("runs", "1") == {"tags": ["a"], "n": 1}


class ObjectStoreConformance:
    """The `ObjectStore` contract: bytes by portable `/`-separated key; listing by prefix."""

    bad_keys: tuple[str, ...] = ("", "/abs/key", "../escape", "a/../b", "a/..", "a\\b", "a//b", "a/")
    """Keys every backend refuses (ValueError naming the key), so objects stay portable."""

    def make_store(self, tmp_path: Path) -> ObjectStore:
        """Return a new, empty object store; override in the subclass."""
        raise NotImplementedError(f"{type(self).__name__} must define make_store(self, tmp_path)")

    def test_is_an_object_store(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        assert isinstance(store, ObjectStore)
        assert store.kind == "object"
        assert isinstance(store.name, str) and store.name

    def test_round_trip_of_any_bytes(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        blob = bytes(range(256)) * 17
        store.put("runs/1/trajectory.bin", blob)
        store.put("runs/1/empty", b"")
        assert store.get("runs/1/trajectory.bin") == blob
        assert store.get("runs/1/empty") == b""

    def test_missing_key_raises_key_error(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        err = _raises(KeyError, lambda: store.get("runs/none"))
        assert err.args == ("runs/none",)
        store.put("runs/1/a", b"x")
        assert _raises(KeyError, lambda: store.get("runs/1")).args == ("runs/1",)
        assert _raises(KeyError, lambda: store.get("runs/1/b")).args == ("runs/1/b",)

    def test_put_overwrites(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        store.put("snapshots/s1", b"first version, longer")
        store.put("snapshots/s1", b"second")
        assert store.get("snapshots/s1") == b"second"
        assert store.list("snapshots/") == ["snapshots/s1"]

    def test_list_by_prefix_is_sorted(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        keys = ["runs/2/b.json", "runs/10/x.json", "runs/1/a.json", "runsheet.txt", "snapshots/s1", "a"]
        for key in keys:
            store.put(key, key.encode())
        assert store.list() == sorted(keys)
        assert store.list("") == sorted(keys)
        assert store.list("runs/") == ["runs/1/a.json", "runs/10/x.json", "runs/2/b.json"]
        assert store.list("runs/1") == ["runs/1/a.json", "runs/10/x.json"]
        assert store.list("runs") == ["runs/1/a.json", "runs/10/x.json", "runs/2/b.json", "runsheet.txt"]
        assert store.list("runs/2/b.json") == ["runs/2/b.json"]
        assert store.list("nothing/") == []

    def test_delete(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        store.put("runs/1/a", b"a")
        store.put("runs/1/b", b"b")
        assert store.delete("runs/1/a") is True
        assert store.delete("runs/1/a") is False
        assert store.delete("runs/never") is False
        _raises(KeyError, lambda: store.get("runs/1/a"))
        assert store.list() == ["runs/1/b"]
        assert store.delete("runs/1/b") is True
        assert store.list() == []

    def test_keys_with_dots_and_depth(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        keys = ["a/b.c/d.e.json", "x/y/z/w/v", ".hidden", "v1.2/file..name", "sp ace/ü-ni_code@1"]
        for key in keys:
            store.put(key, key.encode("utf-8"))
        for key in keys:
            assert store.get(key) == key.encode("utf-8")
        assert store.list() == sorted(keys)

    def test_bad_keys_are_refused(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        store.put("ok/key", b"kept")
        for key in self.bad_keys:
            for call in (partial(store.put, key, b"x"), partial(store.get, key), partial(store.delete, key)):
                err = _raises(ValueError, call)
                assert _names(str(err), key), f"error for bad key {key!r} does not name it: {err}"
        assert store.list() == ["ok/key"]
        assert store.get("ok/key") == b"kept"


class SecretStoreConformance:
    """The `SecretStore` contract: `get(key)` returns the secret's exact value, or None."""

    def make_store(self, tmp_path: Path, secrets: Mapping[str, str]) -> SecretStore:
        """Return a store in which exactly `secrets` resolve; override in the subclass."""
        raise NotImplementedError(f"{type(self).__name__} must define make_store(self, tmp_path, secrets)")

    def test_is_a_secret_store(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path, {})
        assert isinstance(store, SecretStore)
        assert store.kind == "secret"
        assert isinstance(store.name, str) and store.name

    def test_known_keys_resolve(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path, {"API_TOKEN": "tok-123", "DB_PASSWORD": "hunter2"})
        assert store.get("API_TOKEN") == "tok-123"
        assert store.get("DB_PASSWORD") == "hunter2"

    def test_missing_key_is_none(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path, {"API_TOKEN": "tok-123"})
        assert store.get("AGENTENV_CONFORMANCE_NOT_SET") is None
        (tmp_path / "empty").mkdir()
        empty = self.make_store(tmp_path / "empty", {})
        assert empty.get("API_TOKEN") is None

    def test_values_are_returned_exactly(self, tmp_path: Path) -> None:
        values = {
            "SPACES": "  padded value  ",
            "SYMBOLS": "p@ss=w0rd#!$%^&*()'\"\\",
            "UNICODE": "clé ✓ 密码",
            "MULTILINE": "line one\nline two",
        }
        store = self.make_store(tmp_path, values)
        for key, value in values.items():
            assert store.get(key) == value, key

    def test_get_is_repeatable(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path, {"API_TOKEN": "tok-123"})
        assert [store.get("API_TOKEN") for _ in range(3)] == ["tok-123"] * 3


class ImageStoreConformance:
    """The `ImageStore` contract: archives by `name:tag` or digest; `sha256:` digests; sorted refs."""

    bad_refs: tuple[str, ...] = ("no-tag", "Upper/Case:1", "name:", ":tag", "name:bad tag", "a:b:c", "")
    """References every backend refuses with ValueError."""

    def make_store(self, tmp_path: Path) -> ImageStore:
        """Return a new, empty image store; override in the subclass."""
        raise NotImplementedError(f"{type(self).__name__} must define make_store(self, tmp_path)")

    def test_is_an_image_store(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        assert isinstance(store, ImageStore)
        assert store.kind == "image"
        assert isinstance(store.name, str) and store.name
        assert store.list() == []

    def test_put_returns_a_stable_sha256_digest(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        first = store.put("agentenv/slack:0.1.0", b"archive one")
        assert _DIGEST.fullmatch(first), first
        assert store.put("agentenv/slack:0.1.0", b"archive one") == first
        other = store.put("agentenv/slack:0.2.0", b"archive two")
        assert _DIGEST.fullmatch(other) and other != first

    def test_get_by_ref_and_by_digest(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        data = bytes(range(256)) * 8
        digest = store.put("agentenv/email:1.0", data)
        assert store.get("agentenv/email:1.0") == data
        assert store.get(digest) == data

    def test_missing_raises_key_error(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        assert _raises(KeyError, lambda: store.get("agentenv/none:latest")).args == ("agentenv/none:latest",)
        absent = "sha256:" + hashlib.sha256(b"never stored").hexdigest()
        assert _raises(KeyError, lambda: store.get(absent)).args == (absent,)
        store.put("agentenv/slack:1", b"x")
        _raises(KeyError, lambda: store.get("agentenv/slack:2"))

    def test_retag_points_at_new_content(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        old = store.put("agentenv/slack:latest", b"old")
        new = store.put("agentenv/slack:latest", b"new")
        assert store.get("agentenv/slack:latest") == b"new"
        assert store.get(new) == b"new"
        assert old != new
        assert store.list() == ["agentenv/slack:latest"]

    def test_list_is_sorted_and_shares_content(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        refs = ["zeta:1", "agentenv/slack:latest", "agentenv/slack:0.1.0", "alpha:v2"]
        digests = {ref: store.put(ref, b"same bytes") for ref in refs}
        assert store.list() == sorted(refs)
        assert len(set(digests.values())) == 1

    def test_bad_refs_are_refused(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        for ref in self.bad_refs:
            _raises(ValueError, partial(store.put, ref, b"x"))
            _raises(ValueError, partial(store.get, ref))
        _raises(ValueError, lambda: store.get("sha256:not-hex"))
        assert store.list() == []
