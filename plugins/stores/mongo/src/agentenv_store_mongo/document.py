"""MongoDB document store: every agentenv collection in one MongoDB collection, filtered and ordered by MongoDB.

One MongoDB document per agentenv document:

    _id   {"c": collection, "id": doc_id}   the key (always written in this order, so equality on it works)
    doc   the document itself, as a BSON sub-document: queries filter on its fields in the server
    seq   write order: nanoseconds since the epoch, strictly increasing within a process
    rev   a random revision, new on every write; compare-and-set writes on the condition that it is unchanged

The index `agentenv_newest` on (`_id.c`, `seq` descending) answers "newest first" for one collection. Writes from
two machines within their clock skew may list in either order, as with the other network stores.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from agentenv.contracts import DocumentStore
from agentenv_store_local.api import check_names, check_query, dump_document, matches, next_write_stamp, same_document
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentenv_store_mongo.errors import MongoStoreError, explain, retrying
from agentenv_store_mongo.filters import mongo_filter

T = TypeVar("T")
INDEX = "agentenv_newest"
_NOT_IN_DATABASE_NAMES = set('/\\. "$*<>:|?\x00')


class MongoSettings(BaseModel):
    """Settings of the `mongodb` document store (`[plugins.agentenv-store-mongo.document]`)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        "mongodb://127.0.0.1:27017/",
        description="Connection string (mongodb:// or mongodb+srv://); with a password, write it as env:NAME or "
        "secret:KEY. Its options (replicaSet, tls, authSource, w, …) are pymongo's.",
    )
    database: str | None = Field(None, description="Database; default: the one `url` names, else `agentenv`.")
    collection: str = Field(
        "agentenv_documents", min_length=1, max_length=200, description="MongoDB collection holding every one."
    )
    create_indexes: bool = Field(True, description="Create the `agentenv_newest` index when the store opens.")
    timeout_seconds: float = Field(10.0, gt=0, description="How long to wait for a server, and for one answer.")
    max_attempts: int = Field(5, ge=1, le=20, description="Attempts per call, with backoff on transient errors.")

    @field_validator("database")
    @classmethod
    def _database_name(cls, name: str | None) -> str | None:
        if name is not None and (not 0 < len(name) < 64 or _NOT_IN_DATABASE_NAMES & set(name)):
            banned = " ".join(sorted(_NOT_IN_DATABASE_NAMES - {"\x00"}))
            raise ValueError(f"{name!r} is no MongoDB database name (1 to 63 characters, none of: {banned} NUL)")
        return name

    @field_validator("collection")
    @classmethod
    def _collection_name(cls, name: str) -> str:
        if "$" in name or "\x00" in name or name.startswith("system."):
            raise ValueError(f"{name!r} is no MongoDB collection name (no '$', no NUL, not 'system.…')")
        return name


class MongoDocumentStore(DocumentStore[MongoSettings]):
    """Run and step records as documents in MongoDB; `query` filters and orders in the server."""

    name = "mongodb"
    description = "Documents in one MongoDB collection; queries filtered and ordered by MongoDB (pymongo)."
    Settings = MongoSettings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        from pymongo import MongoClient
        from pymongo.errors import PyMongoError

        super().__init__(settings)
        self.config = self.settings  # typed by the class parameter, validated once
        self.database = self.config.database or "agentenv"
        seconds_ms = int(self.config.timeout_seconds * 1000)
        try:
            self._client: Any = MongoClient(
                self.config.url,
                appname="agentenv",
                serverSelectionTimeoutMS=seconds_ms,
                connectTimeoutMS=seconds_ms,
                socketTimeoutMS=seconds_ms,
            )
            self.database = self.config.database or self._client.get_default_database("agentenv").name
            self._docs = self._client[self.database][self.config.collection]
            self._call("connect", lambda: self._client[self.database].command("ping"))
            if self.config.create_indexes:
                keys = [("_id.c", 1), ("seq", -1)]
                self._call("create the index", lambda: self._docs.create_index(keys, name=INDEX))
        except (PyMongoError, MongoStoreError) as exc:
            self.close()
            if isinstance(exc, MongoStoreError):
                raise
            raise explain(exc, self.config.url, self.database, "connect") from exc

    def close(self) -> None:
        """Close the client's connections and monitor threads (the store cannot be used afterwards)."""
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()

    def __enter__(self) -> MongoDocumentStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _call(self, what: str, call: Callable[[], T]) -> T:
        """`call()` with retries on transient errors; any other failure becomes one MongoStoreError line."""
        from bson.errors import InvalidDocument
        from pymongo.errors import PyMongoError

        try:
            return retrying(call, self.config.max_attempts)
        except (PyMongoError, InvalidDocument) as exc:
            raise explain(exc, self.config.url, self.database, what) from exc

    def _new(self, collection: str, doc_id: str, doc: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
        """(the key, the stored fields) of a write; refused here, naming the document, when BSON cannot hold it."""
        import bson

        check_names(collection, doc_id)
        text = dump_document(doc, collection, doc_id)  # the JSON checks every store makes, and a deep copy
        body = {"seq": next_write_stamp(), "rev": uuid.uuid4().hex, "doc": json.loads(text)}
        try:
            bson.encode(body)
        except (bson.errors.InvalidDocument, OverflowError, UnicodeEncodeError) as exc:
            raise TypeError(f"document {collection}/{doc_id} cannot be stored in MongoDB: {exc}") from exc
        return _id(collection, doc_id), body

    def put(self, collection: str, doc_id: str, doc: dict[str, Any]) -> None:
        from pymongo.errors import DuplicateKeyError

        key, body = self._new(collection, doc_id, doc)

        def upsert() -> None:
            try:
                self._docs.replace_one({"_id": key}, body, upsert=True)
            except DuplicateKeyError:  # two first writes raced (servers before 4.2): the document exists now
                self._docs.replace_one({"_id": key}, body, upsert=True)

        self._call(f"put {collection}/{doc_id}", upsert)

    def put_if(self, collection: str, doc_id: str, doc: dict[str, Any], expected: dict[str, Any] | None) -> bool:
        """Read the stored document and its revision, compare the document in Python (JSON equality, as every
        store does), then write in one MongoDB operation conditioned on that revision: an insert when it was
        absent (the unique `_id` refuses a racing creator), a replace matching `_id` and `rev` otherwise.

        A write whose answer was lost and that is retried cannot tell "someone else won" from "my first attempt
        landed" by its own result, so it then checks whether the stored revision is the one it wrote."""
        from pymongo.errors import DuplicateKeyError

        key, body = self._new(collection, doc_id, doc)
        what = f"put {collection}/{doc_id}"
        stored = self._call(what, lambda: self._docs.find_one({"_id": key}, {"doc": 1, "rev": 1}))
        if not same_document(None if stored is None else _document(stored), expected):
            return False
        attempts = 0

        def write() -> bool:
            nonlocal attempts
            attempts += 1
            try:
                if stored is None:
                    self._docs.insert_one({"_id": key, **body})
                    wrote = True
                else:
                    wrote = self._docs.replace_one({"_id": key, "rev": stored.get("rev")}, body).matched_count == 1
            except DuplicateKeyError:
                wrote = False
            if not wrote and attempts > 1:
                wrote = self._docs.find_one({"_id": key, "rev": body["rev"]}, {"_id": 1}) is not None
            return wrote

        return self._call(what, write)

    def get(self, collection: str, doc_id: str) -> dict[str, Any] | None:
        check_names(collection, doc_id)
        found = self._call(
            f"get {collection}/{doc_id}", lambda: self._docs.find_one({"_id": _id(collection, doc_id)}, {"doc": 1})
        )
        return None if found is None else _document(found)

    def query(
        self, collection: str, where: dict[str, Any] | None = None, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Documents whose top-level fields equal `where` (JSON equality), most recently written first: MongoDB
        filters (see `filters`) and orders through the `agentenv_newest` index."""
        conditions = check_query(collection, where, limit)
        if limit == 0:
            return []
        server, rest = mongo_filter(collection, conditions)

        def read() -> list[dict[str, Any]]:
            found: list[dict[str, Any]] = []
            cursor = self._docs.find(server, {"doc": 1}).sort("seq", -1)
            if limit is not None and not rest:  # no condition left to drop documents: MongoDB stops at the limit
                cursor = cursor.limit(limit)
            with cursor:
                for raw in cursor:
                    doc = _document(raw)
                    if rest and not matches(doc, rest):
                        continue
                    found.append(doc)
                    if limit is not None and len(found) >= limit:
                        break
            return found

        return self._call(f"query {collection}", read)

    def delete(self, collection: str, doc_id: str) -> bool:
        """Delete the document; whether it existed. After a lost answer the retry reports what it found then."""
        check_names(collection, doc_id)
        done = self._call(
            f"delete {collection}/{doc_id}", lambda: self._docs.delete_one({"_id": _id(collection, doc_id)})
        )
        return bool(done.deleted_count == 1)


def _id(collection: str, doc_id: str) -> dict[str, str]:
    return {"c": collection, "id": doc_id}


def _document(raw: dict[str, Any]) -> dict[str, Any]:
    """The agentenv document of a stored one, as plain JSON values; a stored document without one (written by
    another tool) comes back as a marker, so one bad document never breaks a listing."""
    doc = raw.get("doc")
    if not isinstance(doc, dict):
        key = raw.get("_id")
        doc_id = key.get("id", "?") if isinstance(key, dict) else "?"
        return {"id": doc_id, "status": "damaged", "damaged": f"no `doc` object in MongoDB document {key!r}"}
    plain: dict[str, Any] = _plain(doc)
    return plain


def _plain(value: Any) -> Any:
    """pymongo's values as JSON's: BSON 64-bit integers come back as `Int64`, an int subclass, made plain ints."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and type(value) is not int:
        return int(value)
    return value
