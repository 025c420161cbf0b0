"""Artifacts: immutable, versioned, content-hashed data sets that an env loads.

An artifact file is JSON (optionally gzip-compressed, `.json.gz`):
``{"name": "acme", "env": "slack", "version": "1.0.0", "description": "…", "data": {table: [row, …]}}``.
Its identity is the SHA-256 of the uncompressed bytes, so a task can pin exactly what it loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARTIFACT_SUFFIXES = (".json.gz", ".json")
MAX_ARTIFACT_BYTES = int(os.environ.get("AGENTENV_MAX_ARTIFACT_BYTES") or 512 * 1024 * 1024)
"""Largest artifact read, compressed or not (a path such as /dev/zero once read 23.5 GB into memory);
`AGENTENV_MAX_ARTIFACT_BYTES` raises it."""


class ArtifactError(ValueError):
    """An artifact file that cannot be read or does not fit the env; the message names file and field."""

    index: int = 0
    """Which artifact of a `load_many` failed."""
    env: str = ""
    """Which env's load failed, from `World.load_many`."""


@dataclass(frozen=True)
class Artifact:
    name: str
    env: str
    version: str
    data: dict[str, Any]
    sha256: str
    description: str = ""
    source: str = ""

    @property
    def ref(self) -> str:
        """`env/name@version#sha256-prefix`, the string a task pins."""
        return f"{self.env}/{self.name}@{self.version}#{self.sha256[:12]}"

    def to_bytes(self) -> bytes:
        document = {
            "name": self.name,
            "env": self.env,
            "version": self.version,
            "description": self.description,
            "data": self.data,
        }
        return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, raw: bytes, *, source: str = "<bytes>") -> Artifact:
        if raw[:2] == b"\x1f\x8b":
            raw = _gunzip(raw, source)
        try:
            document = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ArtifactError(f"{source}: not valid JSON ({exc})") from None
        except RecursionError:
            raise ArtifactError(f"{source}: not valid JSON (nested too deep)") from None
        if not isinstance(document, dict):
            raise ArtifactError(f"{source}: the top level must be an object with name, env, version, data")
        for key in ("name", "env", "version", "data"):
            if key not in document:
                raise ArtifactError(f"{source}: missing field `{key}`")
        if not isinstance(document["data"], dict):
            raise ArtifactError(f"{source}: field `data` must be an object of table name → list of rows")
        return cls(
            name=str(document["name"]),
            env=str(document["env"]),
            version=str(document["version"]),
            data=document["data"],
            sha256=hashlib.sha256(raw).hexdigest(),
            description=str(document.get("description", "")),
            source=source,
        )

    @classmethod
    def from_file(cls, path: Path) -> Artifact:
        try:
            with path.open("rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode):
                    raise ArtifactError(f"{path}: not a regular file; an artifact is a .json or .json.gz file")
                if info.st_size > MAX_ARTIFACT_BYTES:
                    raise ArtifactError(_too_large(path, info.st_size))
                raw = handle.read(MAX_ARTIFACT_BYTES + 1)
        except OSError as exc:
            raise ArtifactError(f"{path}: cannot read artifact ({exc.strerror})") from exc
        if len(raw) > MAX_ARTIFACT_BYTES:  # it grew while we read it
            raise ArtifactError(_too_large(path, len(raw)))
        return cls.from_bytes(raw, source=str(path))

    @classmethod
    def build(cls, *, name: str, env: str, version: str, data: dict[str, Any], description: str = "") -> Artifact:
        """A new artifact from data in memory (snapshots of a world become artifacts this way)."""
        draft = cls(name, env, version, data, "", description)
        return cls.from_bytes(draft.to_bytes(), source=f"<built {env}/{name}>")


def artifact_name(path: Path) -> str:
    for suffix in ARTIFACT_SUFFIXES:
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    return path.stem


def _too_large(source: object, size: int) -> str:
    return (
        f"{source}: artifact of {size} bytes is larger than {MAX_ARTIFACT_BYTES} "
        "(raise AGENTENV_MAX_ARTIFACT_BYTES if it is meant to be this big)"
    )


GUNZIP_CHUNK = 1024 * 1024
"""Bytes inflated at a time while an artifact's decompressed size is measured."""


def _gunzip(raw: bytes, source: str) -> bytes:
    """Decompress a gzip artifact of at most MAX_ARTIFACT_BYTES once inflated.

    The size is measured first, a chunk at a time with nothing kept, so a gzip bomb is refused with about a
    megabyte in memory rather than after filling the limit (inflating straight into one buffer peaked at twice
    the limit while it grew). Only then is the artifact inflated for real. Inflating twice costs little next to
    parsing the JSON.
    """
    size = 0
    inflate = zlib.decompressobj(wbits=31)
    try:
        chunk = inflate.decompress(raw, GUNZIP_CHUNK)
        while chunk:
            size += len(chunk)
            if size > MAX_ARTIFACT_BYTES:
                raise ArtifactError(_too_large(source, size) + " once decompressed (stopped there)")
            chunk = inflate.decompress(inflate.unconsumed_tail, GUNZIP_CHUNK)
        return zlib.decompress(raw, wbits=31)
    except zlib.error as exc:
        raise ArtifactError(f"{source}: not valid gzip ({exc})") from None
