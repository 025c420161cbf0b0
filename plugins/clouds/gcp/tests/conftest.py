"""Services for the agentenv-gcp tests, each started once for the session and stopped after it: the Firestore
emulator from the gcloud SDK, a Cloud Storage emulator from PyPI, and a Secret Manager stand-in."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentenv_testing.services import LoopbackService
from agentenv_testing.standins import ArtifactRegistryStandIn, SecretManagerStandIn

PROJECT = "agentenv-test"

sys.path.insert(0, str(Path(__file__).parent))  # the tests import grpc_faults (pytest runs in importlib mode)


def _gcloud_firestore() -> str | None:
    """Why the Firestore emulator cannot run here (None: it can)."""
    gcloud = shutil.which("gcloud")
    if gcloud is None:
        return "gcloud is not installed (apt-get install google-cloud-cli google-cloud-cli-firestore-emulator)"
    sdk = Path(gcloud).resolve().parent.parent
    if not (sdk / "platform" / "cloud-firestore-emulator").is_dir() and not list(
        sdk.glob("**/cloud-firestore-emulator")
    ):
        return "the gcloud Firestore emulator component is not installed (google-cloud-cli-firestore-emulator)"
    if shutil.which("java") is None:
        return "the Firestore emulator needs Java (apt-get install default-jre-headless)"
    return None


@pytest.fixture(scope="session")
def firestore_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackService]:
    """`gcloud emulators firestore start` on a free port; FIRESTORE_EMULATOR_HOST points Google's client at it."""
    reason = _gcloud_firestore()
    if reason:
        pytest.skip(reason)
    log = tmp_path_factory.mktemp("firestore") / "firestore.log"
    argv = ["gcloud", "emulators", "firestore", "start", "--host-port=127.0.0.1:{port}", "--quiet"]
    with LoopbackService(argv, log=log, start_seconds=120) as svc:
        saved = os.environ.get("FIRESTORE_EMULATOR_HOST")
        os.environ["FIRESTORE_EMULATOR_HOST"] = f"127.0.0.1:{svc.port}"
        yield svc
        if saved is None:
            os.environ.pop("FIRESTORE_EMULATOR_HOST", None)
        else:
            os.environ["FIRESTORE_EMULATOR_HOST"] = saved


@pytest.fixture(scope="session")
def gcs_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackService]:
    """gcp-storage-emulator (PyPI) in memory on a free port."""
    binary = Path(sys.executable).with_name("gcp-storage-emulator")
    log = tmp_path_factory.mktemp("gcs") / "gcs.log"
    argv = [str(binary), "start", "--host", "127.0.0.1", "--port", "{port}", "--in-memory"]
    with LoopbackService(argv, log=log) as svc:
        yield svc


@pytest.fixture(scope="session")
def secret_manager() -> Iterator[SecretManagerStandIn]:
    with SecretManagerStandIn() as standin:
        yield standin


@pytest.fixture(scope="session")
def artifact_registry() -> Iterator[ArtifactRegistryStandIn]:
    with ArtifactRegistryStandIn() as standin:
        yield standin
