"""ECR image store: image archives as single-layer images in ECR repositories, tags through the ECR API.

An archive stored under `name:tag` becomes an image in the repository `<repository_prefix><name>`: one
layer holding the archive as the file `/archive`, labelled with the archive's SHA-256 (agentenv-docker's
`push_archive`/`pull_archive`: the docker SDK imports it into the Docker engine, pushes it to the registry
endpoint and pulls it back); repositories,
tags and listings go through the ECR API (`create_repository`, `put_image`, `describe_images`,
`list_images`). Each archive is also tagged `sha256-<hex>`, so `get("sha256:<hex>")` finds it by content.

The registry endpoint is the account's ECR registry (from `get_authorization_token`, whose token logs the
docker SDK in) unless `registry_url` names another one, such as a local registry in tests.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import urlsplit

from agentenv.contracts import ImageStore
from agentenv_store_local.api import check_ref
from pydantic import BaseModel, Field

from agentenv_aws._client import AwsSettings, client, error_code, explain

_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
_MISSING = {"ImageNotFoundException", "RepositoryNotFoundException"}


class EcrSettings(AwsSettings):
    """Settings of the `ecr` image store."""

    repository_prefix: str = Field("agentenv/", description="Put before every image name to make its repository.")
    create_repository: bool = Field(True, description="Create a missing repository on the first push.")
    registry_url: str | None = Field(
        None, description="Registry holding the image data, such as http://127.0.0.1:5000; default: the ECR registry."
    )
    docker_host: str | None = Field(None, description="Docker engine to build, push and pull with; default: env.")


class EcrImageStore(ImageStore[EcrSettings]):
    """Sandbox image archives in Amazon ECR."""

    name = "ecr"
    description = "Image archives as single-layer images in ECR (docker SDK push/pull, ECR API for tags)."
    Settings = EcrSettings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        self.config = self.settings  # typed by the class parameter, validated once
        self.prefix = self.config.repository_prefix
        self._ecr = client(self.config, "ecr")
        self._registry: tuple[str, str, dict[str, str] | None] | None = None  # url, host, docker auth
        self._docker_client: Any = None

    # -- plumbing -------------------------------------------------------------------------------------

    def _fail(self, exc: BaseException, what: str) -> Exception:
        return explain(exc, f"ECR {what}", "image", "repository_prefix")

    def _docker(self) -> Any:
        from agentenv_docker.api import engine

        if self._docker_client is None:
            try:
                self._docker_client = engine(self.config.docker_host)
            except Exception as exc:
                raise explain(exc, "Docker engine for ECR pushes", "image", "docker_host") from exc
        return self._docker_client

    def _endpoint(self) -> tuple[str, str, dict[str, str] | None]:
        """(registry URL, host[:port] for image names, docker auth config) — the token is fetched once."""
        if self._registry is None:
            if self.config.registry_url:
                url = self.config.registry_url.rstrip("/")
                self._registry = (url, urlsplit(url).netloc, None)
            else:
                try:
                    data = self._ecr.get_authorization_token()["authorizationData"][0]
                except Exception as exc:
                    raise self._fail(exc, "authorization token") from exc
                user, _, password = base64.b64decode(data["authorizationToken"]).decode().partition(":")
                url = data["proxyEndpoint"].rstrip("/")
                self._registry = (url, urlsplit(url).netloc, {"username": user, "password": password})
        return self._registry

    def _split(self, ref: str) -> tuple[str, str]:
        name, _, tag = ref.rpartition(":")
        return self.prefix + name, tag

    def _ensure_repository(self, repository: str) -> None:
        try:
            self._ecr.describe_repositories(repositoryNames=[repository])
            return
        except Exception as exc:
            if error_code(exc) != "RepositoryNotFoundException" or not self.config.create_repository:
                raise self._fail(exc, f"repository {repository!r}") from exc
        try:
            self._ecr.create_repository(repositoryName=repository)
        except Exception as exc:
            if error_code(exc) != "RepositoryAlreadyExistsException":
                raise self._fail(exc, f"create repository {repository!r}") from exc

    # -- contract -------------------------------------------------------------------------------------

    def put(self, ref: str, data: bytes) -> str:
        """Push the archive under its tag and its content tag, then record both tags in ECR."""
        from agentenv_docker.api import archive_digest, content_tag, push_archive

        check_ref(ref, allow_digest=False)
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"image {ref!r} must be bytes, got {type(data).__name__}")
        payload = bytes(data)
        digest = archive_digest(payload)
        repository, tag = self._split(ref)
        self._ensure_repository(repository)
        _, host, auth = self._endpoint()
        tags = [tag, content_tag(digest)]
        try:
            push_archive(self._docker(), f"{host}/{repository}", tags, payload, auth)
        except Exception as exc:
            raise self._fail(exc, f"push {ref!r} to {host}") from exc
        for each in tags:
            self._record(repository, each)
        return digest

    def _record(self, repository: str, tag: str) -> None:
        """Point the ECR tag at the pushed manifest. On ECR itself the push already did this (the call then
        says ImageAlreadyExists); with a separate registry it is what makes ECR know the tag."""
        import httpx

        url, _, auth = self._endpoint()
        basic = (auth["username"], auth["password"]) if auth else None
        try:
            response = httpx.get(
                f"{url}/v2/{repository}/manifests/{tag}", headers={"Accept": _MANIFEST}, auth=basic, timeout=60
            )
            response.raise_for_status()
            self._ecr.put_image(
                repositoryName=repository, imageManifest=response.text, imageManifestMediaType=_MANIFEST, imageTag=tag
            )
        except Exception as exc:
            if error_code(exc) != "ImageAlreadyExistsException":
                raise self._fail(exc, f"tag {repository}:{tag}") from exc

    def get(self, ref: str) -> bytes:
        """Pull the image and read the archive out of it; KeyError when ECR has no such tag or content."""
        from agentenv_docker.api import pull_archive

        if check_ref(ref) == "digest":
            repository, tag = self._find_content(ref)
        else:
            repository, tag = self._split(ref)
            if not self._has_tag(repository, tag):
                raise KeyError(ref)
        _, host, auth = self._endpoint()
        try:
            return pull_archive(self._docker(), f"{host}/{repository}", tag, auth)
        except Exception as exc:
            raise self._fail(exc, f"pull {ref!r} from {host}") from exc

    def _has_tag(self, repository: str, tag: str) -> bool:
        try:
            self._ecr.describe_images(repositoryName=repository, imageIds=[{"imageTag": tag}])
        except Exception as exc:
            if error_code(exc) in _MISSING:
                return False
            raise self._fail(exc, f"describe {repository}:{tag}") from exc
        return True

    def _repositories(self) -> list[str]:
        try:
            return [
                repo["repositoryName"]
                for page in self._ecr.get_paginator("describe_repositories").paginate()
                for repo in page["repositories"]
                if repo["repositoryName"].startswith(self.prefix)
            ]
        except Exception as exc:
            raise self._fail(exc, "list repositories") from exc

    def _find_content(self, digest: str) -> tuple[str, str]:
        from agentenv_docker.api import content_tag

        tag = content_tag(digest)
        for repository in self._repositories():
            if self._has_tag(repository, tag):
                return repository, tag
        raise KeyError(digest)

    def list(self) -> list[str]:
        """Every `name:tag` under the prefix (content tags left out), sorted."""
        refs: list[str] = []
        for repository in self._repositories():
            try:
                for page in self._ecr.get_paginator("list_images").paginate(
                    repositoryName=repository, filter={"tagStatus": "TAGGED"}
                ):
                    refs.extend(
                        f"{repository[len(self.prefix) :]}:{image['imageTag']}"
                        for image in page["imageIds"]
                        if "imageTag" in image and not image["imageTag"].startswith("sha256-")
                    )
            except Exception as exc:
                raise self._fail(exc, f"list images of {repository!r}") from exc
        return sorted(refs)
