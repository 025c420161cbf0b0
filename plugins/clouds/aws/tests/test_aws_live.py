"""The kits against real AWS, only when asked: AGENTENV_LIVE_AWS_BUCKET names a bucket to write under a fresh
prefix, and the usual AWS chain has credentials. Each DynamoDB test creates its own table and deletes it."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentenv_aws.dynamodb import DynamoDocumentStore
from agentenv_aws.s3 import S3ObjectStore
from agentenv_testing.stores import DocumentStoreConformance, ObjectStoreConformance

BUCKET = os.environ.get("AGENTENV_LIVE_AWS_BUCKET")


def _why_not_live() -> str | None:
    if not BUCKET:
        return "live AWS tests run only with AGENTENV_LIVE_AWS_BUCKET set (and AWS credentials)"
    import boto3

    if boto3.session.Session().get_credentials() is None:
        return "live AWS tests need credentials from the AWS chain"
    return None


pytestmark = pytest.mark.skipif(_why_not_live() is not None, reason=_why_not_live() or "")


class TestLiveS3(ObjectStoreConformance):
    large_bytes = 0  # a 100 MiB upload per run costs money; the moto run covers streaming

    def make_store(self, tmp_path: Path) -> S3ObjectStore:
        return S3ObjectStore({"bucket": BUCKET, "prefix": f"agentenv-live/{uuid.uuid4().hex}/"})


class TestLiveDynamo(DocumentStoreConformance):
    tables: list[DynamoDocumentStore]

    @pytest.fixture(autouse=True)
    def _drop_tables(self) -> Iterator[None]:
        self.tables = []
        yield
        for store in self.tables:
            store._client.delete_table(TableName=store.table)

    def make_store(self, tmp_path: Path) -> DynamoDocumentStore:
        store = DynamoDocumentStore({"table": f"agentenv-live-{uuid.uuid4().hex[:12]}"})
        self.tables.append(store)
        return store
