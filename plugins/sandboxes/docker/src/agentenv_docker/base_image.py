"""The base image every docker sandbox starts from, built from this machine when no registry is at hand.

`agentenv/base:py3.11-bookworm` is a minimal Debian (debootstrap `minbase`, the host's suite and apt mirror)
with python3, python3-venv and ca-certificates, imported with `docker import`. Nothing is pulled from a
container registry, so it works on machines (and CI runners) that can reach a Debian mirror but no registry.
Users who do have a registry can point the provider at any image with python3 instead (`python:3.12-slim`).

    python -m agentenv_docker.base_image [--tag TAG] [--suite bookworm] [--mirror URL] [--force]

Building needs root (debootstrap), the `debootstrap` tool (installed with apt-get when missing and root)
and the `docker` CLI.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from agentenv_docker.settings import DEFAULT_BASE as DEFAULT_TAG

BUILD_COMMAND = "python -m agentenv_docker.base_image"
PACKAGES = ("python3", "python3-venv", "ca-certificates")
DEFAULT_MIRROR = "http://deb.debian.org/debian"
IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LOCK_FILE = Path(tempfile.gettempdir()) / "agentenv-docker-base-image.lock"


class BaseImageError(RuntimeError):
    """The base image could not be built; the message says what is missing and how to get it."""


def image_exists(tag: str) -> bool:
    """Whether the local engine has an image called `tag`."""
    import docker
    from docker.errors import ImageNotFound

    client = docker.from_env()
    try:
        client.images.get(tag)
    except ImageNotFound:
        return False
    finally:
        client.close()
    return True


def host_suite(os_release: Path = Path("/etc/os-release")) -> str:
    """The Debian suite this machine runs (`bookworm`), so the image matches the host's mirror and keys."""
    try:
        text = os_release.read_text(encoding="utf-8")
    except OSError:
        return "bookworm"
    match = re.search(r"^VERSION_CODENAME=\"?([a-z]+)\"?$", text, re.MULTILINE)
    return match.group(1) if match else "bookworm"


def host_mirror(sources: list[Path] | None = None) -> str:
    """The Debian archive URL this machine's apt uses (one-line or deb822 sources), else deb.debian.org."""
    if sources is None:
        sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in sources:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("#"):
                continue
            for url in re.findall(r"(https?://\S+)", line):
                url = url.rstrip("/")
                if url.endswith("/debian") and "security" not in url:
                    return str(url)
    return DEFAULT_MIRROR


@contextlib.contextmanager
def _build_lock() -> Iterator[None]:
    """One build at a time on this machine (parallel test workers would otherwise each build it)."""
    import fcntl

    with open(LOCK_FILE, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _need_tools(log: Callable[[str], None]) -> None:
    if shutil.which("docker") is None:
        raise BaseImageError("the `docker` CLI is not on PATH; install docker (the CLI imports the image)")
    if os.geteuid() != 0:
        raise BaseImageError(
            f"building the base image needs root (debootstrap); run `sudo {BUILD_COMMAND}`, "
            "or set the provider's `base_image` to an image with python3 (e.g. python:3.12-slim)"
        )
    if shutil.which("debootstrap") is None:
        if shutil.which("apt-get") is None:
            raise BaseImageError("`debootstrap` is missing and there is no apt-get to install it; install debootstrap")
        log("installing debootstrap with apt-get")
        done = subprocess.run(["apt-get", "install", "-y", "debootstrap"], capture_output=True, text=True)
        if done.returncode != 0:
            subprocess.run(["apt-get", "update"], capture_output=True, text=True)
            done = subprocess.run(["apt-get", "install", "-y", "debootstrap"], capture_output=True, text=True)
        if done.returncode != 0:
            raise BaseImageError(f"`apt-get install -y debootstrap` failed: {done.stderr.strip()[-500:]}")


def _trim(root: Path) -> None:
    """Drop what a container never needs: downloaded .debs, apt lists, docs, man pages, byte-code caches."""
    for folder in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info"):
        target = root / folder
        if target.is_dir():
            for child in target.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                elif child.name != "lock":
                    child.unlink(missing_ok=True)
    for cache in root.glob("usr/lib/python3*/**/__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)


def build_base_image(
    tag: str = DEFAULT_TAG,
    *,
    suite: str | None = None,
    mirror: str | None = None,
    packages: tuple[str, ...] = PACKAGES,
    log: Callable[[str], None] = print,
) -> None:
    """Debootstrap a minimal Debian with `packages` and import it as `tag` (replacing any image of that tag)."""
    _need_tools(log)
    suite = suite or host_suite()
    mirror = mirror or host_mirror()
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="agentenv-base-", dir="/var/tmp" if Path("/var/tmp").is_dir() else None))
    root = work / "rootfs"
    try:
        log(f"debootstrap --variant=minbase {suite} from {mirror} with {', '.join(packages)} (a few minutes)")
        cmd = ["debootstrap", "--variant=minbase", f"--include={','.join(packages)}", suite, str(root), mirror]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip()[-1500:]
            raise BaseImageError(f"debootstrap failed (exit {done.returncode}); is {mirror} reachable?\n{tail}")
        log(f"root filesystem ready after {time.monotonic() - started:.0f}s; trimming caches and docs")
        _trim(root)
        log(f"importing into docker as {tag}")
        changes = [
            'CMD ["/bin/bash"]',
            f"ENV PATH={IMAGE_PATH}",
            "ENV LANG=C.UTF-8",
            "LABEL agentenv.base=true",
            f"LABEL agentenv.base.suite={suite}",
        ]
        change_args = [arg for change in changes for arg in ("--change", change)]
        tar = subprocess.Popen(["tar", "-C", str(root), "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
        assert tar.stdout is not None
        imported = subprocess.run(
            ["docker", "import", *change_args, "-", tag], stdin=tar.stdout, capture_output=True, text=True
        )
        tar.stdout.close()
        tar_code = tar.wait()
        if tar_code != 0 or imported.returncode != 0:
            raise BaseImageError(f"`tar | docker import` failed (tar exit {tar_code}): {imported.stderr.strip()}")
        log(f"built {tag} in {time.monotonic() - started:.0f}s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ensure_base_image(
    tag: str = DEFAULT_TAG,
    *,
    suite: str | None = None,
    mirror: str | None = None,
    force: bool = False,
    log: Callable[[str], None] = print,
) -> str:
    """Make sure `tag` exists locally, building it from this machine when missing; returns the tag."""
    if not force and image_exists(tag):
        log(f"{tag} is already present")
        return tag
    with _build_lock():
        if not force and image_exists(tag):  # another process built it while we waited
            log(f"{tag} is already present")
            return tag
        build_base_image(tag, suite=suite, mirror=mirror, log=log)
    return tag


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=BUILD_COMMAND, description="Build the agentenv docker base image from a Debian mirror (no registry)."
    )
    parser.add_argument("--tag", default=DEFAULT_TAG, help=f"image tag (default {DEFAULT_TAG})")
    parser.add_argument("--suite", default=None, help="Debian suite (default: the host's, e.g. bookworm)")
    parser.add_argument("--mirror", default=None, help="Debian mirror URL (default: the host's apt mirror)")
    parser.add_argument("--force", action="store_true", help="rebuild even when the tag exists")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(f"[agentenv-docker] {message}", flush=True)

    try:
        ensure_base_image(args.tag, suite=args.suite, mirror=args.mirror, force=args.force, log=log)
    except BaseImageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
