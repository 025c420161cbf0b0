"""S3 object store: blobs under an optional key prefix in one bucket.

Keys follow the same portable rules as the local `filesystem` store (checked before any request). Large
objects are streamed: `put_stream` uploads in multipart chunks of `part_mib`, a few at a time, and
`get_stream` reads the body (or a byte range of it) chunk by chunk, so neither holds the object in memory.
"""

from __future__ import annotations

from typing import Any, BinaryIO

from agentenv.contracts import ObjectStore
from agentenv_store_local.api import check_key, check_range
from pydantic import BaseModel, Field

from agentenv_aws._client import AwsSettings, client, error_code, explain

_MISSING = {"NoSuchKey", "404", "NotFound"}
_MIB = 2**20


class S3Settings(AwsSettings):
    """Settings of the `s3` object store."""

    bucket: str = Field(..., min_length=3, description="Bucket holding the objects.")
    prefix: str = Field("", description="Prefix put before every key, such as 'team-a/'; '' for none.")
    create_bucket: bool = Field(False, description="Create the bucket when it does not exist.")
    part_mib: int = Field(8, ge=5, le=512, description="Multipart part size, MiB (S3's minimum is 5).")
    concurrency: int = Field(4, ge=1, le=32, description="Parts uploaded at once; memory use is about part × this.")


class S3ObjectStore(ObjectStore[S3Settings]):
    """Trajectories, snapshots and other blobs as S3 objects."""

    name = "s3"
    description = "Blobs in an S3 bucket (multipart uploads, ranged and streamed reads)."
    Settings = S3Settings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        self.config = self.settings  # typed by the class parameter, validated once
        self.bucket = self.config.bucket
        self.prefix = self.config.prefix
        self._client = client(self.config, "s3")
        if self.config.create_bucket:
            self._ensure_bucket()

    def _fail(self, exc: BaseException, what: str) -> Exception:
        return explain(exc, f"S3 bucket {self.bucket!r}: {what}", "object", "bucket")

    def _ensure_bucket(self) -> None:
        try:
            self._client.head_bucket(Bucket=self.bucket)
            return
        except Exception as exc:
            if error_code(exc) not in _MISSING:
                raise self._fail(exc, "head") from exc
        region = self._client.meta.region_name
        extra = {} if region in (None, "us-east-1") else {"CreateBucketConfiguration": {"LocationConstraint": region}}
        try:
            self._client.create_bucket(Bucket=self.bucket, **extra)
        except Exception as exc:
            if error_code(exc) not in {"BucketAlreadyOwnedByYou"}:
                raise self._fail(exc, "create") from exc

    def _key(self, key: str) -> str:
        check_key(key)
        return self.prefix + key

    def put(self, key: str, data: bytes) -> None:
        name = self._key(key)
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"object {key!r} must be bytes, got {type(data).__name__}")
        try:
            self._client.put_object(Bucket=self.bucket, Key=name, Body=bytes(data))
        except Exception as exc:
            raise self._fail(exc, f"put {key!r}") from exc

    def put_stream(self, key: str, source: BinaryIO) -> None:
        """Upload what `source` reads to, in multipart parts once it passes one part."""
        from boto3.s3.transfer import TransferConfig

        name = self._key(key)
        part = self.config.part_mib * _MIB
        transfer = TransferConfig(
            multipart_threshold=part,
            multipart_chunksize=part,
            max_concurrency=self.config.concurrency,
            max_io_queue=self.config.concurrency,
        )
        # Parts read ahead of the uploads; s3transfer's default (10) would hold 10 parts of a stream at once.
        transfer.max_in_memory_upload_chunks = self.config.concurrency
        try:
            self._client.upload_fileobj(source, self.bucket, name, Config=transfer)
        except Exception as exc:
            raise self._fail(exc, f"upload {key!r}") from exc

    def get(self, key: str) -> bytes:
        name = self._key(key)
        try:
            body = self._client.get_object(Bucket=self.bucket, Key=name)["Body"]
        except Exception as exc:
            if error_code(exc) in _MISSING:
                raise KeyError(key) from None
            raise self._fail(exc, f"get {key!r}") from exc
        with body:
            data: bytes = body.read()
        return data

    def get_stream(self, key: str, sink: BinaryIO, start: int = 0, end: int | None = None) -> int:
        """Copy bytes [start, end) of the object to `sink`, one chunk at a time (an HTTP Range request)."""
        name = self._key(key)
        check_range(start, end)
        request: dict[str, Any] = {"Bucket": self.bucket, "Key": name}
        if start or end is not None:
            if end is not None and end <= start:
                self._exists_or_key_error(key, name)
                return 0
            request["Range"] = f"bytes={start}-{'' if end is None else end - 1}"
        try:
            body = self._client.get_object(**request)["Body"]
        except Exception as exc:
            code = error_code(exc)
            if code in _MISSING:
                raise KeyError(key) from None
            if code == "InvalidRange":  # start at or past the end of an existing object
                return 0
            raise self._fail(exc, f"get {key!r}") from exc
        copied = 0
        with body:
            for chunk in body.iter_chunks(_MIB):
                sink.write(chunk)
                copied += len(chunk)
        return copied

    def _exists_or_key_error(self, key: str, name: str) -> None:
        try:
            self._client.head_object(Bucket=self.bucket, Key=name)
        except Exception as exc:
            if error_code(exc) in _MISSING:
                raise KeyError(key) from None
            raise self._fail(exc, f"head {key!r}") from exc

    def list(self, prefix: str = "") -> list[str]:
        """Keys starting with `prefix`, sorted; every page of the listing is read."""
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a string, got {type(prefix).__name__}")
        keys: list[str] = []
        try:
            for page in self._client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self.prefix + prefix
            ):
                keys.extend(item["Key"][len(self.prefix) :] for item in page.get("Contents", []))
        except Exception as exc:
            raise self._fail(exc, f"list {prefix!r}") from exc
        return sorted(keys)

    def delete(self, key: str) -> bool:
        """Delete the object; whether it existed (S3's delete does not say, so it is looked up first)."""
        name = self._key(key)
        try:
            self._exists_or_key_error(key, name)
        except KeyError:
            return False
        try:
            self._client.delete_object(Bucket=self.bucket, Key=name)
        except Exception as exc:
            raise self._fail(exc, f"delete {key!r}") from exc
        return True
