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
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentenv.contracts import DocumentStore
from pydantic import BaseModel, ConfigDict, Field

from agentenv_store_local._files import StoreFileError, resolve_path, setting_hint, typed_settings
from agentenv_store_local.wal import wal_damage

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
        description="Database file; relative to the project (where the config is).",
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
        self.read_only = False
        self._closer: weakref.finalize[[sqlite3.Connection, int], SqliteDocumentStore] | None = None
        if self.path.exists():  # an existing database is opened now, so a damaged one is reported at construction
            with self._lock:
                self._connection()

    # -- connection ---------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        """The open connection, reopened after `fork` (a SQLite handle must not cross processes)."""
        if self._conn is None or self._pid != os.getpid():
            self._conn = self._open()
            self._pid = os.getpid()
            # Closed when the store is dropped or the process exits: the last connection then checkpoints the
            # write-ahead log into the database and removes it, so the next process has no log to replay (or
            # to check, see `wal`). A dropped store's connection can sit in a reference cycle that the CLI's
            # quick exit never collects, hence a finalizer and not `__del__`.
            self._closer = weakref.finalize(self, _close_connection, self._conn, self._pid)
        return self._conn

    def _open(self) -> sqlite3.Connection:
        hint = setting_hint("document", "path")
        self._refuse_damaged_log(hint)
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
        except sqlite3.OperationalError as exc:
            conn.close()
            if not _is_read_only(exc) or not self.path.is_file():
                raise StoreFileError(f"cannot open the document database {self.path}: {exc}; see {hint}") from exc
            return self._open_read_only(hint)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreFileError(
                f"{self.path} is not a usable SQLite database ({exc}); it is the file named by {hint}. "
                "Move the file away or set `path` to a new file."
            ) from exc
        self.read_only = False
        return conn

    def _open_read_only(self, hint: str) -> sqlite3.Connection:
        """The database opened for reading only: a store on a read-only mount, or files this user may not
        write, can still be listed and shown. SQLite reads a WAL database this way as long as its `-shm` file
        exists or can be made; writes are then refused by `_write` with the reason."""
        uri = f"{self.path.as_uri()}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            raise StoreFileError(
                f"the document database {self.path} is read-only here and cannot be read either ({exc}); "
                f"give this user write access to its folder, or copy it and point {hint} at the copy"
            ) from exc
        self.read_only = True
        return conn

    def _refuse_damaged_log(self, hint: str) -> None:
        """Stop before SQLite drops committed records from a damaged write-ahead log without a word (and the next
        write overwrites them for good). A log being rewritten by another process can look damaged for an
        instant, so a finding counts only if a second look agrees."""
        damage = wal_damage(self.path)
        if damage is not None:
            time.sleep(0.05)
            damage = wal_damage(self.path)
        if damage is None:
            return
        log = self.path.with_name(self.path.name + "-wal")
        raise StoreFileError(
            f"the write-ahead log {log} of the document database is damaged at byte {damage.offset} "
            f"({damage.reason}); SQLite would silently drop the {damage.frames_dropped} frame(s) after it, "
            f"records written since the last checkpoint. Nothing was changed. To open the database without them, "
            f"stop every agentenv process using {hint} and move {log.name} aside (keep it: the records are in it)."
        )

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
            if self.read_only:
                raise StoreFileError(
                    f"the document database {self.path} is read-only here (it could be read, not written); "
                    f"give this user write access to it and its folder, or set "
                    f"{setting_hint('document', 'path')} to a writable file"
                )
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
            if self._closer is not None:
                self._closer()
            self._conn = None

    def __enter__(self) -> SqliteDocumentStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- contract -----------------------------------------------------------------------------

    def put(self, collection: str, doc_id: str, doc: dict[str, Any]) -> None:
        """Insert or replace the document; it becomes the newest of its collection."""
        check_names(collection, doc_id)
        text = dump_document(doc, collection, doc_id)
        with self._write() as conn:
            _upsert(conn, collection, doc_id, text)

    def put_if(self, collection: str, doc_id: str, doc: dict[str, Any], expected: dict[str, Any] | None) -> bool:
        """Write only if the stored document still equals `expected` (None: only if there is none).

        The read and the write share one `BEGIN IMMEDIATE` transaction, so no other writer, thread or
        process, can slip in between them.
        """
        check_names(collection, doc_id)
        text = dump_document(doc, collection, doc_id)
        with self._write() as conn:
            row = conn.execute(
                "SELECT doc FROM agentenv_documents WHERE collection = ? AND id = ?", (collection, doc_id)
            ).fetchone()
            if not same_document(None if row is None else _load(row[0]), expected):
                return False
            _upsert(conn, collection, doc_id, text)
            return True

    def _absent(self) -> bool:
        """Whether no database was ever written here: reading one finds nothing and creates nothing (`runs list`
        in a folder with no runs left `.agentenv/data/records.sqlite3` behind); the first write makes it."""
        return self._conn is None and not self.path.exists()

    def get(self, collection: str, doc_id: str) -> dict[str, Any] | None:
        check_names(collection, doc_id)
        if self._absent():
            return None
        with self._lock:
            row = (
                self._connection()
                .execute(
                    "SELECT doc FROM agentenv_documents WHERE collection = ? AND id = ?",
                    (collection, doc_id),
                )
                .fetchone()
            )
        return None if row is None else _load(row[0], doc_id)

    def query(
        self, collection: str, where: dict[str, Any] | None = None, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Documents whose top-level fields equal `where` (JSON equality), most recently written first."""
        check_names(collection)
        check_limit(limit)
        if limit == 0:
            return []
        clauses, params, leftover = _compile_where(where or {})
        if self._absent():
            return []
        sql = "SELECT id, doc FROM agentenv_documents WHERE collection = ?"
        if clauses:  # json_type on a damaged document would fail the whole query
            sql += " AND json_valid(doc)"
        sql += "".join(f" AND {clause}" for clause in clauses)
        sql += " ORDER BY updated_at DESC"
        if limit is not None and not leftover:
            sql += f" LIMIT {limit}"
        with self._lock:
            rows = self._connection().execute(sql, (collection, *params)).fetchall()
        return newest_matches(((text, doc_id) for doc_id, text in rows), leftover, limit)

    def delete(self, collection: str, doc_id: str) -> bool:
        check_names(collection, doc_id)
        if self._absent():
            return False
        with self._write() as conn:
            cur = conn.execute("DELETE FROM agentenv_documents WHERE collection = ? AND id = ?", (collection, doc_id))
            return cur.rowcount > 0


def _close_connection(conn: sqlite3.Connection, pid: int) -> None:
    """Close `conn` if this is the process that opened it (a forked child must leave its parent's alone)."""
    if os.getpid() == pid:
        conn.close()


def _is_read_only(exc: sqlite3.OperationalError) -> bool:
    """SQLite's words for a file or folder this process may not write."""
    text = str(exc).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text


def check_names(collection: str, doc_id: str | None = None) -> None:
    """ValueError unless the collection (and document id) are non-empty strings."""
    if not isinstance(collection, str) or not collection:
        raise ValueError(f"collection must be a non-empty string, got {collection!r}")
    if doc_id is not None and (not isinstance(doc_id, str) or not doc_id):
        raise ValueError(f"document id must be a non-empty string, got {doc_id!r}")


def _upsert(conn: sqlite3.Connection, collection: str, doc_id: str, text: str) -> None:
    """Insert or replace one document inside the caller's write transaction, as the newest."""
    (seq,) = conn.execute("UPDATE agentenv_sequence SET value = value + 1 WHERE id = 1 RETURNING value").fetchone()
    conn.execute(
        "INSERT INTO agentenv_documents (collection, id, doc, updated_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (collection, id) "
        "DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at",
        (collection, doc_id, text, seq),
    )


def check_limit(limit: int | None) -> None:
    """ValueError unless `limit` is None or a non-negative integer."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative integer or None, got {limit!r}")


def check_where(where: dict[str, Any] | None) -> dict[str, Any]:
    """`where` as a dict of field name → JSON value; TypeError naming the bad part otherwise."""
    if where is None:
        return {}
    if not isinstance(where, dict):
        raise TypeError(f"where must be a dict of field → value, got {type(where).__name__}")
    for field, value in where.items():
        if not isinstance(field, str):
            raise TypeError(f"where keys must be field names (str), got {field!r}")
        _check_json_value(field, value)
    return where


def check_query(collection: str, where: dict[str, Any] | None, limit: int | None) -> dict[str, Any]:
    """Check a query's arguments; its conditions (`where` as a dict)."""
    check_names(collection)
    check_limit(limit)
    return check_where(where)


def query_page_size(limit: int | None, where: dict[str, Any], page_size: int) -> int:
    """Documents to read a page: no more than `limit` when no condition can drop any of them."""
    return page_size if limit is None or where else max(1, min(limit, page_size))


def newest_matches(
    texts: Iterable[str | tuple[str, str]], where: dict[str, Any], limit: int | None
) -> list[dict[str, Any]]:
    """The documents (JSON texts, or (text, id) pairs, newest first, read lazily page by page) that match `where`,
    up to `limit`."""
    out: list[dict[str, Any]] = []
    if limit == 0:
        return out
    for item in texts:
        doc = _load(*item) if isinstance(item, tuple) else _load(item)
        if matches(doc, where):
            out.append(doc)
            if limit is not None and len(out) >= limit:
                break
    return out


class PagedQueries:
    """`query` for document stores that can list a collection newest first, page by page: the store gives
    `_newest(collection, page)` (JSON texts, read lazily) and `page_size`; the filtering, the limit and the
    argument checks are the same for every such store."""

    page_size: int = 1000

    def _newest(self, collection: str, page: int) -> Iterator[str]:
        raise NotImplementedError(f"{type(self).__name__} must define _newest(collection, page)")

    def query(
        self, collection: str, where: dict[str, Any] | None = None, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Documents whose top-level fields equal `where` (JSON equality), most recently written first."""
        conditions = check_query(collection, where, limit)
        if limit == 0:
            return []
        page = query_page_size(limit, conditions, self.page_size)
        return newest_matches(self._newest(collection, page), conditions, limit)


def load_document(text: str) -> dict[str, Any]:
    """A stored document's JSON text as a dict."""
    return _load(text)


def matches(doc: dict[str, Any], where: dict[str, Any]) -> bool:
    """Whether every field of `where` is in `doc` with a JSON-equal value (the query filter)."""
    return all(field in doc and json_equal(doc[field], value) for field, value in where.items())


def same_document(stored: dict[str, Any] | None, expected: dict[str, Any] | None) -> bool:
    """The compare of compare-and-set: both absent, or both present and JSON-equal."""
    return stored is None if expected is None else stored is not None and json_equal(stored, expected)


def dump_document(doc: dict[str, Any], collection: str, doc_id: str) -> str:
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


def _load(text: str, doc_id: str = "?") -> dict[str, Any]:
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
    clauses: list[str] = []
    params: list[Any] = []
    leftover: dict[str, Any] = {}
    for field, value in check_where(where).items():
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
