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
import io
import re
import threading
import time
import tracemalloc
import unittest
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, cast

from agentenv.contracts import DocumentStore, ImageStore, ObjectStore, SecretStore

from agentenv_testing.faults import Fault, FaultProxy

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


def _eventually(check: Callable[[], bool], seconds: float) -> bool:
    """Whether `check` holds within `seconds` (polled): listings of real services may lag behind writes."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def _in_parallel(calls: list[Callable[[], object]], workers: int = 8) -> list[object]:
    """Run `calls` on `workers` threads; their results in order (the first exception is raised)."""
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda call: call(), calls))


class _FaultsMixin:
    """Retries under injected faults, for any kit whose backend talks HTTP to a service.

    A subclass returns its emulator's URL from `upstream_url` and builds a store on another endpoint in
    `make_store_at`; the kit puts a `FaultProxy` between them. Local backends have no such path, so the
    test is skipped for them. A store on another protocol overrides `fault_proxy` (the Firestore tests use a gRPC
    proxy).
    """

    throttle: Fault = Fault(429, b"Too Many Requests")
    """What the service answers when it throttles (S3: 503 SlowDown; DynamoDB: 400 ThrottlingException)."""

    def upstream_url(self) -> str | None:
        """The emulator's address (http://HOST:PORT for the default proxy); None when the store talks to no service."""
        return None

    def make_store_at(self, tmp_path: Path, endpoint: str) -> Any:
        """An empty store talking to `endpoint` instead of the emulator; override with `upstream_url`."""
        raise NotImplementedError(f"{type(self).__name__} must define make_store_at(self, tmp_path, endpoint)")

    def fault_proxy(self, upstream: str) -> Any:
        """The proxy to put in front of `upstream` (not started): HTTP/1.1 by default. A store that speaks another
        protocol (gRPC) returns a proxy with the same `url`, `fail_next`, `injected`, `start` and `stop`."""
        return FaultProxy(upstream)

    def _faulty(self, tmp_path: Path) -> tuple[Any, Any]:
        upstream = self.upstream_url()
        if upstream is None:
            raise unittest.SkipTest(
                f"{type(self).__name__}: the store talks to no network service to inject faults into"
            )
        proxy = self.fault_proxy(upstream).start()
        return self.make_store_at(tmp_path, proxy.url), proxy


class DocumentStoreConformance(_FaultsMixin):
    """The `DocumentStore` contract: JSON documents by collection and id, queried newest first."""

    writers: int = 8
    """Concurrent compare-and-set writers in the lost-update test."""
    many: int = 1_050
    """Documents written by the pagination test: past the 1,000 a page of most services holds."""
    listing_seconds: float = 10.0
    """How long a query may lag behind a write on an eventually consistent service."""

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

    def test_put_if_creates_only_when_absent(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        assert store.put_if("runs", "r", {"n": 1}, None) is True
        assert store.put_if("runs", "r", {"n": 2}, None) is False
        assert store.get("runs", "r") == {"n": 1}

    def test_put_if_compares_the_stored_document(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        store.put("runs", "r", {"status": "running", "steps": [1]})
        assert store.put_if("runs", "r", {"status": "passed"}, {"status": "failed", "steps": [1]}) is False
        assert store.put_if("runs", "r", {"status": "passed"}, {"status": "running"}) is False
        assert store.get("runs", "r") == {"status": "running", "steps": [1]}
        assert store.put_if("runs", "r", {"status": "passed"}, {"status": "running", "steps": [1]}) is True
        assert store.get("runs", "r") == {"status": "passed"}
        assert [d["status"] for d in store.query("runs")] == ["passed"]
        store.delete("runs", "r")
        assert store.put_if("runs", "r", {"status": "x"}, {"status": "passed"}) is False
        assert store.get("runs", "r") is None

    def test_concurrent_writers_lose_no_update(self, tmp_path: Path) -> None:
        """`writers` threads each add themselves to one document by compare-and-set; none is lost."""
        store = self.make_store(tmp_path)
        store.put("counters", "c", {"count": 0, "by": []})
        rounds = 5
        conflicts = [0]
        lock = threading.Lock()

        def writer(name: str) -> None:
            for i in range(rounds):
                while True:
                    seen = store.get("counters", "c")
                    assert seen is not None
                    new = {"count": seen["count"] + 1, "by": [*seen["by"], f"{name}-{i}"]}
                    if store.put_if("counters", "c", new, seen):
                        break
                    with lock:
                        conflicts[0] += 1

        _in_parallel([partial(writer, f"w{n}") for n in range(self.writers)], workers=self.writers)
        final = store.get("counters", "c")
        assert final is not None
        assert final["count"] == self.writers * rounds, f"lost updates ({conflicts[0]} conflicts retried)"
        assert sorted(final["by"]) == sorted(f"w{n}-{i}" for n in range(self.writers) for i in range(rounds))

    def test_query_pages_past_a_thousand(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        _in_parallel([partial(store.put, "runs", f"run-{i:05d}", {"i": i, "odd": i % 2}) for i in range(self.many)])
        assert _eventually(lambda: len(store.query("runs")) == self.many, self.listing_seconds)
        docs = store.query("runs")
        assert sorted(d["i"] for d in docs) == list(range(self.many))
        assert len(store.query("runs", {"odd": 1})) == self.many // 2
        assert len(store.query("runs", {"odd": 0}, limit=self.many - 10)) == (self.many + 1) // 2
        assert len(store.query("runs", limit=1_001)) == 1_001

    def test_query_sees_a_write_eventually(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        store.put("runs", "a", {"name": "a"})
        assert _eventually(lambda: [d["name"] for d in store.query("runs")] == ["a"], self.listing_seconds)
        store.put("runs", "b", {"name": "b"})
        assert _eventually(lambda: [d["name"] for d in store.query("runs")] == ["b", "a"], self.listing_seconds)

    def test_retries_through_server_errors_and_throttling(self, tmp_path: Path) -> None:
        store, proxy = self._faulty(tmp_path)
        try:
            proxy.fail_next(2)
            store.put("runs", "r", {"n": 1})
            proxy.fail_next(2, self.throttle)
            assert store.get("runs", "r") == {"n": 1}
            proxy.fail_next(1)
            assert store.query("runs") == [{"n": 1}]
            assert proxy.injected == 5
        finally:
            proxy.stop()


class ObjectStoreConformance(_FaultsMixin):
    """The `ObjectStore` contract: bytes by portable `/`-separated key; listing by prefix."""

    many: int = 1_050
    """Objects written by the pagination test: past S3's and Cloud Storage's 1,000 keys a page."""
    large_bytes: int = 100 * 2**20
    """Size of the streamed object; 0 skips the test (one run per backend is enough)."""
    listing_seconds: float = 10.0
    """How long a listing may lag behind a write on an eventually consistent service."""

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

    def test_stream_round_trip_and_ranged_reads(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        blob = bytes(range(256)) * 40
        store.put_stream("runs/1/stream.bin", io.BytesIO(blob))
        assert store.get("runs/1/stream.bin") == blob

        def read(start: int = 0, end: int | None = None) -> bytes:
            sink = io.BytesIO()
            count = store.get_stream("runs/1/stream.bin", sink, start, end)
            assert count == len(sink.getvalue())
            return sink.getvalue()

        assert read() == blob
        assert read(10) == blob[10:]
        assert read(0, 100) == blob[:100]
        assert read(5000, 5100) == blob[5000:5100]
        assert read(len(blob) - 3) == blob[-3:]
        assert read(7, 7) == b""
        assert read(len(blob)) == b""
        assert read(len(blob) - 1, len(blob) + 50) == blob[-1:]
        store.put("runs/1/empty", b"")
        sink = io.BytesIO()
        assert store.get_stream("runs/1/empty", sink) == 0 and sink.getvalue() == b""
        assert _raises(KeyError, lambda: store.get_stream("runs/1/none", io.BytesIO())).args == ("runs/1/none",)
        _raises(ValueError, lambda: store.get_stream("runs/1/stream.bin", io.BytesIO(), 10, 5))
        _raises(ValueError, lambda: store.get_stream("runs/1/stream.bin", io.BytesIO(), -1))
        _raises(ValueError, lambda: store.put_stream("../bad", io.BytesIO(b"x")))

    def test_large_object_is_streamed_not_held_in_memory(self, tmp_path: Path) -> None:
        if not self.large_bytes:
            raise unittest.SkipTest(f"{type(self).__name__}: large_bytes = 0")
        store = self.make_store(tmp_path)
        size = self.large_bytes
        tracemalloc.start()
        try:
            store.put_stream("big/object.bin", io.BufferedReader(_PatternReader(size)))
            sink = _HashingSink()
            assert store.get_stream("big/object.bin", cast(BinaryIO, sink)) == size
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert sink.size == size
        assert sink.digest() == _PatternReader.sha256_of(size), "the object read back differs from what was written"
        assert peak < size // 2, f"streaming {size >> 20} MiB peaked at {peak >> 20} MiB of Python memory"
        tail = io.BytesIO()
        store.get_stream("big/object.bin", tail, size - 1000)
        assert tail.getvalue() == _PatternReader.slice(size - 1000, size)
        assert store.delete("big/object.bin") is True

    def test_list_pages_past_a_thousand(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        keys = [f"many/{i:05d}.json" for i in range(self.many)]
        _in_parallel([partial(store.put, key, b"{}") for key in keys])
        store.put("other/x", b"x")
        assert _eventually(lambda: len(store.list("many/")) == self.many, self.listing_seconds)
        assert store.list("many/") == keys
        assert store.list() == [*keys, "other/x"]
        assert store.list("many/0100") == keys[1000:1010]
        assert store.list("many/0010") == keys[100:110]

    def test_list_sees_a_write_eventually(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        store.put("runs/a", b"a")
        assert _eventually(lambda: store.list("runs/") == ["runs/a"], self.listing_seconds)
        store.delete("runs/a")
        assert _eventually(lambda: store.list("runs/") == [], self.listing_seconds)

    def test_retries_through_server_errors_and_throttling(self, tmp_path: Path) -> None:
        store, proxy = self._faulty(tmp_path)
        try:
            proxy.fail_next(2)
            store.put("runs/r", b"payload")
            proxy.fail_next(2, self.throttle)
            assert store.get("runs/r") == b"payload"
            proxy.fail_next(1)
            assert store.list("runs/") == ["runs/r"]
            assert proxy.injected == 5
        finally:
            proxy.stop()


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


class _PatternReader(io.RawIOBase):
    """`size` bytes of a fixed pattern, produced as they are read: a large source that is never in memory."""

    BLOCK = hashlib.sha256(b"agentenv").digest() * 32768  # 1 MiB

    def __init__(self, size: int) -> None:
        self.size = size
        self.pos = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        count = min(len(view), self.size - self.pos)
        done = 0
        while done < count:
            offset = (self.pos + done) % len(self.BLOCK)
            take = min(count - done, len(self.BLOCK) - offset)
            view[done : done + take] = self.BLOCK[offset : offset + take]
            done += take
        self.pos += count
        return count

    @classmethod
    def chunks(cls, start: int, end: int) -> Iterator[bytes]:
        while start < end:
            offset = start % len(cls.BLOCK)
            take = min(end - start, len(cls.BLOCK) - offset)
            yield cls.BLOCK[offset : offset + take]
            start += take

    @classmethod
    def slice(cls, start: int, end: int) -> bytes:
        return b"".join(cls.chunks(start, end))

    @classmethod
    def sha256_of(cls, size: int) -> str:
        digest = hashlib.sha256()
        for chunk in cls.chunks(0, size):
            digest.update(chunk)
        return digest.hexdigest()


class _HashingSink(io.RawIOBase):
    """A sink that keeps only the SHA-256 and the size of what was written to it."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        view = memoryview(data)
        self._hash.update(view)
        self.size += view.nbytes
        return view.nbytes

    def digest(self) -> str:
        return self._hash.hexdigest()
