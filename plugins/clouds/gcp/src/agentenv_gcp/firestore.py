"""Firestore document store: each agentenv collection is a Firestore collection under one root document.

Path: `<root>/<namespace>/<collection>/<id>`, with the collection and id percent-encoded (Firestore ids
cannot hold '/' or be '.', '..' or `__x__`). Fields: `doc` (the document as JSON text, so any JSON value
round-trips exactly), `seq` (write order: nanoseconds, strictly increasing within a process) and `rev`.
Queries order by `seq` descending (Firestore's automatic single-field index) and read `page_size`
documents a page. `put_if` writes with a precondition on the update time of the snapshot it compared, so a
writer that raced in between makes it fail instead of being overwritten.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from agentenv.contracts import DocumentStore
from agentenv_store_local.api import (
    PagedQueries,
    check_names,
    dump_document,
    load_document,
    next_write_stamp,
    same_document,
)
from pydantic import BaseModel, Field

from agentenv_gcp._client import GcpSettings, explain


class FirestoreSettings(GcpSettings):
    """Settings of the `firestore` document store."""

    database: str = Field("(default)", description="Firestore database id.")
    root: str = Field("agentenv", description="Top-level collection holding agentenv's data.")
    namespace: str = Field("records", description="Document under `root` whose sub-collections are ours.")
    page_size: int = Field(1000, ge=1, le=10_000, description="Documents read per query page.")


def _segment(name: str) -> str:
    """A Firestore-safe id for any non-empty string (the 'k' keeps '.', '..' and '__x__' out)."""
    return "k" + quote(name, safe="")


class FirestoreDocumentStore(PagedQueries, DocumentStore[FirestoreSettings]):
    """Run and step records as JSON documents in Firestore (native mode)."""

    name = "firestore"
    description = "JSON documents in Firestore, newest first by a write-order field."
    Settings = FirestoreSettings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        from google.cloud import firestore

        super().__init__(settings)
        self.config = self.settings  # typed by the class parameter, validated once
        self.page_size = self.config.page_size
        options = {"api_endpoint": self.config.endpoint_url} if self.config.endpoint_url else None
        try:
            self._client = firestore.Client(
                project=self.config.project,
                database=self.config.database,
                credentials=self.config.credentials(),
                client_options=options,
            )
        except Exception as exc:
            raise explain(exc, "Firestore client", "document", "project") from exc
        self._root = self._client.collection(self.config.root).document(self.config.namespace)
        self._retry = self.config.retry()

    def _fail(self, exc: BaseException, what: str) -> Exception:
        return explain(exc, f"Firestore {self.config.root}/{self.config.namespace}: {what}", "document", "project")

    def _ref(self, collection: str, doc_id: str) -> Any:
        return self._root.collection(_segment(collection)).document(_segment(doc_id))

    @staticmethod
    def _fields(text: str) -> dict[str, Any]:
        return {"doc": text, "seq": next_write_stamp(), "rev": uuid.uuid4().hex}

    def put(self, collection: str, doc_id: str, doc: dict[str, Any]) -> None:
        check_names(collection, doc_id)
        fields = self._fields(dump_document(doc, collection, doc_id))
        try:
            self._ref(collection, doc_id).set(fields, timeout=self.config.timeout_seconds, retry=self._retry)
        except Exception as exc:
            raise self._fail(exc, f"put {collection}/{doc_id}") from exc

    def put_if(self, collection: str, doc_id: str, doc: dict[str, Any], expected: dict[str, Any] | None) -> bool:
        from google.api_core.exceptions import AlreadyExists, FailedPrecondition, NotFound

        check_names(collection, doc_id)
        fields = self._fields(dump_document(doc, collection, doc_id))
        ref = self._ref(collection, doc_id)
        try:
            snapshot = ref.get(timeout=self.config.timeout_seconds, retry=self._retry)
            stored = load_document(snapshot.get("doc")) if snapshot.exists else None
            if not same_document(stored, expected):
                return False
            if stored is None:
                ref.create(fields, timeout=self.config.timeout_seconds, retry=self._retry)
            else:
                option = self._client.write_option(last_update_time=snapshot.update_time)
                ref.update(fields, option=option, timeout=self.config.timeout_seconds, retry=self._retry)
        except (AlreadyExists, FailedPrecondition, NotFound):
            return False  # another writer got there first (or deleted it) since the read
        except Exception as exc:
            raise self._fail(exc, f"put {collection}/{doc_id}") from exc
        return True

    def get(self, collection: str, doc_id: str) -> dict[str, Any] | None:
        check_names(collection, doc_id)
        try:
            snapshot = self._ref(collection, doc_id).get(
                field_paths=["doc"], timeout=self.config.timeout_seconds, retry=self._retry
            )
        except Exception as exc:
            raise self._fail(exc, f"get {collection}/{doc_id}") from exc
        return load_document(snapshot.get("doc")) if snapshot.exists else None

    def _newest(self, collection: str, page: int) -> Iterator[str]:
        """The collection's documents as JSON text, newest first, `page` at a time (read lazily)."""
        from google.cloud import firestore

        base = self._root.collection(_segment(collection)).order_by("seq", direction=firestore.Query.DESCENDING)
        last = None
        while True:
            query = base.limit(page) if last is None else base.start_after(last).limit(page)
            try:
                snapshots = list(query.stream(timeout=self.config.timeout_seconds, retry=self._retry))
            except Exception as exc:
                raise self._fail(exc, f"query {collection}") from exc
            yield from (snapshot.get("doc") for snapshot in snapshots)
            if len(snapshots) < page:
                return
            last = snapshots[-1]

    def delete(self, collection: str, doc_id: str) -> bool:
        """Delete the document; whether it existed (a precondition of the one delete call)."""
        from google.api_core.exceptions import NotFound

        check_names(collection, doc_id)
        try:
            option = self._client.write_option(exists=True)
            self._ref(collection, doc_id).delete(option=option, timeout=self.config.timeout_seconds, retry=self._retry)
        except NotFound:
            return False
        except Exception as exc:
            raise self._fail(exc, f"delete {collection}/{doc_id}") from exc
        return True
