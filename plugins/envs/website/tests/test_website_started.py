"""Started sites: a real command (Python's own `http.server`) and a Docker image, started with the world,
health-checked, fresh per fork, stopped on close; a site that exits or never answers fails with the env named and
leaves nothing running."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentenv_runtime import World
from agentenv_website.api import DOCKER_LABEL, WebsiteEnv, WebsiteError

DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def get(url: str) -> str:
    with DIRECT.open(url, timeout=30) as response:
        return response.read().decode()  # type: ignore[no-any-return]


@pytest.fixture
def docroot(tmp_path: Path) -> Path:
    (tmp_path / "index.html").write_text("<!doctype html><title>Static</title><h1>Hello from a command</h1>")
    return tmp_path


def http_server(docroot: Path, **settings: Any) -> dict[str, Any]:
    command = [sys.executable, "-m", "http.server", "{port}", "--bind", "127.0.0.1", "--directory", str(docroot)]
    return {"command": command, **settings}


def gone(pid: int, within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_command_site_lives_with_its_world_and_each_fork_gets_its_own(docroot: Path) -> None:
    env = WebsiteEnv(http_server(docroot))
    world = World([env])
    assert env._site is None  # nothing runs until the world is deployed (or the site first used)
    env.start()
    clone = world.fork()
    forked = clone.env("website")
    try:
        assert "Hello from a command" in get(env.base_url + "/")
        assert world.call("site_url").result == {"url": env.base_url + "/", "form": "command"}
        assert forked.base_url != env.base_url and "Hello" in get(forked.base_url + "/")  # type: ignore[attr-defined]
        pids = [env._site.process.pid, forked._site.process.pid]  # type: ignore[attr-defined, union-attr]
        assert pids[0] != pids[1]
    finally:
        forked.close()  # type: ignore[attr-defined]
        env.close()
    assert all(gone(pid) for pid in pids)


def test_a_command_that_exits_at_start_names_the_env_its_status_and_output() -> None:
    crash = [sys.executable, "-c", "import sys; print('config file missing: /etc/site.toml'); sys.exit(3)"]
    with pytest.raises(WebsiteError) as caught:
        WebsiteEnv({"command": crash, "start_timeout": 30}).start()
    message = str(caught.value)
    assert message.startswith("env website: the site (") and "ended before it answered GET" in message
    assert "exit status 3" in message and "config file missing: /etc/site.toml" in message


def test_a_command_that_never_answers_is_stopped_and_named(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    hang = [
        sys.executable,
        "-c",
        f"import os, time; open({str(marker)!r}, 'w').write(str(os.getpid())); time.sleep(600)",
    ]
    with pytest.raises(WebsiteError, match=r"did not answer GET http://127\.0\.0\.1:\d+/ below 400 within 1s"):
        WebsiteEnv({"command": hang, "start_timeout": 1}).start()
    assert gone(int(marker.read_text()))


def test_a_missing_program_and_a_missing_health_path_are_named(docroot: Path) -> None:
    with pytest.raises(WebsiteError, match=r"env website: the site command 'no-such-site-binary' could not start"):
        WebsiteEnv({"command": "no-such-site-binary"}).start()
    with pytest.raises(WebsiteError, match=r"GET http://127\.0\.0\.1:\d+/health below 400 within 2s .* `health_path`"):
        WebsiteEnv(http_server(docroot, health_path="/health", start_timeout=2)).start()


def test_a_url_site_is_checked_never_started(docroot: Path) -> None:
    env = WebsiteEnv(http_server(docroot))
    base = env.base_url
    try:
        elsewhere = WebsiteEnv({"url": base + "/"})
        assert elsewhere.base_url == env.base_url
        elsewhere.close()
        assert "Hello" in get(env.base_url + "/")  # closing the url env left the site alone
    finally:
        env.close()
    with pytest.raises(WebsiteError, match=r"within 1s \(start_timeout\) and runs elsewhere"):
        WebsiteEnv({"url": base, "start_timeout": 1}).start()
    with pytest.raises(WebsiteError, match=r"env website: its site \(.*http.server.*\) was stopped \(closed\)"):
        env.base_url  # noqa: B018 - reading it raises


# ---- Docker ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def image(docker_engine: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from agentenv_docker.api import ensure_base_image

    base = ensure_base_image(log=lambda message: print(f"[base image] {message}"))
    folder = tmp_path_factory.mktemp("site-image")
    (folder / "index.html").write_text("<!doctype html><title>Boxed</title><h1>Hello from a container</h1>")
    (folder / "Dockerfile").write_text(
        f"FROM {base}\nCOPY index.html /site/index.html\nWORKDIR /site\n"
        'ENTRYPOINT ["python3", "-m", "http.server"]\nCMD ["8080"]\n'
    )
    tag = f"agentenv-website-test:{uuid.uuid4().hex[:12]}"
    built = subprocess.run(
        ["docker", "build", "-q", "-t", tag, str(folder)], capture_output=True, text=True, timeout=600
    )
    assert built.returncode == 0, built.stderr
    yield tag
    subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)  # only the image made here


def containers() -> list[str]:
    mine = f"{DOCKER_LABEL}.owner={os.getpid()}"
    listed = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label={mine}"], capture_output=True, text=True, timeout=60
    )
    return listed.stdout.split()


def test_an_image_site_lives_and_dies_with_the_world(image: str) -> None:
    env = WebsiteEnv({"image": image, "port": 8080, "start_timeout": 60})
    world = World([env])
    clone = world.fork()
    try:
        assert "Hello from a container" in get(env.base_url + "/")
        assert "Hello from a container" in get(clone.env("website").base_url + "/")  # type: ignore[attr-defined]
        assert len(containers()) == 2
    finally:
        clone.env("website").close()  # type: ignore[attr-defined]
        env.close()
    assert containers() == []


def test_an_image_that_exits_is_reported_with_its_logs_and_removed(image: str) -> None:
    with pytest.raises(
        WebsiteError, match=r"(?s)env website: the site \(.*\) ended .*exit status 2.*invalid int value"
    ):
        WebsiteEnv({"image": image, "port": 8080, "args": ["not-a-port"]}).start()
    assert containers() == []
