"""The registry: bundles, tasks, artifacts, agents and envs by name and version, on the configured stores.

A pushed item is packed into a reproducible `.tar.gz` (entries sorted, times, owners and modes normalised),
so the same files always give the same SHA-256. The archive goes to the object store under its content
address (`registry/blobs/sha256/<hex>.tar.gz`); env images (archives of served-world images) go to the
image store. One document per `KIND:NAME@VERSION` in the `registry` collection of the document store
points at the content. Versions are immutable: pushing other content under an existing version is
refused. Pulling by version or by content hash verifies the hash and unpacks into a cache keyed by it, so
every pull of one version yields the same files, on any machine whose config names the same stores.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import shutil
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from agentenv import PluginHost
from agentenv.config import Config

from agentenv_runtime.bundle_files import UnsafeFile, archive_mode, shipped_files
from agentenv_runtime.engine.records import open_store

KINDS = ("bundle", "task", "artifact", "agent", "env")
COLLECTION = "registry"
SCHEME = "registry://"
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,127}")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
_HASH = re.compile(r"sha256:[0-9a-f]{64}")
MAX_UNPACKED_BYTES = 1 << 30
"""What one archive may unpack to (1 GiB): a small archive of zeros must not fill the disk."""


class RegistryError(ValueError):
    """A registry request that cannot be met; the message names the item and the fix."""


@dataclass(frozen=True)
class Entry:
    kind: str
    name: str
    version: str
    digest: str
    size: int
    pushed_at: float

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


def check_name(kind: str, name: str, version: str | None = None) -> None:
    if kind not in KINDS:
        raise RegistryError(f"unknown registry kind {kind!r}; use one of: {', '.join(KINDS)}")
    if not _NAME.fullmatch(name):
        raise RegistryError(f"invalid {kind} name {name!r}: use lowercase letters, digits, '.', '_', '-'")
    if version is not None and not _VERSION.fullmatch(version):
        raise RegistryError(f"invalid version {version!r} of {kind} {name!r}: use letters, digits, '.', '_', '+', '-'")


def split_ref(ref: str) -> tuple[str, str]:
    """`NAME@VERSION` or `NAME@sha256:HEX` → (name, version-or-hash)."""
    name, sep, version = ref.partition("@")
    if not sep or not version:
        raise RegistryError(f"{ref!r}: name a version, NAME@VERSION (or NAME@sha256:HEX); see `agentenv registry list`")
    return name, version


def pack(path: Path) -> bytes:
    """A reproducible gzip tarball of a file or folder: the same files always give the same bytes.

    A folder contributes its `shipped_files` only (no secrets, no caches; a symlink out of it is refused)."""
    if not path.exists():
        raise RegistryError(f"{path}: no such file or folder to push")
    try:
        files = shipped_files(path) if path.is_dir() else [(path, PurePosixPath(path.name))]
    except UnsafeFile as exc:
        raise RegistryError(str(exc)) from None
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for file, name in files:
            info = tarfile.TarInfo(name.as_posix())
            info.size = file.stat().st_size
            info.mode = archive_mode(file)
            with file.open("rb") as handle:
                tar.addfile(info, handle)
    return gzip.compress(raw.getvalue(), mtime=0)


def unpack(data: bytes, into: Path, *, max_bytes: int = MAX_UNPACKED_BYTES) -> None:
    """Unpack a registry tarball into a new folder, refusing any member that would land outside it and an archive
    whose files add up to more than `max_bytes`. A refused archive leaves nothing behind."""
    tmp = into.with_name(f".{into.name}.partial-{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=False)
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            total = 0
            for member in tar:
                total += member.size
                if total > max_bytes:
                    raise tarfile.TarError(f"the archive unpacks to more than {max_bytes} bytes; refusing it")
            tar.extractall(tmp, filter="data")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        os.replace(tmp, into)
    except OSError:  # another process unpacked the same content first: keep theirs
        shutil.rmtree(tmp)


def cache_root() -> Path:
    """Where pulled content is unpacked, one folder per content hash (shared by every config)."""
    base = os.environ.get("AGENTENV_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or "~/.cache", "agentenv")
    return Path(base).expanduser() / "registry"


class Registry:
    """Push, pull and list registry items on the stores `.agentenv/config.toml` names."""

    def __init__(self, config: Config, host: PluginHost) -> None:
        self.documents = open_store("document", config, host)
        self.objects = open_store("object", config, host)
        self._config, self._host = config, host

    def _images(self) -> Any:
        return open_store("image", self._config, self._host)

    def push(self, kind: str, path: Path, name: str, version: str) -> tuple[Entry, bool]:
        """Store `path` as KIND NAME@VERSION; (entry, whether anything new was stored)."""
        check_name(kind, name, version)
        if kind == "env":
            data = path.read_bytes() if path.is_file() else b""
            if not data:
                raise RegistryError(f"{path}: an env is pushed as a served-world image archive file (docker save)")
            digest = self._images().put(f"agentenv/{name}:{version}", data)
        else:
            data = pack(path)
            digest = digest_of(data)
        doc_id = f"{kind}:{name}@{version}"
        entry = Entry(kind, name, version, digest, len(data), time.time())
        existing = self.documents.get(COLLECTION, doc_id)
        if existing is not None:
            if existing["digest"] != digest:
                raise RegistryError(
                    f"{kind} {name}@{version} is already in the registry with other content ({existing['digest']}); "
                    "versions are immutable: push a new version"
                )
            return _entry(existing), False
        if kind != "env":
            self.objects.put(blob_key(digest), data)
        if not self.documents.put_if(COLLECTION, doc_id, vars(entry), None):
            return self.push(kind, path, name, version)  # raced with another push of this version: compare again
        return entry, True

    def resolve(self, kind: str, ref: str) -> Entry:
        """The entry for NAME@VERSION or NAME@sha256:HEX; RegistryError naming what exists otherwise."""
        name, version = split_ref(ref)
        check_name(kind, name)
        if _HASH.fullmatch(version):
            found = self.documents.query(COLLECTION, {"kind": kind, "name": name, "digest": version}, limit=1)
        else:
            check_name(kind, name, version)
            doc = self.documents.get(COLLECTION, f"{kind}:{name}@{version}")
            found = [doc] if doc else []
        if not found:
            versions = [e.version for e in self.list(kind) if e.name == name]
            have = f"versions: {', '.join(versions)}" if versions else "no version of it is pushed"
            raise RegistryError(f"no {kind} {ref!r} in the registry ({have}); push it with `agentenv registry push`")
        return _entry(found[0])

    def pull(self, kind: str, ref: str, out: Path | None = None) -> tuple[Entry, Path]:
        """Fetch, verify and unpack an item; (entry, folder or file). Cached by content hash."""
        entry = self.resolve(kind, ref)
        if kind == "env":
            data = self._images().get(entry.digest)
            target = (out or cache_root() / "sha256" / entry.digest[7:]) / f"{entry.name}.image.tar"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            return entry, target
        target = out or cache_root() / "sha256" / entry.digest[7:]
        if out is None and target.is_dir():
            return entry, target
        data = self.objects.get(blob_key(entry.digest))
        actual = digest_of(data)
        if actual != entry.digest:
            raise RegistryError(f"{kind} {entry.ref}: stored content has {actual}, the registry says {entry.digest}")
        if target.exists():
            raise RegistryError(f"{target} already exists; pull into a new folder (--out)")
        unpack(data, target)
        return entry, target

    def list(self, kind: str | None = None) -> list[Entry]:
        where = {"kind": kind} if kind else None
        entries = [_entry(doc) for doc in self.documents.query(COLLECTION, where)]
        return sorted(entries, key=lambda e: (e.kind, e.name, e.version))


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def blob_key(digest: str) -> str:
    return f"registry/blobs/sha256/{digest.removeprefix('sha256:')}.tar.gz"


def _entry(doc: dict[str, Any]) -> Entry:
    return Entry(doc["kind"], doc["name"], doc["version"], doc["digest"], int(doc["size"]), float(doc["pushed_at"]))


def bundle_folder(uri: str, config: Config, host: PluginHost) -> Path:
    """The unpacked folder of `registry://NAME@VERSION` (pulled into the cache when needed)."""
    _, folder = Registry(config, host).pull("bundle", uri.removeprefix(SCHEME))
    return folder
