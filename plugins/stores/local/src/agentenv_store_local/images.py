"""Local image store: image archives stored by content digest, with `name:tag` references.

Layout under `root`:
    blobs/sha256/<hex>   one file per distinct archive, named by its SHA-256
    index.json           {"version": 1, "refs": {"name:tag": "sha256:<hex>", ...}}
The index is rewritten atomically under a lock (a file lock across processes where the platform
has `fcntl`), so concurrent pushes never lose each other's tags.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentenv.contracts import ImageStore
from pydantic import BaseModel, ConfigDict, Field

from agentenv_store_local._files import (
    StoreFileError,
    as_bytes,
    atomic_write,
    resolve_path,
    typed_settings,
)

try:  # POSIX only; elsewhere the in-process lock is all we have.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_DOMAIN_PART = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_DOMAIN = rf"{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*(?::[0-9]+)?"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_NAME = rf"(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
REF = re.compile(rf"(?P<name>{_NAME}):(?P<tag>{_TAG})")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_MAX_NAME = 255


class LocalImageSettings(BaseModel):
    """Settings of the `local` image store."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    root: str = Field(
        ".agentenv/data/images",
        description="Folder of blobs and the index; relative to the project (where the config is).",
    )


def check_ref(ref: str, *, allow_digest: bool = True) -> str:
    """'tag' when `ref` is `name:tag`, 'digest' when it is `sha256:<64 hex>`; ValueError otherwise."""
    if not isinstance(ref, str):
        raise TypeError(f"image reference must be a string, got {type(ref).__name__}")
    if ref.startswith("sha256:"):
        if not allow_digest:
            raise ValueError(
                f"invalid image reference {ref!r}: expected 'name:tag', not a digest; digests name "
                "content and are returned by put, for example put('agentenv/slack:0.1.0', data)"
            )
        if DIGEST.fullmatch(ref):
            return "digest"
        raise ValueError(f"invalid image digest {ref!r}: expected 'sha256:' followed by 64 lowercase hex digits")
    match = REF.fullmatch(ref)
    if match is None or len(match["name"]) > _MAX_NAME:
        accepted = "'name:tag' or 'sha256:<64 hex digits>'" if allow_digest else "'name:tag'"
        raise ValueError(
            f"invalid image reference {ref!r}: expected {accepted}, where name is lowercase "
            "components separated by '/' (optionally after a registry host) and tag is up to 128 of "
            "letters, digits, '_', '.', '-' — for example 'agentenv/slack:0.1.0'"
        )
    return "tag"


class LocalImageStore(ImageStore):
    """Sandbox image archives on local disk, addressed by `name:tag` or by digest."""

    name = "local"
    description = "Image archives in a local folder, content-addressed by SHA-256, with a name:tag index."
    Settings = LocalImageSettings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        self.root: Path = resolve_path(typed_settings(self.settings, LocalImageSettings).root)
        self.index_path = self.root / "index.json"
        self._lock = threading.Lock()

    def blob_path(self, digest: str) -> Path:
        return self.root / "blobs" / "sha256" / digest.removeprefix("sha256:")

    def put(self, ref: str, data: bytes) -> str:
        """Store the archive (once per content) and point `ref` at it; return its digest."""
        check_ref(ref, allow_digest=False)
        payload = as_bytes(data, f"image {ref!r}")
        digest = "sha256:" + hashlib.sha256(payload).hexdigest()
        blob = self.blob_path(digest)
        if not blob.is_file():
            blob.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(blob, payload)
        with self._index_locked():
            refs = self._read_index()
            refs[ref] = digest
            self._write_index(refs)
        return digest

    def get(self, ref: str) -> bytes:
        """The archive for `name:tag` or `sha256:...`; KeyError when unknown."""
        if check_ref(ref) == "digest":
            digest = ref
        else:
            found = self._read_index().get(ref)
            if found is None:
                raise KeyError(ref)
            digest = found
        path = self.blob_path(digest)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            if digest == ref:
                raise KeyError(ref) from None
            raise StoreFileError(
                f"image {ref!r} points at {digest}, but {path} is missing; push the image again"
            ) from None
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            raise StoreFileError(f"image blob {path} does not match its digest {digest}; push the image again")
        return data

    def list(self) -> list[str]:
        """Every `name:tag` reference, sorted."""
        return sorted(self._read_index())

    # -- index --------------------------------------------------------------------------------

    def _read_index(self) -> dict[str, str]:
        try:
            raw = self.index_path.read_bytes()
        except FileNotFoundError:
            return {}
        try:
            index = json.loads(raw)
            refs = index["refs"]
            if not isinstance(refs, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in refs.items()
            ):
                raise TypeError("`refs` must map strings to strings")
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreFileError(
                f"image index {self.index_path} is corrupt ({exc}); restore it from a backup, or delete "
                "it and push the images again"
            ) from exc
        return refs

    def _write_index(self, refs: dict[str, str]) -> None:
        text = json.dumps({"version": 1, "refs": dict(sorted(refs.items()))}, indent=2) + "\n"
        atomic_write(self.index_path, text.encode("utf-8"))

    @contextmanager
    def _index_locked(self) -> Iterator[None]:
        """Serialise read-modify-write of the index across threads and (on POSIX) processes."""
        with self._lock:
            self.root.mkdir(parents=True, exist_ok=True)
            if fcntl is None:  # pragma: no cover - Windows
                yield
                return
            with (self.root / ".index.lock").open("a") as handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
