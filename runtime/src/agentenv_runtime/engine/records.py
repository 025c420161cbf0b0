"""Run records: the document store keeps one record per run, the object store keeps blobs beside it.

Every store failure (a truncated or read-only database, a database replaced by a folder, a full disk)
becomes a `StoreError`: one line naming the store and the fix, which the commands print with an exit
code instead of a traceback. A run's record is written when it starts (`running`), so a run killed
outright still has one; `runs list` shows it `interrupted` once the process that owned it is gone.
"""

from __future__ import annotations

import io
import os
import socket
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from agentenv import PluginHost
from agentenv.config import Config, ConfigError, is_secret, resolve
from agentenv.contracts import DocumentStore, ObjectStore, kinds
from pydantic import ValidationError

RUNS = "runs"
T = TypeVar("T")


class StoreError(RuntimeError):
    """A store backend failed; the message is one line naming the store, what failed and the fix."""


def open_store(kind: str, config: Config, host: PluginHost) -> Any:
    """The backend `[store] <kind>` names, built with its settings from `[plugins.<dist>.<kind>]`."""
    name = config.get(f"store.{kind}")
    key = f"{kind}:{name}"
    stores = host.registry(kinds.STORES)
    if key not in stores:
        have = sorted(k.partition(":")[2] for k in stores if k.startswith(f"{kind}:"))
        fix = (
            f"add the plugin that provides it, or set [store] {kind} to one installed ({', '.join(have)})"
            if have
            else "add a store plugin: agentenv plugin add agentenv-store-local"
        )
        raise LookupError(f"[store] {kind} = {name!r} but no such {kind} store is installed; fix: {fix}")
    entry = stores[key]
    settings = config.plugin_settings(entry.dist).get(kind, {})
    # Credentials and endpoints may be `env:`/`secret:` references; a secret store resolves only `env:` ones.
    secrets = None if kind == "secret" else _secret_lookup(config, host)
    field = f"plugins.{entry.dist}.{kind}"
    resolved = _resolved(settings, field, config, secrets) if isinstance(settings, dict) else settings
    try:
        entry.obj.Settings.model_validate(resolved)
    except ValidationError as exc:
        wrong = "; ".join(f"`{'.'.join(map(str, e['loc']))}`: {e['msg']}" for e in exc.errors())
        raise ConfigError(
            f"{config.file or 'config'}: [{field}] {wrong} (fix these settings of the {name!r} {kind} store; "
            f"see the {entry.dist} README)"
        ) from None
    return guarded(f"opening the {kind} store {name!r}", entry.obj, resolved)


def _secret_lookup(config: Config, host: PluginHost) -> Any:
    """`secret:` lookups through the configured secret store, opened on first use only."""
    opened: list[Any] = []

    def lookup(key: str) -> str | None:
        if not opened:
            opened.append(open_store("secret", config, host))
        found: str | None = opened[0].get(key)
        return found

    return lookup


def resolve_reference(value: Any, *, field: str, config: Config, host: PluginHost) -> Any:
    """`env:NAME[?default]` from the environment and `secret:KEY` from the configured secret store (opened only
    for a secret); other values as they are. A ConfigError names `field` and the fix."""
    try:
        return resolve(value, field=field, file=None, secrets=_secret_lookup(config, host))
    except ConfigError as exc:
        raise ConfigError(str(exc).removeprefix("config: ")) from None


def _resolved(settings: dict[str, Any], field: str, config: Config, secrets: Any) -> dict[str, Any]:
    """Settings with references resolved; a credential written as a literal is refused (it belongs in the
    environment or the secret store, never in a config file that gets shared)."""
    out: dict[str, Any] = {}
    for name, value in settings.items():
        dotted = f"{field}.{name}"
        if isinstance(value, dict):
            out[name] = _resolved(value, dotted, config, secrets)
            continue
        if isinstance(value, str) and value and is_secret(dotted, value) and not value.startswith(("env:", "secret:")):
            raise ConfigError(
                f"{config.file or 'config'}: {dotted} is a literal credential; write it as env:NAME or secret:KEY"
            )
        out[name] = resolve(value, field=dotted, file=config.file, secrets=secrets)
    return out


def guarded(what: str, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`func(*args, **kwargs)`, with any backend failure turned into a one-line StoreError."""
    try:
        return func(*args, **kwargs)
    except (StoreError, LookupError):
        raise
    except Exception as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        fix = "check the store's file, disk and permissions"
        raise StoreError(f"{what}: {type(exc).__name__}: {detail}; {fix}") from None


def owner() -> dict[str, Any]:
    """Who runs this process: host, pid and the pid's start time (so a reused pid is not mistaken for us)."""
    return {"host": socket.gethostname(), "pid": os.getpid(), "started": _start_time(os.getpid())}


def owner_gone(record: dict[str, Any]) -> bool:
    """Whether a `running` record's owning process no longer runs (only answerable on the same host)."""
    who = record.get("owner")
    if not isinstance(who, dict) or who.get("host") != socket.gethostname() or not isinstance(who.get("pid"), int):
        return False
    pid = who["pid"]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    started = _start_time(pid)
    return started is None or (who.get("started") is not None and started != who["started"])


def _start_time(pid: int) -> int | None:
    """Field 22 of `/proc/PID/stat` (None without /proc or for a zombie: a zombie runs nothing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(errors="replace")
    except OSError:
        return None
    after_name = stat[stat.rindex(")") + 2 :].split()
    return None if after_name[0] == "Z" else int(after_name[19])


class Records:
    def __init__(self, config: Config, host: PluginHost) -> None:
        self.documents: DocumentStore = open_store("document", config, host)
        self.objects: ObjectStore = open_store("object", config, host)

    def create(self, record: dict[str, Any]) -> None:
        """Insert a new run's record; refuses to overwrite a record with the same id (compare-and-set against
        "absent" where the store has it, else a read before the write)."""
        what, refused = f"saving the record of run {record['id']}", f"run id {record['id']} is already recorded"
        if type(self.documents).put_if is DocumentStore.put_if:  # no compare-and-set in this backend
            if guarded(f"reading run {record['id']}", self.documents.get, RUNS, record["id"]) is not None:
                raise StoreError(f"{refused}; refusing to overwrite it (run again)")
            self.save(record)
        elif not guarded(what, self.documents.put_if, RUNS, record["id"], record, None):
            raise StoreError(f"{refused}; refusing to overwrite it (run again)")

    def save(self, record: dict[str, Any]) -> None:
        guarded(f"saving the record of run {record['id']}", self.documents.put, RUNS, record["id"], record)

    def put_object(self, key: str, data: bytes) -> None:
        guarded(f"storing {key}", self.objects.put, key, data)

    def put_object_chunks(self, key: str, chunks: Iterable[bytes]) -> None:
        """Store an object given as chunks through the store's `put_stream` (the local and cloud stores stream
        it; the contract's default reads it whole), so a long trajectory never has to be one bytes object."""
        guarded(f"storing {key}", self.objects.put_stream, key, ChunkReader(chunks))

    def get_object(self, key: str) -> bytes:
        return guarded(f"reading {key}", self.objects.get, key)

    def get(self, run_id: str) -> dict[str, Any]:
        record = guarded(f"reading run {run_id}", self.documents.get, RUNS, run_id)
        if record is None:
            matches = [r for r in self.list(5000) if str(r.get("id", "")).startswith(run_id)]
            if len(matches) != 1:
                raise LookupError(f"no run {run_id!r}" if not matches else f"run id {run_id!r} is ambiguous")
            record = matches[0]
        return with_live_status(record)

    def list(self, limit: int = 20, **where: Any) -> list[dict[str, Any]]:
        found = guarded("listing runs", self.documents.query, RUNS, where or None, limit=limit)
        return [with_live_status(r) for r in found]


def with_live_status(record: dict[str, Any]) -> dict[str, Any]:
    """A `running` record whose owner is gone is `interrupted` (killed outright, it never finished)."""
    if record.get("status") == "running" and owner_gone(record):
        return record | {"status": "interrupted", "passed": False}
    return record


class ChunkReader(io.RawIOBase):
    """A read-only stream over an iterator of byte chunks, for `ObjectStore.put_stream`."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._left = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._left:
            try:
                self._left = next(self._chunks)
            except StopIteration:
                return 0
        size = min(len(buffer), len(self._left))
        buffer[:size], self._left = self._left[:size], self._left[size:]
        return size
