"""Filesystem object store: blobs as files under one root folder, keyed by relative `/` paths.

Keys are checked before any path is built, so no key can name a file outside the root. Writes go
to a temporary file in the target folder and are renamed into place, so a reader (or a crash) never
sees half an object.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, BinaryIO

from agentenv.contracts import ObjectStore
from pydantic import BaseModel, ConfigDict, Field

from agentenv_store_local._files import COPY_CHUNK, TMP_PREFIX, as_bytes, atomic_write, resolve_path, typed_settings

_PUT_ATTEMPTS = 5


class FilesystemSettings(BaseModel):
    """Settings of the `filesystem` object store."""

    model_config = ConfigDict(extra="forbid")

    root: str = Field(
        ".agentenv/data/objects",
        description="Folder holding the objects; relative to the project (where the config is).",
    )
    fsync: bool = Field(
        False,
        description="Flush every object to disk before it counts as written (survives a power cut, not only a "
        "crash; costs milliseconds per write, which dominates fast rollouts).",
    )


def check_key(key: str) -> list[str]:
    """The key's segments; ValueError (naming the key) when it could escape the root or is ambiguous."""
    if not isinstance(key, str):
        raise TypeError(f"object key must be a string, got {type(key).__name__}")
    reason = None
    segments = key.split("/")
    if not key:
        reason = "it is empty"
    elif key.startswith("/"):
        reason = "it is absolute (starts with '/')"
    elif "\\" in key:
        reason = "it contains a backslash"
    elif "\x00" in key:
        reason = "it contains a NUL character"
    elif "" in segments:
        reason = "it has an empty segment ('//' or a trailing '/')"
    elif any(s in (".", "..") for s in segments):
        reason = "it has a '.' or '..' segment"
    elif any(s.startswith(TMP_PREFIX) for s in segments):
        reason = f"segments starting with {TMP_PREFIX!r} are reserved for temporary files"
    if reason:
        raise ValueError(
            f"invalid object key {key!r}: {reason}; use a relative path of non-empty '/'-separated "
            "segments, such as 'runs/42/trajectory.json'"
        )
    return segments


def check_range(start: int, end: int | None) -> None:
    """ValueError unless [start, end) is a byte range: non-negative integers, `end` None (to the end) or ≥ start."""
    for name, value in (("start", start), ("end", end)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ValueError(f"{name} of a ranged read must be a non-negative integer, got {value!r}")
    if end is not None and end < start:
        raise ValueError(f"end ({end}) of a ranged read must not be before start ({start})")


class FilesystemObjectStore(ObjectStore):
    """Trajectories, snapshots and other blobs as files under `root`."""

    name = "filesystem"
    description = "Blobs as files under a local folder, written atomically."
    Settings = FilesystemSettings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        self.root: Path = resolve_path(typed_settings(self.settings, FilesystemSettings).root)

    def path_of(self, key: str) -> Path:
        """The file that holds `key` (after checking the key)."""
        return self.root.joinpath(*check_key(key))

    def put(self, key: str, data: bytes) -> None:
        self._store(key, as_bytes(data, f"object {key!r}"))

    def put_stream(self, key: str, source: BinaryIO) -> None:
        """Copy `source` into the object in chunks (large objects never sit in memory whole)."""
        self._store(key, source)

    def _store(self, key: str, payload: bytes | BinaryIO) -> None:
        path = self.path_of(key)
        # Write first and make the folder only when it is missing (most puts land in an existing one); a
        # concurrent delete may prune the folder between mkdir and the write, so try again then.
        for attempt in range(_PUT_ATTEMPTS):
            try:
                if attempt:
                    path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(path, payload, fsync=typed_settings(self.settings, FilesystemSettings).fsync)
                return
            except (FileExistsError, NotADirectoryError, IsADirectoryError) as exc:
                # A concurrent delete pruning the folder mid-`mkdir` looks like a clash too: retry unless it is one.
                conflict = self._conflict(key)
                if conflict is not None:
                    raise ValueError(conflict) from exc
                if attempt == _PUT_ATTEMPTS - 1:
                    raise
            except FileNotFoundError:
                if attempt == _PUT_ATTEMPTS - 1:
                    raise

    def _conflict(self, key: str) -> str | None:
        """Why `key` cannot be a file here (an object at a prefix, or a folder at the key); None: no clash."""
        segments = key.split("/")
        for i in range(1, len(segments)):
            prefix = "/".join(segments[:i])
            if self.root.joinpath(*segments[:i]).is_file():
                return (
                    f"cannot store object {key!r}: object {prefix!r} exists, and the filesystem store "
                    "cannot hold an object and a folder of the same name; delete it or pick another key"
                )
        if not self.root.joinpath(*segments).is_dir():
            return None
        return (
            f"cannot store object {key!r}: other objects use it as a prefix ({key + '/'!r}), and the "
            "filesystem store cannot hold an object and a folder of the same name; pick another key"
        )

    def get(self, key: str) -> bytes:
        path = self.path_of(key)
        try:
            return path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise KeyError(key) from None

    def get_stream(self, key: str, sink: BinaryIO, start: int = 0, end: int | None = None) -> int:
        """Copy bytes [start, end) of the object to `sink` in chunks; the count copied."""
        check_range(start, end)
        try:
            handle = self.path_of(key).open("rb")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise KeyError(key) from None
        with handle:
            handle.seek(start)
            left = None if end is None else max(0, end - start)
            copied = 0
            while left is None or left > 0:
                chunk = handle.read(COPY_CHUNK if left is None else min(COPY_CHUNK, left))
                if not chunk:
                    break
                sink.write(chunk)
                copied += len(chunk)
                left = None if left is None else left - len(chunk)
            return copied

    def list(self, prefix: str = "") -> list[str]:
        """Keys starting with `prefix` (a plain string prefix, as in S3), sorted."""
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a string, got {type(prefix).__name__}")
        # Walk only the deepest folder the prefix names, when it is a well-formed key path.
        folder, _, _ = prefix.rpartition("/")
        start = self.root
        if folder:
            try:
                start = self.root.joinpath(*check_key(folder))
            except ValueError:
                return []  # no valid key can start with a malformed folder
        keys: list[str] = []
        for dirpath, dirnames, filenames in os.walk(start):
            dirnames[:] = [d for d in dirnames if not d.startswith(TMP_PREFIX)]
            rel = Path(dirpath).relative_to(self.root).as_posix()
            base = "" if rel == "." else rel + "/"
            keys.extend(base + f for f in filenames if not f.startswith(TMP_PREFIX))
        return sorted(k for k in keys if k.startswith(prefix))

    def delete(self, key: str) -> bool:
        path = self.path_of(key)
        if not path.is_file():
            return False
        try:
            path.unlink()
        except FileNotFoundError:
            return False  # deleted concurrently
        # Prune folders left empty so they cannot later clash with an object of the same name.
        for parent in path.parents:
            if parent == self.root or self.root not in parent.parents:
                break
            try:
                parent.rmdir()
            except OSError:
                break
        return True
