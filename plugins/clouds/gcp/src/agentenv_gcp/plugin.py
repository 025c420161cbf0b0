"""Entry module of `agentenv-gcp`: registers the Google Cloud store backends by name (SDKs imported when used)."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_stores() -> list[Any]:
    """`firestore` documents, `gcs` objects, `secretmanager` secrets and `artifactregistry` images."""
    from agentenv.contracts import ClassRef

    return [
        ClassRef("firestore", "agentenv_gcp.firestore:FirestoreDocumentStore", kind="document"),
        ClassRef("gcs", "agentenv_gcp.gcs:GcsObjectStore", kind="object"),
        ClassRef("secretmanager", "agentenv_gcp.secrets:SecretManagerStore", kind="secret"),
        ClassRef("artifactregistry", "agentenv_gcp.artifacts:ArtifactRegistryImageStore", kind="image"),
    ]
