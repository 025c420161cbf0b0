"""The kits against real Google Cloud, only when asked: AGENTENV_LIVE_GCP_PROJECT and AGENTENV_LIVE_GCS_BUCKET name
a project and a bucket, and Application Default Credentials are set up. Every test writes under a fresh prefix
(Cloud Storage) or namespace (Firestore), so it starts empty."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from agentenv_gcp.firestore import FirestoreDocumentStore
from agentenv_gcp.gcs import GcsObjectStore
from agentenv_testing.stores import DocumentStoreConformance, ObjectStoreConformance

PROJECT = os.environ.get("AGENTENV_LIVE_GCP_PROJECT")
BUCKET = os.environ.get("AGENTENV_LIVE_GCS_BUCKET")


def _why_not_live() -> str | None:
    if not (PROJECT and BUCKET):
        return "live GCP tests run only with AGENTENV_LIVE_GCP_PROJECT and AGENTENV_LIVE_GCS_BUCKET set"
    if os.environ.get("FIRESTORE_EMULATOR_HOST"):
        return "FIRESTORE_EMULATOR_HOST is set: unset it for the live tests"
    try:
        import google.auth

        google.auth.default()  # type: ignore[no-untyped-call]
    except Exception as exc:
        return f"live GCP tests need Application Default Credentials: {exc}"
    return None


pytestmark = pytest.mark.skipif(_why_not_live() is not None, reason=_why_not_live() or "")


class TestLiveGcs(ObjectStoreConformance):
    large_bytes = 0  # a 100 MiB upload per run costs money; the emulator run covers streaming

    def make_store(self, tmp_path: Path) -> GcsObjectStore:
        return GcsObjectStore({"project": PROJECT, "bucket": BUCKET, "prefix": f"agentenv-live/{uuid.uuid4().hex}/"})


class TestLiveFirestore(DocumentStoreConformance):
    def make_store(self, tmp_path: Path) -> FirestoreDocumentStore:
        return FirestoreDocumentStore({"project": PROJECT, "namespace": f"live-{uuid.uuid4().hex}"})
