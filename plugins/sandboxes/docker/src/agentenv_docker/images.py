"""Building images locally: from a Dockerfile in a folder, and "world" images with agentenv installed.

`build_image` builds a context folder on the configured base: a Dockerfile that says `FROM agentenv/base…`
or uses a build argument `BASE_IMAGE` gets the provider's `base_image` (so the same Dockerfile works with
the locally built base and with `python:3.12-slim` from a registry).

`build_world_image` needs no registry and no network inside the build: it builds wheels of workspace
distributions on the host (or packs regular installs again from their installed files, see `repack`),
downloads their dependencies' wheels for the image's Python (PyPI from the host), and installs all of them
with `pip install --no-index` into a venv at `/opt/agentenv`.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from agentenv_docker.settings import MANAGED, DockerSettings, build_command, is_local_base

FROM_BASE = re.compile(
    r"^(\s*FROM\s+(?:--platform=\S+\s+)?)(agentenv/base(?::\S+)?)(.*)$", re.IGNORECASE | re.MULTILINE
)
ARG_BASE = re.compile(r"^\s*ARG\s+BASE_IMAGE\b", re.IGNORECASE | re.MULTILINE)
VENV = "/opt/agentenv"


class ImageBuildError(RuntimeError):
    """An image could not be built; the message ends with the last lines of the build log."""


def _client(settings: DockerSettings) -> Any:
    import docker

    return docker.DockerClient(base_url=settings.docker_host) if settings.docker_host else docker.from_env()


def resolve_base(settings: DockerSettings, base: str | None = None) -> str:
    """The base image to build on; a missing `agentenv/base:…` is built first (or refused when `build_base` is off)."""
    image = base or settings.base_image
    if is_local_base(image):
        from agentenv_docker.base_image import BaseImageError, ensure_base_image, image_exists

        if not image_exists(image):
            if not settings.build_base:
                raise ImageBuildError(
                    f"the base image {image} is missing and `build_base` is off; build it with `{build_command(image)}`"
                )
            try:
                ensure_base_image(image, log=lambda _msg: None)
            except BaseImageError as exc:
                raise ImageBuildError(f"the base image {image} is missing and could not be built: {exc}") from None
    return image


def build_image(
    context_dir: str | Path,
    tag: str,
    base: str | None = None,
    *,
    dockerfile: str = "Dockerfile",
    buildargs: dict[str, str] | None = None,
    settings: DockerSettings | dict[str, Any] | None = None,
    log: Callable[[str], None] | None = None,
) -> str:
    """Build `context_dir` (with its `dockerfile`) as `tag` on the configured base; returns the image id."""
    from docker.errors import APIError, BuildError

    settings = DockerSettings.load(settings)
    context = Path(context_dir).resolve()
    source = context / dockerfile
    if not source.is_file():
        raise ImageBuildError(f"{context}: no {dockerfile} in the build context")
    text = source.read_text(encoding="utf-8")
    args = dict(buildargs or {})
    use_base = bool(FROM_BASE.search(text) or ARG_BASE.search(text))
    target = dockerfile
    with tempfile.TemporaryDirectory(prefix="agentenv-dockerfile-") as scratch:
        if use_base:
            image = resolve_base(settings, base)
            args.setdefault("BASE_IMAGE", image)
            if FROM_BASE.search(text):  # the SDK sends a Dockerfile from outside the context along with it
                rewritten = Path(scratch) / "Dockerfile"
                rewritten.write_text(FROM_BASE.sub(lambda m: f"{m.group(1)}{image}{m.group(3)}", text))
                target = str(rewritten)
        client = _client(settings)
        try:
            built, lines = client.images.build(
                path=str(context),
                dockerfile=target,
                tag=tag,
                buildargs=args,
                rm=True,
                forcerm=True,
                labels={MANAGED: "true"},
            )
        except BuildError as exc:
            tail = "".join(str(entry.get("stream", entry.get("error", ""))) for entry in exc.build_log)[-2000:]
            raise ImageBuildError(f"building {tag} from {source} failed: {exc.msg}\n{tail}") from None
        except APIError as exc:
            raise ImageBuildError(f"building {tag} from {source} failed: {exc.explanation or exc}") from None
        finally:
            client.close()
    if log is not None:
        for entry in lines:
            line = str(entry.get("stream", "")).rstrip()
            if line:
                log(line)
    return str(built.id)


# -- world images -----------------------------------------------------------------------------------


def distribution_folder(dist: str) -> Path | None:
    """The source folder of `dist` (a folder, or an editable/local-folder install); None for a regular install
    from a wheel (see `wheel_of`)."""
    candidate = Path(dist)
    if candidate.is_dir() and (candidate / "pyproject.toml").is_file():
        return candidate.resolve()
    try:
        found = importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        raise ImageBuildError(f"distribution {dist!r} is not installed here; name a workspace folder instead") from None
    raw = found.read_text("direct_url.json")
    url = json.loads(raw).get("url", "") if raw else ""
    folder = Path(unquote(urlparse(url).path)) if url.startswith("file://") else None
    return folder if folder is not None and (folder / "pyproject.toml").is_file() else None


def wheel_of(dist: str, out_dir: Path, log: Callable[[str], None]) -> None:
    """A wheel of `dist` into `out_dir`: built from its source folder, or packed again from its installed files."""
    from agentenv_docker.repack import RepackError, repack_installed

    folder = distribution_folder(dist)
    if folder is not None:
        log(f"wheel of {folder.name}")
        build_wheel(folder, out_dir)
        return
    log(f"wheel of installed {dist}")
    try:
        repack_installed(dist, out_dir)
    except RepackError as exc:
        raise ImageBuildError(str(exc)) from None


def _run(argv: list[str], what: str, cwd: Path | None = None) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
    if done.returncode != 0:
        raise ImageBuildError(f"{what} failed: {' '.join(argv)}\n{(done.stdout + done.stderr).strip()[-2000:]}")
    return done.stdout


def build_wheel(folder: Path, out_dir: Path) -> None:
    """A wheel of the project in `folder`, with uv when on PATH, else `python -m build`."""
    uv = shutil.which("uv")
    if uv:
        _run([uv, "build", "--wheel", "--out-dir", str(out_dir), str(folder)], f"building a wheel of {folder}")
    else:
        _run(
            [sys.executable, "-m", "build", "--wheel", "--outdir", str(out_dir), str(folder)],
            f"building a wheel of {folder}",
        )


def pip_command() -> list[str]:
    """A pip to download with: this interpreter's, else `python3 -m pip` (uv venvs often have none)."""
    for python in (sys.executable, shutil.which("python3")):
        if python and subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode == 0:
            return [python, "-m", "pip"]
    raise ImageBuildError("no pip found to download dependency wheels; install pip (python3 -m ensurepip)")


def image_python(image: str, settings: DockerSettings) -> dict[str, str]:
    """The image's Python version, machine and glibc, so dependency wheels match it, not the host."""
    probe = (
        "import json,platform,sys;"
        "print(json.dumps({'version':'%d.%d'%sys.version_info[:2],'machine':platform.machine(),"
        "'libc':'_'.join(platform.libc_ver()[1].split('.'))}))"
    )
    client = _client(settings)
    try:
        raw = client.containers.run(image, ["python3", "-c", probe], remove=True, network_disabled=True)
    finally:
        client.close()
    found: dict[str, str] = json.loads(raw.decode().strip().splitlines()[-1])
    return found


def manylinux_tags(target: dict[str, str]) -> list[str]:
    """Every manylinux platform tag a glibc `target` can run, newest first (pip does not expand them itself)."""
    machine, libc = target.get("machine", ""), target.get("libc", "")
    match = re.fullmatch(r"2_(\d+)", libc)
    if not machine or not match:
        return []
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    tags = []
    for minor in range(int(match.group(1)), 4, -1):
        tags.append(f"manylinux_2_{minor}_{machine}")
        if minor in legacy:
            tags.append(f"{legacy[minor]}_{machine}")
    return tags


def build_world_image(
    dists: list[str],
    tag: str,
    *,
    base: str | None = None,
    settings: DockerSettings | dict[str, Any] | None = None,
    log: Callable[[str], None] = lambda _msg: None,
) -> str:
    """An image with agentenv-kernel and `dists` (names or folders) installed in `/opt/agentenv`; returns its id.

    `/opt/agentenv/bin` comes first on PATH, so `python -m agentenv …` works in containers from it.
    """
    settings = DockerSettings.load(settings)
    image = resolve_base(settings, base)
    wanted = list(dict.fromkeys(["agentenv-kernel", *dists]))
    with tempfile.TemporaryDirectory(prefix="agentenv-world-") as scratch:
        context = Path(scratch)
        wheels = context / "wheels"
        wheels.mkdir()
        for dist in wanted:
            wheel_of(dist, wheels, log)
        names = sorted({path.name.split("-")[0].replace("_", "-") for path in wheels.glob("*.whl")})
        target = image_python(image, settings)
        platform_args = [arg for tag in manylinux_tags(target) for arg in ("--platform", tag)]
        log(f"dependency wheels for Python {target['version']} ({target['machine']})")
        _run(
            [
                *pip_command(),
                "download",
                "--only-binary=:all:",
                "--dest",
                str(wheels),
                "--find-links",
                str(wheels),
                "--python-version",
                target["version"],
                *platform_args,
                "--quiet",
                *(str(path) for path in sorted(wheels.glob("*.whl"))),
            ],
            "downloading dependency wheels",
        )
        (context / "Dockerfile").write_text(
            "ARG BASE_IMAGE\n"
            "FROM ${BASE_IMAGE}\n"
            "COPY wheels /tmp/agentenv-wheels\n"
            f"RUN python3 -m venv {VENV} \\\n"
            f" && {VENV}/bin/pip install --no-cache-dir --no-index --find-links /tmp/agentenv-wheels "
            f"{' '.join(names)} \\\n"
            " && rm -rf /tmp/agentenv-wheels\n"
            f"ENV PATH={VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
            f'LABEL agentenv_runtime.world.dists="{",".join(wanted)}"\n'
        )
        log(f"building {tag} on {image}")
        return build_image(context, tag, image, settings=settings)


def world_image_tag(dists: list[str]) -> str:
    """`agentenv/world:<hash>` of the installed versions of agentenv-kernel and `dists`.

    A distribution installed from a local folder (an editable workspace install) also contributes the
    newest modification time of its `pyproject.toml` and of the files under its `src/` folder (what goes
    into its wheel), so changing its code without bumping the version rebuilds; tests and docs do not. One
    installed from a wheel contributes its RECORD (each file's hash): a wheel rebuilt at the same version rebuilds.
    """
    import hashlib

    hasher = hashlib.sha256()
    for dist in sorted(set(["agentenv-kernel", *dists])):
        try:
            found = importlib.metadata.distribution(dist)
        except importlib.metadata.PackageNotFoundError:
            raise ImageBuildError(f"distribution {dist!r} is not installed here; install it first") from None
        hasher.update(f"{dist}=={found.version}\n".encode())
        folder = distribution_folder(dist)
        if folder is not None:
            sources = folder / "src" if (folder / "src").is_dir() else folder
            files = [folder / "pyproject.toml", *sources.rglob("*")]
            newest = max(
                (p.stat().st_mtime_ns for p in files if p.is_file() and "__pycache__" not in p.parts), default=0
            )
            hasher.update(f"{folder}@{newest}\n".encode())
        else:  # a wheel install: its RECORD holds every file's hash, so a rebuilt wheel of the same version differs
            hasher.update((found.read_text("RECORD") or "").encode())
    return f"agentenv/world:{hasher.hexdigest()[:16]}"


def ensure_world_image(
    dists: list[str],
    *,
    settings: DockerSettings | dict[str, Any] | None = None,
    log: Callable[[str], None] = lambda _msg: None,
) -> tuple[str, bool]:
    """(tag, built now): the world image for `dists` (see `world_image_tag`), built only when it is missing."""
    from docker.errors import ImageNotFound

    settings = DockerSettings.load(settings)
    tag = world_image_tag(dists)
    client = _client(settings)
    try:
        client.images.get(tag)
        return tag, False
    except ImageNotFound:
        pass
    finally:
        client.close()
    build_world_image(dists, tag, settings=settings, log=log)
    return tag, True
