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

from agentenv.contracts.env import Environment
from agentenv.contracts.trigger import Message
from pydantic import BaseModel, ValidationError

from agentenv_runtime.env.artifact import ARTIFACT_SUFFIXES, Artifact, ArtifactError, artifact_name
from agentenv_runtime.env.tool import TOOL_MARK, ToolError, ToolSpec, argument_errors, build_tool_spec

LOAD_MEMO_SIZE = 16
_LOAD_MEMO: dict[type, OrderedDict[tuple[bytes, str], bytes]] = {}
_LOAD_SEEN: dict[int, tuple[bytes, bytes]] = {}
"""id(state bytes) → (those bytes, their digest); holding the bytes keeps the id from being reused."""


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    """Real UTC time; the world replaces it with its virtual clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class Env(Environment):
    """Subclass, set `name` and `schema` (SQL DDL), and mark tool methods with `@tool`.

    Override `load` / `export` only when rows need more than a plain table insert, and
    `describe_message` / `deliver_reply` when the app carries messages people can answer.
    """

    schema: ClassVar[str] = ""
    _tool_specs: ClassVar[dict[str, ToolSpec] | None] = None

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        if not isinstance(settings, BaseModel):
            settings = self.Settings.model_validate(settings or {})
        self.settings = settings
        self.clock: Clock = SystemClock()
        self.db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.executescript(self.schema)
        self.db.execute("PRAGMA user_version = 1")  # an env with no tables still has a page to snapshot
        self.loaded: list[Artifact] = []
        self._initial = self.snapshot()

    # ---- tools -------------------------------------------------------------------------------------
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._tool_specs = None  # built on first use, once every type the hints name exists

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

    def call(self, tool_name: str, arguments: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        """Validate and run a tool: (result, None) or (None, structured error). State is unchanged on error."""
        spec = self.tool_specs().get(tool_name)
        if spec is None:
            return None, {"code": "unknown_tool", "message": f"{self.name} has no tool {tool_name!r}"}
        try:
            parsed = spec.args_model.model_validate(arguments)
        except ValidationError as exc:
            return None, argument_errors(exc)
        kwargs = {field: getattr(parsed, field) for field in type(parsed).model_fields}
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
    def snapshot(self) -> bytes:
        """The state as bytes. Unchanged state (same `total_changes`) returns the cached bytes: forking a
        template world thousands of times then costs one copy each, not two."""
        changes = self.db.total_changes
        cached = self.__dict__.get("_snapshot_cache")
        if cached is not None and cached[0] == changes:
            return cached[1]  # type: ignore[no-any-return]
        data = self.db.serialize()
        self._snapshot_cache = (changes, data)
        return data

    def restore(self, data: bytes) -> None:
        self.db.deserialize(data)
        self._snapshot_cache = (self.db.total_changes, data)

    def reset(self) -> None:
        """Back to the state right after the last artifact load (or empty)."""
        self.restore(self._initial)

    def fork(self) -> Self:
        """An independent copy with the same state, settings and initial point; no schema re-run."""
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        clone.db.row_factory = sqlite3.Row
        data = self.snapshot()
        clone.db.deserialize(data)
        clone._snapshot_cache = (clone.db.total_changes, data)
        clone.loaded = list(self.loaded)
        return clone

    # ---- data --------------------------------------------------------------------------------------
    @classmethod
    def artifact_dir(cls) -> Path:
        """Where the env's packaged artifacts live: an `artifacts/` folder beside its module."""
        module_file = getattr(sys.modules[cls.__module__], "__file__", None) or "."
        return Path(module_file).parent / "artifacts"

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
        state, initial, loaded = self.snapshot(), self._initial, list(self.loaded)
        try:
            for index, artifact in enumerate(artifacts):
                try:
                    self.load(artifact)
                except ArtifactError as exc:
                    exc.index = index
                    raise
        except BaseException:
            self.restore(state)
            self._initial, self.loaded = initial, loaded
            raise

    def _load_rows(self, artifact: Artifact) -> None:
        """The actual insert; override for data that needs more than plain table rows."""
        tables = self.table_names()
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
        columns = list(rows[0])
        sql = f'INSERT INTO "{table}" ({", ".join(columns)}) VALUES ({", ".join("?" * len(columns))})'
        try:
            self.db.executemany(sql, [tuple(row[c] for c in columns) for row in rows])
        except (sqlite3.Error, KeyError) as exc:
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
        """Read-only look at the state (for verifiers and state triggers)."""
        return [dict(row) for row in self.db.execute(sql, params)]

    # ---- messages people can answer -----------------------------------------------------------------
    def describe_message(self, tool_name: str, arguments: dict[str, Any], result: Any) -> Message | None:
        """If this successful call sent a message to someone, say who and what (for persona triggers)."""
        return None

    def deliver_reply(self, message: Message, sender: str, text: str) -> Any:
        """Have `sender` answer `message` in the same thread; apps that carry messages override this."""
        raise ToolError(f"{self.name} cannot carry replies", code="unsupported")


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
