"""Cloud Storage object store: blobs under an optional name prefix in one bucket.

Keys follow the portable rules of the local `filesystem` store (checked before any request). Uploads and
downloads go through retries on 429/5xx — uploads too, which Google's client retries only when told to: an
object write here always replaces the whole object, so repeating it is safe. `put_stream` uploads in
resumable chunks of `chunk_mib` and `get_stream` writes the body (or a byte range of it) as it arrives.
"""

from __future__ import annotations

import shutil
from typing import Any, BinaryIO

from agentenv.contracts import ObjectStore
from agentenv_store_local.api import check_key, check_range
from pydantic import BaseModel, Field

from agentenv_gcp._client import GcpSettings, explain

_MIB = 2**20


class GcsSettings(GcpSettings):
    """Settings of the `gcs` object store."""

    bucket: str = Field(..., min_length=3, description="Bucket holding the objects.")
    prefix: str = Field("", description="Prefix put before every key, such as 'team-a/'; '' for none.")
    create_bucket: bool = Field(False, description="Create the bucket when it does not exist.")
    chunk_mib: int = Field(8, ge=1, le=512, description="Resumable upload chunk size, MiB (a multiple of 256 KiB).")


class GcsObjectStore(ObjectStore[GcsSettings]):
    """Trajectories, snapshots and other blobs as Cloud Storage objects."""

    name = "gcs"
    description = "Blobs in a Cloud Storage bucket (resumable streamed uploads, ranged streamed reads)."
    Settings = GcsSettings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        from google.cloud import storage
        from google.cloud.storage import retry

        super().__init__(settings)
        self.config = self.settings  # typed by the class parameter, validated once
        self.prefix = self.config.prefix
        options = {"api_endpoint": self.config.endpoint_url} if self.config.endpoint_url else None
        try:
            self._client = storage.Client(
                project=self.config.project, credentials=self.config.credentials(), client_options=options
            )
        except Exception as exc:
            raise explain(exc, "Cloud Storage client", "object", "project") from exc
        self._bucket = self._client.bucket(self.config.bucket)
        # Storage's own predicate also knows the upload library's errors; it retries 408/429/5xx and resets.
        self._retry = retry.DEFAULT_RETRY.with_timeout(self.config.retry_seconds)
        if self.config.create_bucket:
            self._ensure_bucket()

    def _fail(self, exc: BaseException, what: str) -> Exception:
        return explain(exc, f"Cloud Storage bucket {self.config.bucket!r}: {what}", "object", "bucket")

    def _ensure_bucket(self) -> None:
        from google.api_core.exceptions import Conflict

        try:
            if not self._bucket.exists(retry=self._retry):
                self._client.create_bucket(self.config.bucket, retry=self._retry)
        except Conflict:
            pass  # created meanwhile by another process
        except Exception as exc:
            raise self._fail(exc, "create") from exc

    def _blob(self, key: str, chunked: bool = False) -> Any:
        check_key(key)
        return self._bucket.blob(self.prefix + key, chunk_size=self.config.chunk_mib * _MIB if chunked else None)

    def put(self, key: str, data: bytes) -> None:
        blob = self._blob(key)
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"object {key!r} must be bytes, got {type(data).__name__}")
        try:
            blob.upload_from_string(bytes(data), retry=self._retry, timeout=self.config.timeout_seconds)
        except Exception as exc:
            raise self._fail(exc, f"put {key!r}") from exc

    def put_stream(self, key: str, source: BinaryIO) -> None:
        """Upload what `source` reads to as a resumable upload, one chunk in memory at a time.

        A blob writer, not `upload_from_file`, because the source may be a pipe or a generator (no `seek`).
        """
        blob = self._blob(key, chunked=True)
        try:
            with blob.open("wb", retry=self._retry, timeout=self.config.timeout_seconds) as writer:
                shutil.copyfileobj(source, writer, self.config.chunk_mib * _MIB)
        except Exception as exc:
            raise self._fail(exc, f"upload {key!r}") from exc

    def get(self, key: str) -> bytes:
        from google.api_core.exceptions import NotFound

        blob = self._blob(key)
        try:
            data: bytes = blob.download_as_bytes(retry=self._retry, timeout=self.config.timeout_seconds)
        except NotFound:
            raise KeyError(key) from None
        except Exception as exc:
            raise self._fail(exc, f"get {key!r}") from exc
        return data

    def get_stream(self, key: str, sink: BinaryIO, start: int = 0, end: int | None = None) -> int:
        """Copy bytes [start, end) of the object to `sink` as they arrive (a Range request); the count."""
        from google.api_core.exceptions import NotFound, RequestRangeNotSatisfiable

        blob = self._blob(key)
        check_range(start, end)
        counter = _Counting(sink)
        ranged = bool(start) or end is not None
        try:
            if end is not None and end <= start:
                if not blob.exists(retry=self._retry):
                    raise KeyError(key)
                return 0
            blob.download_to_file(
                counter,
                start=start or None,
                end=None if end is None else end - 1,
                checksum=None if ranged else "auto",
                retry=self._retry,
                timeout=self.config.timeout_seconds,
            )
        except NotFound:
            raise KeyError(key) from None
        except RequestRangeNotSatisfiable:
            return 0  # start at or past the end of an existing object
        except KeyError:
            raise
        except Exception as exc:
            raise self._fail(exc, f"get {key!r}") from exc
        return counter.count

    def list(self, prefix: str = "") -> list[str]:
        """Keys starting with `prefix`, sorted; every page of the listing is read."""
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a string, got {type(prefix).__name__}")
        try:
            names = [
                blob.name[len(self.prefix) :]
                for blob in self._client.list_blobs(
                    self._bucket, prefix=self.prefix + prefix, retry=self._retry, timeout=self.config.timeout_seconds
                )
            ]
        except Exception as exc:
            raise self._fail(exc, f"list {prefix!r}") from exc
        return sorted(names)

    def delete(self, key: str) -> bool:
        from google.api_core.exceptions import NotFound

        blob = self._blob(key)
        try:
            blob.delete(retry=self._retry, timeout=self.config.timeout_seconds)
        except NotFound:
            return False
        except Exception as exc:
            raise self._fail(exc, f"delete {key!r}") from exc
        return True


class _Counting:
    """Passes writes on to a sink and counts the bytes."""

    def __init__(self, sink: BinaryIO) -> None:
        self.sink = sink
        self.count = 0

    def write(self, data: bytes) -> int:
        self.sink.write(data)
        self.count += len(data)
        return len(data)
