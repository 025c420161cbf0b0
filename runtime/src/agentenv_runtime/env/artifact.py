"""Artifacts: immutable, versioned, content-hashed data sets that an env loads.

An artifact file is JSON (optionally gzip-compressed, `.json.gz`):
``{"name": "acme", "env": "slack", "version": "1.0.0", "description": "…", "data": {table: [row, …]}}``.
Its identity is the SHA-256 of the uncompressed bytes, so a task can pin exactly what it loaded.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARTIFACT_SUFFIXES = (".json.gz", ".json")


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
            raw = gzip.decompress(raw)
        try:
            document = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ArtifactError(f"{source}: not valid JSON ({exc})") from exc
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
            raw = path.read_bytes()
        except OSError as exc:
            raise ArtifactError(f"{path}: cannot read artifact ({exc.strerror})") from exc
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
