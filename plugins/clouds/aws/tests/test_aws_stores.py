"""The AWS backends against moto in server mode: the store conformance kits plus AWS-specific behaviour."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import boto3
import pytest
from agentenv_aws._client import AwsStoreError
from agentenv_aws.dynamodb import DynamoDocumentStore
from agentenv_aws.s3 import S3ObjectStore
from agentenv_aws.secrets import SecretsManagerStore
from agentenv_testing.faults import Fault
from agentenv_testing.services import LoopbackService
from agentenv_testing.stores import DocumentStoreConformance, ObjectStoreConformance, SecretStoreConformance
from pydantic import ValidationError

DYNAMO_THROTTLE = Fault(
    400,
    b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Rate exceeded"}',
    {"Content-Type": "application/x-amz-json-1.0"},
)
S3_THROTTLE = Fault(
    503,
    b"<?xml version='1.0'?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>",
    {"Content-Type": "application/xml"},
)


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture(autouse=True)
def _server(request: pytest.FixtureRequest, moto: LoopbackService) -> None:
    """Every test here talks to the one moto server; the kits reach it through `self.endpoint`."""
    if request.instance is not None:
        request.instance.endpoint = moto.url


class TestDynamoDocumentConformance(DocumentStoreConformance):
    endpoint = ""
    throttle = DYNAMO_THROTTLE

    def make_store(self, tmp_path: Path) -> DynamoDocumentStore:
        return self.make_store_at(tmp_path, self.endpoint)

    def upstream_url(self) -> str:
        return self.endpoint

    def make_store_at(self, tmp_path: Path, endpoint: str) -> DynamoDocumentStore:
        return DynamoDocumentStore({"table": fresh("records"), "endpoint_url": endpoint, "max_attempts": 5})


class TestS3ObjectConformance(ObjectStoreConformance):
    endpoint = ""
    throttle = S3_THROTTLE

    def make_store(self, tmp_path: Path) -> S3ObjectStore:
        return self.make_store_at(tmp_path, self.endpoint)

    def upstream_url(self) -> str:
        return self.endpoint

    def make_store_at(self, tmp_path: Path, endpoint: str) -> S3ObjectStore:
        return S3ObjectStore({"bucket": fresh("objects"), "endpoint_url": endpoint, "create_bucket": True})


class TestSecretsManagerConformance(SecretStoreConformance):
    endpoint = ""

    def make_store(self, tmp_path: Path, secrets: Mapping[str, str]) -> SecretsManagerStore:
        prefix = fresh("agentenv") + "/"
        raw = boto3.client("secretsmanager", endpoint_url=self.endpoint)
        for key, value in secrets.items():
            raw.create_secret(Name=prefix + key, SecretString=value)
        return SecretsManagerStore({"prefix": prefix, "endpoint_url": self.endpoint})


# -- AWS-specific behaviour -----------------------------------------------------------------------


def test_s3_keys_live_under_the_prefix(moto: LoopbackService) -> None:
    bucket = fresh("prefixed")
    store = S3ObjectStore({"bucket": bucket, "prefix": "team-a/", "endpoint_url": moto.url, "create_bucket": True})
    store.put("runs/1/trajectory.json", b"{}")
    raw = boto3.client("s3", endpoint_url=moto.url)
    assert [o["Key"] for o in raw.list_objects_v2(Bucket=bucket)["Contents"]] == ["team-a/runs/1/trajectory.json"]
    assert store.list() == ["runs/1/trajectory.json"]


def test_s3_multipart_upload_is_used_past_one_part(moto: LoopbackService) -> None:
    import io

    bucket = fresh("multipart")
    store = S3ObjectStore({"bucket": bucket, "endpoint_url": moto.url, "create_bucket": True, "part_mib": 5})
    blob = bytes(range(256)) * (12 * 4096)  # 12 MiB: three parts of 5 MiB
    store.put_stream("big", io.BufferedReader(io.BytesIO(blob)))  # type: ignore[arg-type]
    head = boto3.client("s3", endpoint_url=moto.url).head_object(Bucket=bucket, Key="big")
    assert head["ETag"].strip('"').endswith("-3"), head["ETag"]  # a multipart ETag names its part count
    assert store.get("big") == blob


def test_missing_bucket_is_one_clear_error(moto: LoopbackService) -> None:
    store = S3ObjectStore({"bucket": fresh("absent"), "endpoint_url": moto.url})
    with pytest.raises(AwsStoreError) as err:
        store.put("a", b"x")
    message = str(err.value)
    assert "NoSuchBucket" in message and "`bucket` under [plugins.agentenv-aws.object]" in message
    assert "\n" not in message


def test_missing_table_without_create_is_one_clear_error(moto: LoopbackService) -> None:
    store = DynamoDocumentStore({"table": fresh("absent"), "endpoint_url": moto.url, "create_table": False})
    with pytest.raises(AwsStoreError, match=r"ResourceNotFoundException.*`table` under \[plugins.agentenv-aws"):
        store.get("runs", "1")


def test_settings_are_checked(moto: LoopbackService) -> None:
    with pytest.raises(ValidationError, match="bucket"):
        S3ObjectStore({"endpoint_url": moto.url})
    with pytest.raises(ValidationError, match="tabel"):
        DynamoDocumentStore({"tabel": "x"})


@pytest.mark.parametrize("key", ["", "has space", "a" * 600])
def test_bad_secret_keys_are_refused(moto: LoopbackService, key: str) -> None:
    store = SecretsManagerStore({"endpoint_url": moto.url})
    with pytest.raises(ValueError, match="invalid secret key"):
        store.get(key)


def test_plugin_registers_the_backends() -> None:
    from agentenv_aws.plugin import agentenv_register_stores

    refs: list[Any] = agentenv_register_stores()
    assert {(r.kind, r.name) for r in refs} == {
        ("document", "dynamodb"),
        ("object", "s3"),
        ("secret", "secretsmanager"),
        ("image", "ecr"),
    }
