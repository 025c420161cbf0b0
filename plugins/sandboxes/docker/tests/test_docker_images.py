"""Building images locally: Dockerfiles on the configured base, and a world image with agentenv installed."""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentenv_docker.images import ImageBuildError, build_image, build_world_image, manylinux_tags
from agentenv_docker.provider import DockerProvider


@pytest.fixture
def tags(base_image: str) -> Iterator[list[str]]:
    """Tags a test builds; removed afterwards."""
    made: list[str] = []
    yield made
    client = DockerProvider({}).client
    for tag in made:
        with contextlib.suppress(Exception):  # never built, or already gone
            client.images.remove(tag, force=True)


def run_in(image: str, command: list[str]) -> str:
    out = DockerProvider({}).client.containers.run(image, command, remove=True)
    return out.decode()


def test_from_agentenv_base_is_pointed_at_the_configured_base(tmp_path: Path, tags: list[str], base_image: str) -> None:
    (tmp_path / "Dockerfile").write_text("FROM agentenv/base\nCOPY hello.txt /hello.txt\n")
    (tmp_path / "hello.txt").write_text("hello from the context\n")
    tag = f"agentenv-test/from-base:{secrets.token_hex(4)}"
    tags.append(tag)
    build_image(tmp_path, tag)
    assert run_in(tag, ["cat", "/hello.txt"]) == "hello from the context\n"
    assert run_in(tag, ["python3", "-c", "import sys; print(sys.version_info[0])"]) == "3\n"
    assert (tmp_path / "Dockerfile").read_text().startswith("FROM agentenv/base\n")  # the context is untouched


def test_build_arg_base_image(tmp_path: Path, tags: list[str], base_image: str) -> None:
    (tmp_path / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo built > /built.txt\n")
    tag = f"agentenv-test/arg-base:{secrets.token_hex(4)}"
    tags.append(tag)
    build_image(tmp_path, tag)
    assert run_in(tag, ["cat", "/built.txt"]) == "built\n"


def test_build_errors_say_why(tmp_path: Path, tags: list[str]) -> None:
    with pytest.raises(ImageBuildError, match="no Dockerfile"):
        build_image(tmp_path, "agentenv-test/none:1")
    (tmp_path / "Dockerfile").write_text("FROM agentenv/base\nRUN echo boom-marker && exit 7\n")
    with pytest.raises(ImageBuildError, match="boom-marker"):
        build_image(tmp_path, "agentenv-test/failing:1")


def test_manylinux_tags_cover_older_glibc() -> None:
    found = manylinux_tags({"machine": "x86_64", "libc": "2_36"})
    assert found[0] == "manylinux_2_36_x86_64"
    assert "manylinux2014_x86_64" in found and "manylinux_2_17_x86_64" in found and found[-1] == "manylinux1_x86_64"
    assert manylinux_tags({"machine": "x86_64", "libc": ""}) == []


@pytest.mark.slow
def test_world_image_runs_the_agentenv_cli(tags: list[str]) -> None:
    tag = f"agentenv-test/world:{secrets.token_hex(4)}"
    tags.append(tag)
    build_world_image(["agentenv-sandbox-local", "agentenv-docker"], tag)
    listed = json.loads(run_in(tag, ["python", "-m", "agentenv", "plugin", "list", "--json"]))
    status = {row["distribution"]: row["status"] for row in listed}
    assert status == {"agentenv-sandbox-local": "ok", "agentenv-docker": "ok"}  # the kernel is not a plugin


def test_a_wheel_rebuilt_at_the_same_version_gets_a_new_world_image_tag(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel install has no source folder to date: its RECORD (every file's hash) tells two builds apart, so a
    run never reuses a world image packed from the older build of the same version."""
    from agentenv_docker import images

    class Installed:
        version = "0.1.0"
        record = "agentenv_helpdesk/env.py,sha256=one,100\n"

        def read_text(self, name: str) -> str | None:
            return self.record if name == "RECORD" else None

    installed = Installed()
    monkeypatch.setattr(images.importlib.metadata, "distribution", lambda _name: installed)
    monkeypatch.setattr(images, "distribution_folder", lambda _name: None)
    before = images.world_image_tag(["agentenv-helpdesk"])
    assert images.world_image_tag(["agentenv-helpdesk"]) == before
    installed.record = "agentenv_helpdesk/env.py,sha256=two,101\n"
    assert images.world_image_tag(["agentenv-helpdesk"]) != before
