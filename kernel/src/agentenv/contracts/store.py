"""Store backends: documents (run records), objects (blobs), secrets and images."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, BinaryIO, ClassVar, Literal

from agentenv.contracts.base import Configured
from agentenv.contracts.base import SettingsT as S

StoreKind = Literal["document", "object", "secret", "image"]


class StoreBackend(Configured[S], ABC):
    """Base of all store backends; `kind` says which `[store]` setting selects it."""

    kind: ClassVar[StoreKind]


class DocumentStore(StoreBackend[S], ABC):
    """JSON documents by collection and id (run records, step records)."""

    kind: ClassVar[StoreKind] = "document"

    @abstractmethod
    def put(self, collection: str, doc_id: str, doc: dict[str, Any]) -> None: ...

    @abstractmethod
    def get(self, collection: str, doc_id: str) -> dict[str, Any] | None: ...

    @abstractmethod
    def query(
        self, collection: str, where: dict[str, Any] | None = None, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Documents whose top-level fields equal `where`, newest first."""

    @abstractmethod
    def delete(self, collection: str, doc_id: str) -> bool: ...

    def put_if(self, collection: str, doc_id: str, doc: dict[str, Any], expected: dict[str, Any] | None) -> bool:
        """Compare-and-set: write only if the stored document equals `expected` (None: absent); whether it wrote."""
        raise NotImplementedError(f"document store {self.name!r} has no compare-and-set (put_if)")


class ObjectStore(StoreBackend[S], ABC):
    """Immutable-by-convention blobs by key (trajectories, snapshots, artifacts)."""

    kind: ClassVar[StoreKind] = "object"

    @abstractmethod
    def put(self, key: str, data: bytes) -> None: ...

    @abstractmethod
    def get(self, key: str) -> bytes:
        """Raise KeyError when missing."""

    @abstractmethod
    def list(self, prefix: str = "") -> list[str]: ...

    @abstractmethod
    def delete(self, key: str) -> bool: ...

    def put_stream(self, key: str, source: BinaryIO) -> None:
        """Store what `source` reads to; backends override it to stream large objects in chunks."""
        self.put(key, source.read())

    def get_stream(self, key: str, sink: BinaryIO, start: int = 0, end: int | None = None) -> int:
        """Write bytes [start, end) of the object to `sink` (a ranged read); the count. KeyError when missing."""
        if start < 0 or (end is not None and end < start):
            raise ValueError(f"object {key!r}: [{start}, {end}) is not a byte range (0 <= start <= end)")
        data = self.get(key)[start:end]
        sink.write(data)
        return len(data)


class SecretStore(StoreBackend[S], ABC):
    """Resolves `secret:KEY` references in config."""

    kind: ClassVar[StoreKind] = "secret"

    @abstractmethod
    def get(self, key: str) -> str | None: ...


class ImageStore(StoreBackend[S], ABC):
    """Sandbox images by reference (`name:tag`) → content digest."""

    kind: ClassVar[StoreKind] = "image"

    @abstractmethod
    def put(self, ref: str, data: bytes) -> str:
        """Store an image archive; return its digest."""

    @abstractmethod
    def get(self, ref: str) -> bytes: ...

    @abstractmethod
    def list(self) -> list[str]: ...
