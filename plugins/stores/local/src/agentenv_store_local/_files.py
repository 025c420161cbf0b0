"""Helpers shared by the local backends: settings, paths, atomic writes and the file error type."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from pydantic import BaseModel

CONFIG_SECTION = "[plugins.agentenv-store-local.{kind}]"
"""Where a backend's settings live in `.agentenv/config.toml`; named in error messages."""

TMP_PREFIX = ".agentenv-tmp-"
"""Prefix of half-written temporary files; never a valid object name, skipped by listings."""

SettingsT = TypeVar("SettingsT", bound=BaseModel)


class StoreFileError(OSError):
    """A store's file on disk cannot be used. The message names the path, the setting and the fix."""


def typed_settings(settings: BaseModel, cls: type[SettingsT]) -> SettingsT:
    """The backend's own settings model, re-validating a foreign model passed by a caller."""
    if isinstance(settings, cls):
        return settings
    return cls.model_validate(settings.model_dump())


def project_root(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """The project: the folder whose `.agentenv/` holds the config in use (found as the config is, by
    `AGENTENV_CONFIG` or walking up from the working directory), else the working directory."""
    from agentenv.config import ConfigError, find_config_file

    try:
        found = find_config_file(cwd, environ)
    except ConfigError:
        found = None
    if found is None:
        return (cwd or Path.cwd()).resolve()
    folder = found.resolve().parent
    return folder.parent if folder.name == ".agentenv" else folder


def resolve_path(value: str) -> Path:
    """An absolute path: `~` expanded, relative paths taken against the project (`project_root`), so every
    folder of a project uses its stores (`runs list` from a subfolder listed nothing when they were taken
    against the working directory).

    Resolving once at construction keeps a store pointed at the same files if the process later
    changes directory.
    """
    path = Path(value).expanduser()
    return path if path.is_absolute() else project_root() / path


def setting_hint(kind: str, setting: str) -> str:
    """'`path` under [plugins.agentenv-store-local.document]' — for error messages."""
    return f"`{setting}` under {CONFIG_SECTION.format(kind=kind)} in .agentenv/config.toml"


COPY_CHUNK = 8 * 1024 * 1024
"""Bytes moved at a time when a stream is copied, so large objects never sit in memory whole."""


def atomic_write(path: Path, data: bytes | BinaryIO, *, fsync: bool = True) -> None:
    """Write `data` (bytes, or a stream copied in chunks) to `path` so readers see the old file or the new one,
    never a partial write.

    The temporary file sits in the same directory so `os.replace` is a rename on one filesystem. The rename
    alone survives a crashed process; `fsync` also survives a power cut, at several milliseconds a write.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TMP_PREFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                shutil.copyfileobj(data, handle, COPY_CHUNK)
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def as_bytes(data: Any, what: str) -> bytes:
    """`data` as bytes; bytes-like objects are accepted, anything else is a TypeError."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    raise TypeError(f"{what} must be bytes, got {type(data).__name__}")
