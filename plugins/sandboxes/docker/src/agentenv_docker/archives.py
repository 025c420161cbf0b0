"""Opaque archives as registry images: what cloud image stores (ECR, Artifact Registry) push and pull.

An archive becomes a single-layer image holding it as the file `/archive`, labelled with its SHA-256; the
Docker engine imports, pushes and pulls it, and reading it back checks the label. The engine's local copy is
removed after each push and pull: the registry is the store, the engine only a means of moving images.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import tarfile
from typing import Any

LABEL = "org.agentenv.archive.sha256"


def engine(docker_host: str | None = None) -> Any:
    """A docker SDK client of the engine at `docker_host` (default: the SDK's environment), checked to answer."""
    import docker

    client = docker.DockerClient(base_url=docker_host) if docker_host else docker.from_env()
    client.ping()
    return client


def archive_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def content_tag(digest: str) -> str:
    """The tag an archive is also pushed under, so it can be found by content: `sha256-<hex>`."""
    return digest.replace(":", "-")


def push_archive(docker: Any, target: str, tags: list[str], data: bytes, auth: dict[str, str] | None) -> dict[str, str]:
    """Push `data` as `target:tag` for every tag; tag → the pushed manifest's digest (from the push's progress)."""
    digest = archive_digest(data)
    first, *others = tags
    pushed: dict[str, str] = {}
    try:
        docker.api.import_image_from_data(
            _layer(data), repository=target, tag=first, changes=[f"LABEL {LABEL}={digest}", 'CMD ["/archive"]']
        )
        for tag in others:
            docker.api.tag(f"{target}:{first}", target, tag=tag)
        for tag in tags:
            pushed[tag] = _pushed(docker.api.push(target, tag=tag, auth_config=auth, stream=True, decode=True), target)
    finally:
        for tag in tags:
            _drop_local(docker, f"{target}:{tag}")
    return pushed


def pull_archive(docker: Any, target: str, tag: str, auth: dict[str, str] | None) -> bytes:
    """Pull `target:tag` and read `/archive` out of it; ValueError when it is not what its label says."""
    container = None
    try:
        image = docker.images.pull(target, tag=tag, auth_config=auth)
        container = docker.containers.create(image.id, command=["/archive"])
        stream, _ = container.get_archive("/archive")
        data = _archive_file(b"".join(stream))
        expected = image.labels.get(LABEL)
    finally:
        if container is not None:
            container.remove(force=True)
        _drop_local(docker, f"{target}:{tag}")
    if expected != archive_digest(data):
        raise ValueError(f"{target}:{tag} holds content {archive_digest(data)}, but its label says {expected}")
    return data


def _layer(payload: bytes) -> bytes:
    """A filesystem tarball holding `payload` as the file `archive` (the image's only layer)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        info = tarfile.TarInfo("archive")
        info.size = len(payload)
        info.mode = 0o444
        tar.addfile(info, io.BytesIO(payload))
    return out.getvalue()


def _archive_file(tar_bytes: bytes) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
        member = tar.extractfile("archive")
        if member is None:
            raise ValueError("the image holds no /archive file")
        return member.read()


def _drop_local(docker: Any, image: str) -> None:
    """Remove the engine's local copy: only a cache of the registry, so failing to remove it is harmless."""
    with contextlib.suppress(Exception):
        docker.api.remove_image(image, force=True)


def _pushed(progress: Any, target: str) -> str:
    """The manifest digest the push reports; raise when its progress stream reports an error (the docker SDK
    does not raise itself)."""
    digest = ""
    for event in progress:
        if isinstance(event, dict) and event.get("error"):
            raise RuntimeError(f"push of {target} failed: {event['error']}")
        if isinstance(event, dict) and isinstance(event.get("aux"), dict):
            digest = str(event["aux"].get("Digest", digest))
    return digest
