"""Artifact Registry image store: image archives as single-layer images in one Docker repository.

An archive stored as `name:tag` becomes the image `<registry>/<project>/<repository>/<name>:<tag>`: one layer
holding the archive as `/archive`, labelled with its SHA-256 (agentenv-docker's `push_archive`/`pull_archive`
push and pull it through the Docker engine). Tags, lookups and listings go through the Artifact Registry
API (packages and tags); after a push the store points both the tag and the content tag `sha256-<hex>` at the
pushed manifest, so `get("sha256:<hex>")` finds an archive by content. Against Artifact Registry itself the
push has already made those tags and the calls only confirm them.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, unquote, urlsplit

from agentenv.contracts import ImageStore
from agentenv_store_local.api import check_ref
from pydantic import BaseModel, Field

from agentenv_gcp._client import GcpSettings, explain


class ArtifactSettings(GcpSettings):
    """Settings of the `artifactregistry` image store."""

    project: str = Field(..., min_length=1, description="Project holding the repository.")
    location: str = Field("us", description="Repository location, such as 'us' or 'europe-west1'.")
    repository: str = Field(..., min_length=1, description="Docker-format Artifact Registry repository id.")
    registry_url: str | None = Field(
        None, description="Registry holding the image data; default: https://<location>-docker.pkg.dev."
    )
    docker_host: str | None = Field(None, description="Docker engine to push and pull with; default: env.")


class ArtifactRegistryImageStore(ImageStore[ArtifactSettings]):
    """Sandbox image archives in Google Artifact Registry."""

    name = "artifactregistry"
    description = "Image archives as single-layer images in Artifact Registry (docker SDK; tags via its API)."
    Settings = ArtifactSettings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        from google.cloud import artifactregistry_v1

        super().__init__(settings)
        self.config = self.settings  # typed by the class parameter, validated once
        endpoint = self.config.endpoint_url
        try:
            self._api = artifactregistry_v1.ArtifactRegistryClient(
                credentials=self.config.credentials(),
                transport="rest" if endpoint else None,
                client_options={"api_endpoint": endpoint} if endpoint else None,
            )
        except Exception as exc:
            raise explain(exc, "Artifact Registry client", "image", "project") from exc
        c = self.config
        self.parent = f"projects/{c.project}/locations/{c.location}/repositories/{c.repository}"
        url = (c.registry_url or f"https://{c.location}-docker.pkg.dev").rstrip("/")
        self.host = urlsplit(url).netloc
        self._docker_client: Any = None

    def _fail(self, exc: BaseException, what: str) -> Exception:
        return explain(exc, f"Artifact Registry {self.parent}: {what}", "image", "repository")

    def _docker(self) -> Any:
        from agentenv_docker.api import engine

        if self._docker_client is None:
            try:
                self._docker_client = engine(self.config.docker_host)
            except Exception as exc:
                raise explain(exc, "Docker engine for Artifact Registry pushes", "image", "docker_host") from exc
        return self._docker_client

    def _auth(self) -> dict[str, str] | None:
        """Docker login for the registry: an OAuth token from Application Default Credentials (none for emulators)."""
        if self.config.registry_url or self.config.credentials() is not None:
            return None
        import google.auth
        import google.auth.transport.requests

        credentials, _ = google.auth.default()
        credentials.refresh(google.auth.transport.requests.Request())  # type: ignore[no-untyped-call]
        return {"username": "oauth2accesstoken", "password": str(credentials.token)}

    def _target(self, name: str) -> str:
        return f"{self.host}/{self.config.project}/{self.config.repository}/{name}"

    def _package(self, name: str) -> str:
        return f"{self.parent}/packages/{quote(name, safe='')}"

    def put(self, ref: str, data: bytes) -> str:
        """Push the archive under its tag and its content tag, then point both tags at the pushed manifest."""
        from agentenv_docker.api import archive_digest, content_tag, push_archive

        check_ref(ref, allow_digest=False)
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"image {ref!r} must be bytes, got {type(data).__name__}")
        payload = bytes(data)
        digest = archive_digest(payload)
        name, _, tag = ref.rpartition(":")
        try:
            pushed = push_archive(self._docker(), self._target(name), [tag, content_tag(digest)], payload, self._auth())
        except Exception as exc:
            raise self._fail(exc, f"push {ref!r} to {self.host}") from exc
        for each, manifest in pushed.items():
            self._set_tag(self._package(name), each, f"{self._package(name)}/versions/{manifest}")
        return digest

    def _set_tag(self, package: str, tag: str, version: str) -> None:
        from google.api_core.exceptions import Conflict
        from google.cloud import artifactregistry_v1

        body = artifactregistry_v1.Tag(name=f"{package}/tags/{tag}", version=version)
        try:
            try:
                self._api.create_tag(parent=package, tag_id=tag, tag=body, retry=self.config.retry())
            except Conflict:  # ALREADY_EXISTS: the push made it (Artifact Registry) or an earlier put did
                self._api.update_tag(tag=body, update_mask={"paths": ["version"]}, retry=self.config.retry())
        except Exception as exc:
            raise self._fail(exc, f"tag {package}/tags/{tag}") from exc

    def _has_tag(self, package: str, tag: str) -> bool:
        from google.api_core.exceptions import NotFound

        try:
            self._api.get_tag(name=f"{package}/tags/{tag}", retry=self.config.retry())
        except NotFound:
            return False
        except Exception as exc:
            raise self._fail(exc, f"get tag {package}/tags/{tag}") from exc
        return True

    def _packages(self) -> list[str]:
        try:
            return [p.name for p in self._api.list_packages(parent=self.parent, retry=self.config.retry())]
        except Exception as exc:
            raise self._fail(exc, "list packages") from exc

    def get(self, ref: str) -> bytes:
        """Pull the image and read the archive out of it; KeyError when the registry has no such tag or content."""
        from agentenv_docker.api import content_tag, pull_archive

        if check_ref(ref) == "digest":
            tag = content_tag(ref)
            found = [p for p in self._packages() if self._has_tag(p, tag)]
            if not found:
                raise KeyError(ref)
            name = unquote(found[0].rsplit("/packages/", 1)[1])
        else:
            name, _, tag = ref.rpartition(":")
            if not self._has_tag(self._package(name), tag):
                raise KeyError(ref)
        try:
            return pull_archive(self._docker(), self._target(name), tag, self._auth())
        except Exception as exc:
            raise self._fail(exc, f"pull {ref!r} from {self.host}") from exc

    def list(self) -> list[str]:
        """Every `name:tag` in the repository (content tags left out), sorted."""
        refs: list[str] = []
        for package in self._packages():
            name = unquote(package.rsplit("/packages/", 1)[1])
            try:
                tags = self._api.list_tags(parent=package, retry=self.config.retry())
                refs.extend(f"{name}:{t.name.rsplit('/', 1)[1]}" for t in tags if "/tags/sha256-" not in t.name)
            except Exception as exc:
                raise self._fail(exc, f"list tags of {package}") from exc
        return sorted(refs)
