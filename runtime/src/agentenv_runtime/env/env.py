"""The `Env` base class: one simulated app with typed tools and state that snapshots in microseconds.

All of an env's mutable state lives in `self.db`, a private in-memory SQLite database. That makes
snapshot/restore/fork a memory copy (`serialize()`/`deserialize()`) and lets every tool call run in
a savepoint, so a refused or failing call leaves the state exactly as it was.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self

from agentenv.contracts import Environment, Message
from agentenv.contracts import SettingsT as S
from pydantic import BaseModel, ValidationError

from agentenv_runtime.env import digest
from agentenv_runtime.env.artifact import ARTIFACT_SUFFIXES, Artifact, ArtifactError, artifact_name
from agentenv_runtime.env.tool import (
    CALL_CONTEXT,
    CONTEXT,
    TOOL_MARK,
    ToolContext,
    ToolError,
    ToolSpec,
    argument_errors,
    build_tool_spec,
    parse_docstring,
)

LOAD_MEMO_SIZE = 16
HOLD = "agentenv_hold"
"""The savepoint `Env.hold()` keeps open so that `Env.rewind()` can undo a rollout without a restore."""
DIGEST_MEMO_SIZE = 8
_LOAD_MEMO: dict[type, OrderedDict[tuple[bytes, str], bytes]] = {}
_LOAD_SEEN: dict[int, tuple[bytes, bytes]] = {}
"""id(state bytes) → (those bytes, their digest); holding the bytes keeps the id from being reused."""


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    """Real UTC time; the world replaces it with its virtual clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class Env(Environment[S]):
    """Subclass, set `name` and `schema` (SQL DDL), and mark tool methods with `@tool`.

    With settings, `class SlackEnv(Env[SlackSettings])` and `Settings = SlackSettings`: `self.settings` is then
    that model, validated once when the env is made.

    Override `load` / `export` only when rows need more than a plain table insert, and
    `describe_message` / `deliver_reply` when the app carries messages people can answer.
    """

    schema: ClassVar[str] = ""
    _tool_specs: ClassVar[dict[str, ToolSpec] | None] = None
    _schema_problems: ClassVar[list[str]]

    def __init__(self, settings: S | BaseModel | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        self.clock: Clock = SystemClock()
        self._pending: bytes | None = None
        self._digest_memo: OrderedDict[int, tuple[bytes, digest.Accumulators]] | None = None
        """Set once the state digest is on: state bytes seen → their accumulators (see `env.digest`)."""
        self._digest_stale = False
        """The state was replaced by bytes of unknown accumulators: count them again before the next digest."""
        self._held: bytes | None = None
        """The state bytes the open hold savepoint stands for (None: no hold)."""
        self._untracked: tuple[digest.Accumulators | None, int] | None = None
        """Set while the digest is on but this connection has no digest triggers yet (see `_track`): the
        accumulators of the state bytes the database was made from (None: unknown) and `total_changes` then."""
        self._db = _connect()
        self.db.executescript(self.schema)
        self.db.execute("PRAGMA user_version = 1")  # an env with no tables still has a page to snapshot
        self.loaded: list[Artifact] = []
        self._initial = self.snapshot()

    # ---- tools -------------------------------------------------------------------------------------
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._tool_specs = None  # built on first use, once every type the hints name exists
        if "description" not in vars(cls) and vars(cls).get("__doc__"):
            # The card, `env list` and the gateway describe the env by `description`; the class docstring's
            # first paragraph is what an author has usually written already.
            cls.description = parse_docstring(cls.__doc__)[0]

    @classmethod
    def tool_specs(cls) -> dict[str, ToolSpec]:
        if cls._tool_specs is None:
            specs: dict[str, ToolSpec] = {}
            for klass in reversed(cls.__mro__):
                for attr, value in vars(klass).items():
                    if callable(value) and hasattr(value, TOOL_MARK):
                        spec = build_tool_spec(cls, attr, value)
                        specs[spec.name] = spec
            cls._tool_specs = specs
        return cls._tool_specs

    @classmethod
    def schema_problems(cls) -> list[str]:
        """One line per tool whose parameters have no JSON Schema (each naming every such parameter); such a
        tool fails the card, `list_tools` and every call. Worked out once per class."""
        if "_schema_problems" not in cls.__dict__:
            found = [spec.schema_problem() for spec in cls.tool_specs().values()]
            cls._schema_problems = [problem for problem in found if problem]
        return cls._schema_problems

    def call(self, tool_name: str, arguments: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        """Validate and run a tool: (result, None) or (None, structured error). State is unchanged on error.

        A tool that declares a `context` parameter gets the calling world's `ToolContext` (`CALL_CONTEXT`);
        called outside a world, one with no role at the env's time.
        """
        spec = self.tool_specs().get(tool_name)
        if spec is None:
            return None, {"code": "unknown_tool", "message": f"{self.name} has no tool {tool_name!r}"}
        try:
            parsed = spec.args_model.model_validate(arguments)
        except ValidationError as exc:
            return None, argument_errors(exc)
        kwargs = {field: getattr(parsed, field) for field in type(parsed).model_fields}
        if spec.wants_context:
            kwargs[CONTEXT] = CALL_CONTEXT.get() or ToolContext(role=None, now=self.now())
        method: Callable[..., Any] = getattr(self, spec.method)
        if spec.read_only:
            try:
                return jsonable(method(**kwargs)), None
            except ToolError as exc:
                return None, exc.to_dict()
            except Exception as exc:  # a query the backend rejects (FTS5 syntax, too many terms) is a failed call
                return None, {"code": "tool_failed", "message": f"{tool_name} failed: {type(exc).__name__}: {exc}"}
        return self.atomic(tool_name, method, **kwargs)

    def atomic(self, label: str, func: Callable[..., Any], /, **kwargs: Any) -> tuple[Any, dict[str, Any] | None]:
        """Run `func` in a savepoint: (result, None), or (None, error) with every change rolled back."""
        self._track()
        self.db.execute("SAVEPOINT tool_call")
        try:
            result = jsonable(func(**kwargs))
        except ToolError as exc:
            self._rollback()
            return None, exc.to_dict()
        except Exception as exc:
            self._rollback()
            return None, {"code": "tool_failed", "message": f"{label} failed: {type(exc).__name__}: {exc}"}
        self.db.execute("RELEASE tool_call")
        return result, None

    def _rollback(self) -> None:
        self.db.execute("ROLLBACK TO tool_call")
        self.db.execute("RELEASE tool_call")

    def now(self) -> datetime:
        return self.clock.now()

    # ---- state -------------------------------------------------------------------------------------
    @property
    def db(self) -> sqlite3.Connection:
        """The env's database. A fork's is made from its parent's state bytes on first use (copy on write)."""
        if self._pending is not None:
            self._materialize()
        return self._db

    @db.setter
    def db(self, connection: sqlite3.Connection) -> None:
        self._db, self._pending = connection, None

    def _materialize(self) -> None:
        data, self._pending = self._pending, None
        assert data is not None
        self._held = None
        self._db = _connect()
        self._db.deserialize(data)
        if self._digest_memo is not None:  # triggers come with the first write (`_track`)
            self._untracked = (self._known_accumulators(data), self._db.total_changes)
        self._snapshot_cache = (self._db.total_changes, data)

    def _state_bytes(self) -> bytes | None:
        """The bytes the state is known to equal without serializing, if any."""
        if self._pending is not None:
            return self._pending
        cached = self.__dict__.get("_snapshot_cache")
        if cached is not None and cached[0] == self._db.total_changes:
            return cached[1]  # type: ignore[no-any-return]
        return None

    def snapshot(self) -> bytes:
        """The state as bytes. Unchanged state (same `total_changes`) returns the cached bytes: forking a
        template world thousands of times then costs one copy each, not two."""
        if self._pending is not None:
            return self._pending
        changes = self.db.total_changes
        cached = self.__dict__.get("_snapshot_cache")
        if cached is not None and cached[0] == changes:
            return cached[1]  # type: ignore[no-any-return]
        data = self.db.serialize()
        self._snapshot_cache = (changes, data)
        accumulators = self._current_accumulators()
        if accumulators is not None:
            self._remember(data, accumulators)
        return data

    def restore(self, data: bytes) -> None:
        """Put back a snapshot; a no-op when the state is already those very bytes (an untouched env of a
        reset world), and deferred like a fork's when the database was never used since."""
        if self._state_bytes() is data:
            return
        if self._pending is not None:
            self._pending = data
            return
        self._release_hold()
        self._db.deserialize(data)
        if self._digest_memo is not None:
            known = self._known_accumulators(data)
            if self._untracked is not None:
                self._untracked = (known, self._db.total_changes)
            else:
                if known is not None:
                    digest.load(self._db, known)
                self._digest_stale = known is None  # counted again only when a digest is asked for
        self._snapshot_cache = (self._db.total_changes, data)

    def hold(self) -> None:
        """Keep the current state, which must be the bytes of the last `restore()` (a reset point), as the one
        `rewind()` goes back to: a savepoint stays open, and tool calls nest inside it. Undoing a rollout then
        rolls back only the pages it changed, with no copy and no schema to parse again (a few times faster
        than a restore). Nothing happens for an env that is not materialized: it has nothing to undo."""
        if self._pending is not None:
            return
        state = self._state_bytes()
        self._release_hold()
        if state is not None:
            self._track()  # the triggers cannot be made later, inside the savepoint (see `_track`)
            # Read the schema before the savepoint: after `deserialize` it is loaded lazily, and if that happens
            # inside the savepoint, rolling back to it later leaves statements prepared before the deserialize
            # re-preparing against no tables at all ("no such table" on the second rewind).
            self._db.execute("PRAGMA schema_version").fetchone()
            self._db.execute(f"SAVEPOINT {HOLD}")
            self._held = state

    def rewind(self, data: bytes) -> bool:
        """Back to `data` by rolling back to the hold, when the hold stands for exactly those bytes."""
        if self._held is None or self._held is not data or self._pending is not None:
            return False
        self._db.execute(f"ROLLBACK TO {HOLD}")
        self._snapshot_cache = (self._db.total_changes, data)
        return True

    def _release_hold(self) -> None:
        if self._held is not None:
            self._held = None
            self._db.execute(f"RELEASE {HOLD}")

    # ---- state digest ------------------------------------------------------------------------------
    def _track(self) -> None:
        """Give this connection its digest triggers before the env writes (a write tool, a reply, a load, a
        hold), if it has none yet.

        A database made for a fork starts without them: making 3 triggers per table costs about 1.5 ms, far
        more than the fork, and a fork that only reads (an episode that looks things up, a served session)
        never needs them: its digest is the accumulators of the bytes it was made from. They cannot be made
        inside an open transaction (the script would commit it, and a schema change inside the hold savepoint
        makes every later rollback expire all prepared statements), so `hold` makes them first. A write that
        bypasses the env shows as a different `total_changes`; the next digest then counts the rows again."""
        untracked = self._untracked
        if untracked is None or self._db.in_transaction:
            return
        self._untracked = None
        known, changes = untracked
        fresh = known is not None and self._db.total_changes == changes
        state = self._state_bytes()
        digest.attach(self._db, known if known is not None and fresh else digest.zeros(self.table_names()))
        self._digest_stale = not fresh
        if state is not None:  # the triggers' bookkeeping did not change the state
            self._snapshot_cache = (self._db.total_changes, state)

    def _current_accumulators(self) -> digest.Accumulators | None:
        """The accumulators of the state as it is, when known without counting rows."""
        if self._digest_memo is None:
            return None
        if self._untracked is not None:
            known, changes = self._untracked
            return known if self._db.total_changes == changes else None
        return None if self._digest_stale else digest.current(self._db)

    def state_digest(self) -> str:
        """An order-independent digest of every data table, the same in any process (see `env.digest`).

        The first call turns the incremental digest on (one pass over the rows); after that it costs a small
        query, and restores and forks from state this env has seen carry it without another pass."""
        pending = self._pending
        if pending is not None and self._digest_memo is not None:
            known = self._known_accumulators(pending)
            if known is not None:
                return digest.of(known)  # a fork that was never used: no need to make its database
        db, state = self.db, self._state_bytes()
        if self._untracked is not None:
            accumulators = self._current_accumulators()
            if accumulators is not None:
                return digest.of(accumulators)  # only read since its database was made
            self._track()
            if self._untracked is not None:  # inside a transaction: count the rows, attach later
                return digest.of(digest.scan(db, self.table_names()))
        if self._digest_memo is None or self._digest_stale:
            accumulators = digest.scan(db, self.table_names())
            if self._digest_memo is None:
                held = self._held
                self._release_hold()  # the attach script would commit the hold's savepoint anyway
                digest.attach(db, accumulators)
                self._digest_memo = OrderedDict()
                if held is not None and held is state:
                    self._snapshot_cache = (db.total_changes, state)
                    self.hold()
            else:
                digest.load(db, accumulators)
            self._digest_stale = False
            if state is not None:  # the digest's own bookkeeping did not change the state
                self._snapshot_cache = (db.total_changes, state)
                self._remember(state, accumulators)
            return digest.of(accumulators)
        return digest.of(digest.current(db))

    def _remember(self, data: bytes, accumulators: digest.Accumulators) -> None:
        """Which accumulators belong to these state bytes (a few recent ones; the entry holds the bytes, so the
        id cannot be reused while it is kept)."""
        memo = self._digest_memo
        assert memo is not None
        memo[id(data)] = (data, accumulators)
        memo.move_to_end(id(data))
        while len(memo) > DIGEST_MEMO_SIZE:
            memo.popitem(last=False)

    def _known_accumulators(self, data: bytes) -> digest.Accumulators | None:
        """The accumulators of `data` when this env has seen those bytes."""
        assert self._digest_memo is not None
        hit = self._digest_memo.get(id(data))
        if hit is None or hit[0] is not data:
            return None
        self._digest_memo.move_to_end(id(data))  # the start point of a reset loop stays remembered
        return hit[1]

    def reset(self) -> None:
        """Back to the state right after the last artifact load (or empty)."""
        self.restore(self._initial)

    def fork(self) -> Self:
        """An independent copy with the same state, settings and initial point; no schema re-run.

        The copy shares the parent's state bytes and makes its own database from them on first use, so a
        fork costs microseconds and a rollout pays only for the apps it touches."""
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._pending = self.snapshot()
        clone._held = None
        clone._untracked = None
        clone.__dict__.pop("_db", None)
        clone.loaded = list(self.loaded)
        if self._digest_memo is not None:
            clone._digest_memo = OrderedDict(self._digest_memo)
        return clone

    def joined(self, world: Any) -> None:
        """Called when a world composes this env: its build, every fork (with the fork's own copy of the env) and
        `World.add_env`. Nothing by default. An env that must reach the rest of its world overrides it and keeps what
        it needs (a web front end calling the world's tools, a browser opening a sibling's site); keep a weak
        reference, since the world holds the env."""

    # ---- data --------------------------------------------------------------------------------------
    @classmethod
    def artifact_dir(cls) -> Path:
        """Where the env's packaged artifacts live: an `artifacts/` folder beside its module, or its own
        `artifacts/<name>/` inside it, so two envs of one package each list only their own."""
        module_file = getattr(sys.modules[cls.__module__], "__file__", None) or "."
        shared = Path(module_file).parent / "artifacts"
        own = shared / cls.name
        return own if own.is_dir() else shared

    @classmethod
    def artifact_paths(cls) -> dict[str, Path]:
        folder = cls.artifact_dir()
        if not folder.is_dir():
            return {}
        found = (p for p in sorted(folder.iterdir()) if p.name.endswith(ARTIFACT_SUFFIXES))
        return {artifact_name(p): p for p in found}

    @classmethod
    def find_artifact(cls, name_or_path: str) -> Artifact:
        """A packaged artifact by name, or an artifact file by path."""
        paths = cls.artifact_paths()
        if name_or_path in paths:
            return Artifact.from_file(paths[name_or_path])
        path = Path(name_or_path)
        if path.exists():
            return Artifact.from_file(path)
        known = ", ".join(paths) or "none"
        raise ArtifactError(f"{cls.name}: no artifact {name_or_path!r} (packaged: {known}; or give a file path)")

    def load(self, artifact: Artifact) -> None:
        """Insert the artifact's rows table by table, all or nothing; the loaded state becomes `reset()`'s.

        Loading is a pure function of (state, artifact), so the result is remembered per class: loading
        the same artifact into the same state again (every rollout of a task) is one memory copy.
        """
        if artifact.env != self.name:
            raise ArtifactError(f"{artifact.source}: artifact is for env {artifact.env!r}, not {self.name!r}")
        state = self.snapshot()
        memo = _LOAD_MEMO.setdefault(type(self), OrderedDict())
        seen = _LOAD_SEEN.get(id(state))  # a fork of a template shares its state bytes: skip hashing them
        digest = seen[1] if seen is not None and seen[0] is state else hashlib.blake2b(state, digest_size=16).digest()
        _LOAD_SEEN[id(state)] = (state, digest)
        while len(_LOAD_SEEN) > LOAD_MEMO_SIZE:
            _LOAD_SEEN.pop(next(iter(_LOAD_SEEN)))
        key = (digest, artifact.sha256)
        if key in memo:
            memo.move_to_end(key)
            self.restore(memo[key])
        else:
            self._load_rows(artifact)
            memo[key] = self.snapshot()
            while len(memo) > LOAD_MEMO_SIZE:
                memo.popitem(last=False)
        self.loaded.append(artifact)
        self._initial = self.snapshot()

    def load_many(self, artifacts: list[Artifact]) -> None:
        """Load several artifacts, all or none: a failure puts back the state and the reset point (an
        ArtifactError then says which artifact failed in its `index`)."""
        point = self.load_point()
        try:
            for index, artifact in enumerate(artifacts):
                try:
                    self.load(artifact)
                except ArtifactError as exc:
                    exc.index = index
                    raise
        except BaseException:
            self.back_to(point)
            raise

    def load_point(self) -> tuple[bytes, bytes, list[Artifact]]:
        """The current state, reset point and loads, for `back_to` (undoing loads across several envs)."""
        return self.snapshot(), self._initial, list(self.loaded)

    def back_to(self, point: tuple[bytes, bytes, list[Artifact]]) -> None:
        state, self._initial, loaded = point
        self.restore(state)
        self.loaded = list(loaded)

    def clear(self) -> None:
        """Empty tables and no loads: the state of a fresh instance, which also becomes `reset()`'s."""
        self.restore(type(self)(self.settings).snapshot())
        self._initial, self.loaded = self.snapshot(), []

    def _load_rows(self, artifact: Artifact) -> None:
        """The actual insert; override for data that needs more than plain table rows."""
        tables = self.table_names()
        self._track()
        self.db.execute("SAVEPOINT load")
        try:
            for table, rows in artifact.data.items():
                if table not in tables:
                    raise ArtifactError(
                        f"{artifact.source}: data.{table}: {self.name} has no table {table!r} "
                        f"(tables: {', '.join(tables)})"
                    )
                self._insert_rows(table, rows, artifact.source)
        except BaseException:
            self.db.execute("ROLLBACK TO load")
            self.db.execute("RELEASE load")
            raise
        self.db.execute("RELEASE load")

    def _insert_rows(self, table: str, rows: list[dict[str, Any]], source: str) -> None:
        if not rows:
            return
        known = [row[1] for row in self.db.execute(f'PRAGMA table_info("{table}")')]
        columns = list(rows[0]) if isinstance(rows[0], dict) else []
        for index, row in enumerate(rows):
            if not isinstance(row, dict):
                raise ArtifactError(f"{source}: data.{table}[{index}]: a row is an object of column → value")
            unknown = [column for column in row if column not in known]
            if unknown:
                raise ArtifactError(
                    f"{source}: data.{table}[{index}].{unknown[0]}: {self.name} table {table!r} has no column "
                    f"{unknown[0]!r} (columns: {', '.join(known)})"
                )
            if set(row) != set(columns):
                differ = sorted(set(row) ^ set(columns))
                raise ArtifactError(
                    f"{source}: data.{table}[{index}]: every row of a table needs the same columns as the first "
                    f"({', '.join(differ)} differ)"
                )
        sql = f'INSERT INTO "{table}" ({", ".join(columns)}) VALUES ({", ".join("?" * len(columns))})'
        try:
            self.db.executemany(sql, [tuple(row[c] for c in columns) for row in rows])
        except sqlite3.Error as exc:
            raise ArtifactError(f"{source}: data.{table}: {type(exc).__name__}: {exc}") from exc

    def table_names(self) -> list[str]:
        """Data tables in creation order; virtual tables (full-text indexes) and their shadow tables are
        derived data, rebuilt by the env's own triggers, so they are neither exported nor loaded."""
        rows = self.db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
        ).fetchall()
        virtual = [name for name, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL TABLE")]
        return [
            name for name, _ in rows if name not in virtual and not name.startswith(tuple(f"{v}_" for v in virtual))
        ]

    def export(self) -> dict[str, list[dict[str, Any]]]:
        """Every table's rows in insertion order: what `load` takes back."""
        return {
            table: [dict(row) for row in self.db.execute(f'SELECT * FROM "{table}" ORDER BY rowid')]
            for table in self.table_names()
        }

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        """Read-only look at the state (for verifiers and state triggers); see `read_only`."""
        return [dict(row) for row in self.read_only(sql, params)]

    def read_only(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """Run `sql`, which may only read: a write, PRAGMA or ATTACH fails (`sqlite3.DatabaseError`, "not
        authorized") and the state cannot change, so a grading query can never alter what it grades.

        A statement that begins with SELECT cannot write (a select has no writes inside it, no function that
        writes is registered, and the sqlite3 module runs one statement per call), so it runs as it is: a
        grading query usually is one. Anything else (WITH may lead a DELETE) runs under an SQLite authorizer
        that allows only reading, for that statement alone. Installing an authorizer expires every prepared
        statement of the connection (preparing them again cost a fifth of an RL episode when every grading
        query did it), and one installed for good is a Python callback run under the connection's mutex,
        which deadlocks threads that share the connection (one waits for the mutex holding the GIL)."""
        db = self.db
        if _first_keyword(sql) == "SELECT":
            return db.execute(sql, params)
        db.set_authorizer(_read_only_action)
        try:
            return db.execute(sql, params)
        finally:
            db.set_authorizer(None)

    # ---- messages people can answer -----------------------------------------------------------------
    def describe_message(self, tool_name: str, arguments: dict[str, Any], result: Any) -> Message | None:
        """If this successful call sent a message to someone, say who and what (for persona triggers)."""
        return None

    def deliver_reply(self, message: Message, sender: str, text: str) -> Any:
        """Have `sender` answer `message` in the same thread; apps that carry messages override this."""
        raise ToolError(f"{self.name} cannot carry replies", code="unsupported")


_READ_ONLY_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
"""What a read-only statement may do; anything else (writes, PRAGMA, ATTACH) is refused."""


def _read_only_action(action: int, *_: Any) -> int:
    return sqlite3.SQLITE_OK if action in _READ_ONLY_ACTIONS else sqlite3.SQLITE_DENY


def _first_keyword(sql: str) -> str:
    """The statement's first word, upper-cased, past leading blanks and comments ("" when there is none)."""
    rest = sql
    while True:
        rest = rest.lstrip()
        if rest.startswith("--"):
            rest = rest.partition("\n")[2]
        elif rest.startswith("/*"):
            rest = rest.partition("*/")[2]
        else:
            break
    word = []
    for char in rest:
        if not char.isalpha():
            break
        word.append(char)
    return "".join(word).upper()


def _connect() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    db.row_factory = sqlite3.Row
    digest.register(db)
    return db


def jsonable(value: Any) -> Any:
    """Tool results as plain JSON data (pydantic models dumped, rows turned into dicts)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, sqlite3.Row):
        return dict(value)
    if isinstance(value, list):
        return [jsonable(item) for item in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value
