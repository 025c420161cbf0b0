"""The `mongodb` document store against MongoDB wire-protocol servers: the whole conformance kit (a real `mongod`
where one is installed; mongoeco's server), the filters MongoDB really evaluates, the layout, and the error lines."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentenv_store_local.api import matches
from agentenv_store_mongo.document import INDEX, MongoDocumentStore, MongoSettings
from agentenv_store_mongo.errors import MongoStoreError
from agentenv_store_mongo.filters import mongo_filter
from agentenv_testing.services import free_port
from agentenv_testing.stores import DocumentStoreConformance
from mongo_faults import LOST, MongoFaultProxy
from mongo_servers import PASSWORD, USER
from pydantic import ValidationError
from pymongo import MongoClient

SECTION = "[plugins.agentenv-store-mongo.document]"


def fresh(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


class _MongoConformance(DocumentStoreConformance):
    """The kit on one server; each store gets a database of its own, and is closed after its test."""

    url = ""
    opened: list[MongoDocumentStore]

    def make_store(self, tmp_path: Path) -> MongoDocumentStore:
        return self.make_store_at(tmp_path, self.url)

    def upstream_url(self) -> str:
        return self.url.removeprefix("mongodb://").rstrip("/")

    def fault_proxy(self, upstream: str) -> MongoFaultProxy:
        return MongoFaultProxy(upstream)

    def make_store_at(self, tmp_path: Path, endpoint: str) -> MongoDocumentStore:
        store = MongoDocumentStore({"url": endpoint, "database": fresh("kit")})
        self.opened.append(store)
        return store

    def _serve(self, url: str) -> Iterator[None]:
        self.url, self.opened = url, []
        yield
        for store in self.opened:
            store.close()


class TestMongodConformance(_MongoConformance):
    """A real `mongod` (skipped, with the reason, where none is installed)."""

    @pytest.fixture(autouse=True)
    def _server(self, mongod: str) -> Iterator[None]:
        yield from self._serve(mongod)


class TestMongoecoConformance(_MongoConformance):
    """mongoeco's MongoDB wire-protocol server: a stand-in for mongod, spoken to by the real pymongo over TCP."""

    @pytest.fixture(autouse=True)
    def _server(self, mongoeco: str) -> Iterator[None]:
        yield from self._serve(mongoeco)


@pytest.fixture(params=["mongod", "mongoeco"])
def server(request: pytest.FixtureRequest) -> str:
    """The URL of each server in turn."""
    url: str = request.getfixturevalue(request.param)
    return url


@pytest.fixture
def store(server: str) -> Iterator[MongoDocumentStore]:
    with MongoDocumentStore({"url": server, "database": fresh("t")}) as opened:
        yield opened


# -- the filters MongoDB evaluates ------------------------------------------------------------------------------

TRICKY: list[dict[str, Any]] = [
    {"n": 1, "v": 1},
    {"n": 2, "v": 1.0},
    {"n": 3, "v": True},
    {"n": 4, "v": [1]},
    {"n": 5, "v": [True, 1]},
    {"n": 6, "v": None},
    {"n": 7},
    {"n": 8, "v": [None]},
    {"n": 9, "v": "x"},
    {"n": 10, "v": ["x"]},
    {"n": 11, "v": {"a": 1, "b": 2}},
    {"n": 12, "v": {"b": 2, "a": 1}},
    {"n": 13, "v": [{"a": 1, "b": 2}]},
    {"n": 14, "v": [1, 2]},
    {"n": 15, "v": [[1, 2]]},
    {"n": 16, "v": 0},
    {"n": 17, "v": False},
    {"n": 18, "v": ""},
    {"n": 19, "v": 2**40},
    {"n": 20, "a.b": 1, "$x": 2, "": 3},
]
WHERES: list[dict[str, Any]] = [
    {"v": 1},
    {"v": 1.0},
    {"v": True},
    {"v": False},
    {"v": 0},
    {"v": None},
    {"v": "x"},
    {"v": ""},
    {"v": 2**40},
    {"v": [1]},
    {"v": [1, 2]},
    {"v": []},
    {"v": {"a": 1, "b": 2}},
    {"v": {"b": 2, "a": 1}},
    {"v": 2**70},
    {"a.b": 1},
    {"$x": 2},
    {"": 3},
    {"v": 1, "n": 1},
]


def test_queries_keep_json_equality_where_mongodb_equality_differs(store: MongoDocumentStore) -> None:
    for doc in TRICKY:
        store.put("runs", f"d{doc['n']}", doc)
    for where in WHERES:
        expected = [doc["n"] for doc in reversed(TRICKY) if matches(doc, where)]
        assert [doc["n"] for doc in store.query("runs", where)] == expected, where
        assert [doc["n"] for doc in store.query("runs", where, limit=1)] == expected[:1], where


def test_scalar_conditions_are_answered_by_the_server_alone(store: MongoDocumentStore) -> None:
    """For scalar values the MongoDB filter is the whole query: run it raw, with no Python check after it."""
    for doc in TRICKY:
        store.put("runs", f"d{doc['n']}", doc)
    raw = store._docs  # the store's own collection, through the same client
    for where in ({"v": 1}, {"v": True}, {"v": None}, {"v": "x"}, {"v": 0}, {"v": False}, {"v": 2**40}):
        server, rest = mongo_filter("runs", where)
        assert rest == {}, where
        found = sorted(doc["doc"]["n"] for doc in raw.find(server))
        assert found == sorted(doc["n"] for doc in TRICKY if matches(doc, where)), where


def test_objects_and_lists_are_narrowed_in_the_server_and_compared_in_python() -> None:
    server, rest = mongo_filter("runs", {"v": [1, 2], "o": {"a": 1}, "s": "x", "a.b": 1})
    assert server == {
        "_id.c": "runs",
        "doc.v": {"$size": 2},
        "doc.o": {"$type": "object", "$not": {"$type": "array"}},
        "doc.s": {"$eq": "x", "$not": {"$type": "array"}},
    }
    assert rest == {"v": [1, 2], "o": {"a": 1}, "a.b": 1}


# -- layout, index, values ------------------------------------------------------------------------------------


def test_layout_and_index_in_mongodb(server: str) -> None:
    database = fresh("layout")
    with MongoDocumentStore({"url": server, "database": database, "collection": "records"}) as store:
        store.put("runs", "r1", {"status": "passed", "score": 1.0})
        store.put("steps", "r1", {"status": "ok"})
    with MongoClient(server) as client:
        raw = client[database]["records"]
        stored = raw.find_one({"_id": {"c": "runs", "id": "r1"}})
        assert stored is not None and stored["doc"] == {"status": "passed", "score": 1.0}
        assert isinstance(stored["seq"], int) and len(stored["rev"]) == 32
        assert raw.count_documents({}) == 2
        keys = {index["name"]: list(index["key"].items()) for index in raw.list_indexes()}
        assert keys[INDEX] == [("_id.c", 1), ("seq", -1)]


def test_sixty_four_bit_integers_come_back_as_plain_ints(store: MongoDocumentStore) -> None:
    store.put("runs", "big", {"n": 2**40, "nested": [{"m": -(2**62)}]})
    got = store.get("runs", "big")
    assert got == {"n": 2**40, "nested": [{"m": -(2**62)}]}
    assert type(got["n"]) is int and type(got["nested"][0]["m"]) is int


def test_documents_bson_cannot_hold_are_refused_naming_them(store: MongoDocumentStore) -> None:
    with pytest.raises(TypeError, match=r"document runs/huge cannot be stored in MongoDB"):
        store.put("runs", "huge", {"n": 2**70})
    with pytest.raises(TypeError, match=r"document runs/nan is not JSON-serialisable"):
        store.put("runs", "nan", {"n": float("nan")})
    with pytest.raises(TypeError, match=r"document runs/odd cannot be stored in MongoDB"):
        store.put_if("runs", "odd", {"key\x00": 1}, None)
    assert store.query("runs") == []


def test_a_foreign_document_is_listed_as_damaged(server: str) -> None:
    database = fresh("foreign")
    with MongoDocumentStore({"url": server, "database": database}) as store:
        store.put("runs", "good", {"status": "passed"})
        with MongoClient(server) as client:
            client[database]["agentenv_documents"].insert_one({"_id": {"c": "runs", "id": "bad"}, "seq": 2**62})
        listed = store.query("runs")
    assert listed[0]["id"] == "bad" and listed[0]["status"] == "damaged"
    assert listed[1] == {"status": "passed"}


def test_a_write_whose_answer_was_lost_is_not_reported_as_a_lost_race(server: str) -> None:
    """The conditional write reached the server but its answer did not: the retry finds its own revision stored
    (an insert's retry meets the duplicate key, a replace's retry a changed revision) and says it wrote."""
    proxy = MongoFaultProxy(server.removeprefix("mongodb://").rstrip("/")).start()
    try:
        with MongoDocumentStore({"url": proxy.url, "database": fresh("lost")}) as store:
            proxy.fail_next(1, LOST, "insert")
            assert store.put_if("runs", "r", {"n": 1}, None) is True
            proxy.fail_next(1, LOST, "update")
            assert store.put_if("runs", "r", {"n": 2}, {"n": 1}) is True
            proxy.fail_next(1, LOST, "update")
            store.put("runs", "r", {"n": 3})
            assert proxy.injected == 3
            assert store.get("runs", "r") == {"n": 3} and len(store.query("runs")) == 1
            assert store.put_if("runs", "r", {"n": 4}, {"n": 2}) is False  # a real lost race still says so
    finally:
        proxy.stop()


# -- errors ---------------------------------------------------------------------------------------------------


def one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(exc.value)
    assert "\n" not in message, message
    return message


def test_an_unreachable_server_is_one_line_naming_url() -> None:
    url = f"mongodb://127.0.0.1:{free_port()}/"
    with pytest.raises(MongoStoreError) as err:
        MongoDocumentStore({"url": url, "timeout_seconds": 0.5})
    message = one_line(err)
    assert "cannot reach the server" in message and f"`url` under {SECTION}" in message and url in message


def test_a_bad_connection_string_is_one_line_naming_url() -> None:
    with pytest.raises(MongoStoreError) as err:
        MongoDocumentStore({"url": "http://127.0.0.1:1/"})
    assert "`url` is not a usable connection string" in one_line(err)


def test_wrong_credentials_are_one_line_and_the_password_is_masked(mongoeco_auth: int) -> None:
    url = f"mongodb://{USER}:wrong-pw@127.0.0.1:{mongoeco_auth}/?authMechanism=SCRAM-SHA-256"
    with pytest.raises(MongoStoreError) as err:
        MongoDocumentStore({"url": url, "timeout_seconds": 3})
    message = one_line(err)
    assert "authentication failed" in message and "check the user, password and authSource in `url`" in message
    assert "wrong-pw" not in message and "****@127.0.0.1" in message


def test_no_user_on_a_server_that_requires_one_says_so(mongoeco_auth: int) -> None:
    with pytest.raises(MongoStoreError) as err:
        MongoDocumentStore({"url": f"mongodb://127.0.0.1:{mongoeco_auth}/", "timeout_seconds": 3})
    assert "the server requires a user" in one_line(err)


def test_the_right_credentials_work(mongoeco_auth: int) -> None:
    url = f"mongodb://{USER}:{PASSWORD}@127.0.0.1:{mongoeco_auth}/{fresh('auth')}?authMechanism=SCRAM-SHA-256"
    with MongoDocumentStore({"url": url}) as store:
        assert store.database.startswith("auth_")  # the database the URL names
        store.put("runs", "r", {"ok": True})
        assert store.get("runs", "r") == {"ok": True}


def test_settings_are_checked() -> None:
    with pytest.raises(ValidationError, match="colection"):
        MongoSettings.model_validate({"colection": "x"})
    with pytest.raises(ValidationError, match="no MongoDB collection name"):
        MongoSettings.model_validate({"collection": "system.records"})
    with pytest.raises(ValidationError, match="no MongoDB database name"):
        MongoSettings.model_validate({"database": "a.b"})


def test_plugin_registers_the_store_without_importing_pymongo() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from agentenv_store_mongo.plugin import agentenv_register_stores as r; "
        "refs = r(); print([(x.kind, x.name) for x in refs], 'pymongo' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[('document', 'mongodb')] False", done.stderr
