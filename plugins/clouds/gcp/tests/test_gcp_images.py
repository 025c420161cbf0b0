"""The `artifactregistry` image store: tags through a stand-in of Artifact Registry's REST API (it has no
emulator), image data pushed with the docker SDK to Debian's docker-registry; both started by the tests."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest
from agentenv_gcp.artifacts import ArtifactRegistryImageStore
from agentenv_testing.services import LoopbackService
from agentenv_testing.standins import ArtifactRegistryStandIn
from agentenv_testing.stores import ImageStoreConformance

PROJECT = "agentenv-test"


def make(api: str, registry: str, repository: str) -> ArtifactRegistryImageStore:
    return ArtifactRegistryImageStore(
        {"project": PROJECT, "repository": repository, "endpoint_url": api, "registry_url": registry}
    )


class TestArtifactRegistryConformance(ImageStoreConformance):
    api = ""
    registry_url = ""

    @pytest.fixture(autouse=True)
    def _services(
        self, artifact_registry: ArtifactRegistryStandIn, docker_registry: LoopbackService, docker_engine: None
    ) -> None:
        self.api, self.registry_url = artifact_registry.url, docker_registry.url

    def make_store(self, tmp_path: Path) -> ArtifactRegistryImageStore:
        return make(self.api, self.registry_url, f"r{uuid.uuid4().hex[:10]}")


def test_tags_point_at_the_pushed_manifest(
    artifact_registry: ArtifactRegistryStandIn, docker_registry: LoopbackService, docker_engine: None
) -> None:
    repository = f"r{uuid.uuid4().hex[:10]}"
    store = make(artifact_registry.url, docker_registry.url, repository)
    digest = store.put("agentenv/slack:0.1.0", b"an image archive")
    package = f"projects/{PROJECT}/locations/us/repositories/{repository}/packages/agentenv%2Fslack"
    tags = artifact_registry.tags[package]
    assert set(tags) == {"0.1.0", digest.replace(":", "-")}
    manifest = httpx.head(
        f"{docker_registry.url}/v2/{PROJECT}/{repository}/agentenv/slack/manifests/0.1.0",
        headers={"Accept": "application/vnd.docker.distribution.manifest.v2+json"},
    ).headers["Docker-Content-Digest"]
    assert tags["0.1.0"] == f"{package}/versions/{manifest}"
    assert make(artifact_registry.url, docker_registry.url, repository).get(digest) == b"an image archive"
