"""The Google Cloud backends against the Firestore emulator, a Cloud Storage emulator and a Secret Manager
stand-in: the store conformance kits plus Google-specific behaviour."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from agentenv_gcp._client import GcpStoreError
from agentenv_gcp.firestore import FirestoreDocumentStore
from agentenv_gcp.gcs import GcsObjectStore
from agentenv_gcp.secrets import SecretManagerStore
from agentenv_testing.faults import Fault
from agentenv_testing.services import LoopbackService
from agentenv_testing.standins import SecretManagerStandIn
from agentenv_testing.stores import DocumentStoreConformance, ObjectStoreConformance, SecretStoreConformance
from pydantic import ValidationError

PROJECT = "agentenv-test"


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


class TestFirestoreDocumentConformance(DocumentStoreConformance):
    throttle = Fault(429)

    @pytest.fixture(autouse=True)
    def _emulator(self, firestore_emulator: LoopbackService) -> None:
        """Every test here talks to the one Firestore emulator (through FIRESTORE_EMULATOR_HOST)."""

    def make_store(self, tmp_path: Path) -> FirestoreDocumentStore:
        return FirestoreDocumentStore({"project": PROJECT, "namespace": fresh("records")})

    def upstream_url(self) -> str:
        return os.environ["FIRESTORE_EMULATOR_HOST"]

    def fault_proxy(self, upstream: str) -> Any:
        from grpc_faults import GrpcFaultProxy

        return GrpcFaultProxy(upstream)

    def make_store_at(self, tmp_path: Path, endpoint: str) -> FirestoreDocumentStore:
        """Google's client finds an emulator only through FIRESTORE_EMULATOR_HOST, read when it is made."""
        saved = os.environ["FIRESTORE_EMULATOR_HOST"]
        os.environ["FIRESTORE_EMULATOR_HOST"] = endpoint
        try:
            return FirestoreDocumentStore({"project": PROJECT, "namespace": fresh("faults")})
        finally:
            os.environ["FIRESTORE_EMULATOR_HOST"] = saved


class TestGcsObjectConformance(ObjectStoreConformance):
    endpoint = ""

    @pytest.fixture(autouse=True)
    def _emulator(self, gcs_emulator: LoopbackService) -> None:
        self.endpoint = gcs_emulator.url

    def make_store(self, tmp_path: Path) -> GcsObjectStore:
        return self.make_store_at(tmp_path, self.endpoint)

    def upstream_url(self) -> str:
        return self.endpoint

    def make_store_at(self, tmp_path: Path, endpoint: str) -> GcsObjectStore:
        return GcsObjectStore(
            {"project": PROJECT, "bucket": fresh("objects"), "endpoint_url": endpoint, "create_bucket": True}
        )


class TestSecretManagerConformance(SecretStoreConformance):
    standin: SecretManagerStandIn

    @pytest.fixture(autouse=True)
    def _standin(self, secret_manager: SecretManagerStandIn) -> None:
        self.standin = secret_manager

    def make_store(self, tmp_path: Path, secrets: Mapping[str, str]) -> SecretManagerStore:
        from google.cloud import secretmanager

        prefix = fresh("agentenv").replace("-", "_") + "_"
        store = SecretManagerStore({"project": PROJECT, "prefix": prefix, "endpoint_url": self.standin.url})
        raw = store._client
        parent = f"projects/{PROJECT}"
        for key, value in secrets.items():
            secret = raw.create_secret(
                parent=parent,
                secret_id=prefix + key,
                secret=secretmanager.Secret(replication={"automatic": {}}),
            )
            raw.add_secret_version(parent=secret.name, payload={"data": value.encode("utf-8")})
        return store


# -- Google-specific behaviour --------------------------------------------------------------------


def test_gcs_keys_live_under_the_prefix(gcs_emulator: LoopbackService) -> None:
    bucket = fresh("prefixed")
    settings = {"project": PROJECT, "bucket": bucket, "endpoint_url": gcs_emulator.url, "create_bucket": True}
    store = GcsObjectStore({**settings, "prefix": "team-a/"})
    store.put("runs/1/trajectory.json", b"{}")
    assert GcsObjectStore(settings).list() == ["team-a/runs/1/trajectory.json"]
    assert store.list() == ["runs/1/trajectory.json"]


def test_secret_versions_latest_and_pinned(secret_manager: SecretManagerStandIn) -> None:
    store = SecretManagerStore({"project": PROJECT, "prefix": "v_", "endpoint_url": secret_manager.url})
    name = store._client.create_secret(parent=f"projects/{PROJECT}", secret_id="v_TOKEN", secret={}).name
    store._client.add_secret_version(parent=name, payload={"data": b"first"})
    store._client.add_secret_version(parent=name, payload={"data": b"second"})
    assert store.get("TOKEN") == "second"
    pinned = SecretManagerStore(
        {"project": PROJECT, "prefix": "v_", "endpoint_url": secret_manager.url, "version": "1"}
    )
    assert pinned.get("TOKEN") == "first"


def test_missing_bucket_is_one_clear_error(gcs_emulator: LoopbackService) -> None:
    store = GcsObjectStore({"project": PROJECT, "bucket": fresh("absent"), "endpoint_url": gcs_emulator.url})
    with pytest.raises(GcpStoreError) as err:
        store.put("a", b"x")
    message = str(err.value)
    assert "`bucket` under [plugins.agentenv-gcp.object]" in message and "\n" not in message


def test_firestore_ids_that_firestore_itself_refuses_work(firestore_emulator: LoopbackService) -> None:
    store = FirestoreDocumentStore({"project": PROJECT, "namespace": fresh("odd")})
    for odd in ("a/b", ".", "..", "__reserved__", "sp ace", "ü"):
        store.put(odd, odd, {"id": odd})
        assert store.get(odd, odd) == {"id": odd}
        assert store.query(odd) == [{"id": odd}]


def test_settings_are_checked() -> None:
    with pytest.raises(ValidationError, match="bucket"):
        GcsObjectStore({"project": PROJECT})
    with pytest.raises(ValidationError, match="project"):
        SecretManagerStore({})


@pytest.mark.parametrize("key", ["", "has space", "a.b"])
def test_bad_secret_keys_are_refused(secret_manager: SecretManagerStandIn, key: str) -> None:
    store = SecretManagerStore({"project": PROJECT, "endpoint_url": secret_manager.url})
    with pytest.raises(ValueError, match="invalid secret key"):
        store.get(key)


def test_plugin_registers_the_backends() -> None:
    from agentenv_gcp.plugin import agentenv_register_stores

    refs: list[Any] = agentenv_register_stores()
    assert {(r.kind, r.name) for r in refs} == {
        ("document", "firestore"),
        ("object", "gcs"),
        ("secret", "secretmanager"),
        ("image", "artifactregistry"),
    }


def test_secret_manager_retries_server_errors_and_throttling(secret_manager: SecretManagerStandIn) -> None:
    from agentenv_testing.faults import Fault, FaultProxy

    name = secret_manager_secret(secret_manager, "r_TOKEN", "tok")
    assert name.endswith("r_TOKEN")
    with FaultProxy(secret_manager.url) as proxy:
        store = SecretManagerStore({"project": PROJECT, "prefix": "r_", "endpoint_url": proxy.url})
        proxy.fail_next(2, Fault(503))
        proxy.fail_next(1, Fault(429, b'{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}'))
        assert store.get("TOKEN") == "tok"
        assert proxy.injected == 3 and proxy.forwarded == 1


def secret_manager_secret(standin: SecretManagerStandIn, secret_id: str, value: str) -> str:
    store = SecretManagerStore({"project": PROJECT, "endpoint_url": standin.url})
    name: str = store._client.create_secret(parent=f"projects/{PROJECT}", secret_id=secret_id, secret={}).name
    store._client.add_secret_version(parent=name, payload={"data": value.encode()})
    return name
