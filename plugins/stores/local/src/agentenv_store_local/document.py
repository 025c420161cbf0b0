"""SQLite document store: JSON documents by collection and id, queried newest first.

One file holds every collection. Each write takes the next value of a sequence kept in the same
file, so "newest first" means "most recently written first" across threads and processes alike,
without trusting clocks. WAL mode lets readers proceed while one process writes; `busy_timeout`
makes a second writer wait instead of failing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentenv.contracts import DocumentStore
from pydantic import BaseModel, ConfigDict, Field

from agentenv_store_local._files import StoreFileError, resolve_path, setting_hint, typed_settings

SCHEMA = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS agentenv_documents (
    collection TEXT NOT NULL,
    id TEXT NOT NULL,
    doc TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (collection, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS agentenv_documents_recent ON agentenv_documents (collection, updated_at);
CREATE TABLE IF NOT EXISTS agentenv_sequence (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
);
INSERT OR IGNORE INTO agentenv_sequence (id, value) VALUES (1, 0);
COMMIT;
"""

_INT64 = 2**63 - 1


class SqliteSettings(BaseModel):
    """Settings of the `sqlite` document store."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        ".agentenv/data/records.sqlite3",
        description="Database file; relative paths are taken against the current directory.",
    )
    busy_timeout_ms: int = Field(
        30_000, ge=0, description="How long a write waits for another process's write to finish."
    )


class SqliteDocumentStore(DocumentStore):
    """Run and step records as JSON documents in one SQLite file."""

    name = "sqlite"
    description = "JSON documents in one SQLite file (WAL mode; safe across threads and processes)."
    Settings = SqliteSettings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        cfg = typed_settings(self.settings, SqliteSettings)
        self.path: Path = resolve_path(cfg.path)
        self._busy_timeout_ms = cfg.busy_timeout_ms
        # One connection guarded by a lock: simple, and SQLite serialises writers anyway.
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        with self._lock:
            self._connection()  # open now so a bad path is reported at construction

    # -- connection ---------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        """The open connection, reopened after `fork` (a SQLite handle must not cross processes)."""
        if self._conn is None or self._pid != os.getpid():
            self._conn = self._open()
            self._pid = os.getpid()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        hint = setting_hint("document", "path")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreFileError(
                f"cannot create the folder for the document database {self.path}: {exc}; "
                f"fix the folder's permissions or change {hint}"
            ) from exc
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=self._busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise StoreFileError(
                f"cannot open the document database {self.path}: {exc}; point {hint} at a writable file"
            ) from exc
        try:
            self._set_up(conn)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreFileError(
                f"{self.path} is not a usable SQLite database ({exc}); it is the file named by {hint}. "
                "Move the file away or set `path` to a new file."
            ) from exc
        return conn

    def _set_up(self, conn: sqlite3.Connection) -> None:
        """WAL mode and the schema. Two processes opening a new file at once can see `database is locked`
        from the journal-mode switch, which SQLite does not retry itself, so retry it within the busy timeout."""
        deadline = time.monotonic() + self._busy_timeout_ms / 1000
        while True:
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.executescript(SCHEMA)
                return
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that holds the database write lock from its first statement."""
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close the connection; the store reopens it if used again."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __enter__(self) -> SqliteDocumentStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- contract -----------------------------------------------------------------------------

    def put(self, collection: str, doc_id: str, doc: dict[str, Any]) -> None:
        """Insert or replace the document; it becomes the newest of its collection."""
        _check_names(collection, doc_id)
        text = _dump(doc, collection, doc_id)
        with self._write() as conn:
            (seq,) = conn.execute(
                "UPDATE agentenv_sequence SET value = value + 1 WHERE id = 1 RETURNING value"
            ).fetchone()
            conn.execute(
                "INSERT INTO agentenv_documents (collection, id, doc, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (collection, id) "
                "DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at",
                (collection, doc_id, text, seq),
            )

    def get(self, collection: str, doc_id: str) -> dict[str, Any] | None:
        _check_names(collection, doc_id)
        with self._lock:
            row = (
                self._connection()
                .execute(
                    "SELECT doc FROM agentenv_documents WHERE collection = ? AND id = ?",
                    (collection, doc_id),
                )
                .fetchone()
            )
        return None if row is None else _load(doc_id, row[0])

    def query(
        self, collection: str, where: dict[str, Any] | None = None, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Documents whose top-level fields equal `where` (JSON equality), most recently written first."""
        _check_names(collection)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise ValueError(f"limit must be a non-negative integer or None, got {limit!r}")
        if limit == 0:
            return []
        clauses, params, leftover = _compile_where(where or {})
        sql = "SELECT id, doc FROM agentenv_documents WHERE collection = ?"
        if clauses:  # json_type on a damaged document would fail the whole query
            sql += " AND json_valid(doc)"
        sql += "".join(f" AND {clause}" for clause in clauses)
        sql += " ORDER BY updated_at DESC"
        if limit is not None and not leftover:
            sql += f" LIMIT {limit}"
        with self._lock:
            rows = self._connection().execute(sql, (collection, *params)).fetchall()
        out: list[dict[str, Any]] = []
        for doc_id, text in rows:
            doc = _load(doc_id, text)
            if all(field in doc and json_equal(doc[field], value) for field, value in leftover.items()):
                out.append(doc)
                if limit is not None and len(out) >= limit:
                    break
        return out

    def delete(self, collection: str, doc_id: str) -> bool:
        _check_names(collection, doc_id)
        with self._write() as conn:
            cur = conn.execute("DELETE FROM agentenv_documents WHERE collection = ? AND id = ?", (collection, doc_id))
            return cur.rowcount > 0


def _check_names(collection: str, doc_id: str | None = None) -> None:
    if not isinstance(collection, str) or not collection:
        raise ValueError(f"collection must be a non-empty string, got {collection!r}")
    if doc_id is not None and (not isinstance(doc_id, str) or not doc_id):
        raise ValueError(f"document id must be a non-empty string, got {doc_id!r}")


def _dump(doc: dict[str, Any], collection: str, doc_id: str) -> str:
    """Compact JSON; non-ASCII kept as is so SQLite's JSON paths match keys literally."""
    if not isinstance(doc, dict):
        raise TypeError(f"document {collection}/{doc_id} must be a dict, got {type(doc).__name__}")
    try:
        text = json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"document {collection}/{doc_id} is not JSON-serialisable: {exc}") from exc
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (SQLite stores UTF-8): keep it as its JSON escape
        return json.dumps(doc, allow_nan=False, separators=(",", ":"))
    return text


def _load(doc_id: str, text: str) -> dict[str, Any]:
    """The stored document; one that is no longer a JSON object (damaged on disk, written by another tool)
    comes back as a marker document, so one bad row never breaks a listing."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return {"id": doc_id, "status": "damaged", "damaged": f"not valid JSON: {exc}"}
    if not isinstance(doc, dict):
        return {"id": doc_id, "status": "damaged", "damaged": f"a JSON {type(doc).__name__}, not an object"}
    return doc


def _compile_where(where: dict[str, Any]) -> tuple[list[str], list[Any], dict[str, Any]]:
    """SQL clauses for the scalar conditions; the rest (objects, lists, odd keys) is left for Python.

    JSON types are compared strictly: `True` does not match `1`, and `None` matches an explicit null
    only, not a missing field.
    """
    if not isinstance(where, dict):
        raise TypeError(f"where must be a dict of field → value, got {type(where).__name__}")
    clauses: list[str] = []
    params: list[Any] = []
    leftover: dict[str, Any] = {}
    for field, value in where.items():
        if not isinstance(field, str):
            raise TypeError(f"where keys must be field names (str), got {field!r}")
        _check_json_value(field, value)
        # A key that JSON would escape cannot be written as a literal SQLite JSON path label.
        if json.dumps(field, ensure_ascii=False)[1:-1] != field:
            leftover[field] = value
            continue
        path = f'$."{field}"'
        if value is None:
            clauses.append("json_type(doc, ?) = 'null'")
            params.append(path)
        elif isinstance(value, bool):
            clauses.append("json_type(doc, ?) = ?")
            params += [path, "true" if value else "false"]
        elif isinstance(value, int | float) and abs(value) <= _INT64:
            clauses.append("json_type(doc, ?) IN ('integer', 'real') AND json_extract(doc, ?) = ?")
            params += [path, path, value]
        elif isinstance(value, str):
            clauses.append("json_type(doc, ?) = 'text' AND json_extract(doc, ?) = ?")
            params += [path, path, value]
        else:
            leftover[field] = value
    return clauses, params, leftover


def _check_json_value(field: str, value: Any) -> None:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"where[{field!r}] must be a JSON value: {exc}") from exc


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: like `==` except that booleans never equal numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return False
    return bool(a == b)
