"""The `ecr` image store: the ECR API on moto for repositories and tags, image data pushed with the docker SDK to
Debian's docker-registry (the registry moto's ECR does not serve), both started by the tests."""

from __future__ import annotations

import uuid
from pathlib import Path

import boto3
import pytest
from agentenv_aws.ecr import EcrImageStore
from agentenv_testing.services import LoopbackService
from agentenv_testing.stores import ImageStoreConformance


@pytest.fixture(autouse=True)
def _services(
    request: pytest.FixtureRequest, moto: LoopbackService, docker_registry: LoopbackService, docker_engine: None
) -> None:
    if request.instance is not None:
        request.instance.endpoint, request.instance.registry_url = moto.url, docker_registry.url


class TestEcrImageConformance(ImageStoreConformance):
    endpoint = ""
    registry_url = ""

    def make_store(self, tmp_path: Path) -> EcrImageStore:
        prefix = f"t{uuid.uuid4().hex[:10]}/"
        return EcrImageStore(
            {"repository_prefix": prefix, "endpoint_url": self.endpoint, "registry_url": self.registry_url}
        )


def test_images_are_real_registry_images_known_to_ecr(
    moto: LoopbackService, docker_registry: LoopbackService, docker_engine: None
) -> None:
    import httpx

    prefix = f"t{uuid.uuid4().hex[:10]}/"
    store = EcrImageStore({"repository_prefix": prefix, "endpoint_url": moto.url, "registry_url": docker_registry.url})
    digest = store.put("agentenv/slack:0.1.0", b"an image archive")
    tags = httpx.get(f"{docker_registry.url}/v2/{prefix}agentenv/slack/tags/list").json()["tags"]
    assert sorted(tags) == sorted(["0.1.0", digest.replace(":", "-")])
    ecr = boto3.client("ecr", endpoint_url=moto.url)
    assert [
        r["repositoryName"]
        for r in ecr.describe_repositories()["repositories"]
        if r["repositoryName"].startswith(prefix)
    ] == [f"{prefix}agentenv/slack"]
    listed = ecr.list_images(repositoryName=f"{prefix}agentenv/slack")["imageIds"]
    assert {i.get("imageTag") for i in listed} >= {"0.1.0"}
    assert (
        EcrImageStore({"repository_prefix": prefix, "endpoint_url": moto.url, "registry_url": docker_registry.url}).get(
            digest
        )
        == b"an image archive"
    )
