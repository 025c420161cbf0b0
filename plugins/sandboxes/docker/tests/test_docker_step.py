"""`run_docker_container` inside real tasks: build from the bundle, run, wait until ready, tear down."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentenv_docker.provider import DockerProvider
from agentenv_runtime import TaskError
from agentenv_testing.tasks import run_task

WEB_DOCKERFILE = """\
FROM agentenv/base
COPY index.html /srv/index.html
ENV SERVE="python3 -m http.server 8000 --directory /srv"
CMD ["sh", "-c", "sleep 1; echo \\"$GREETING\\" > /srv/greeting.txt; echo serving; exec $SERVE"]
"""


@pytest.fixture(scope="module")
def web_tag(base_image: str) -> Iterator[str]:
    """One tag for the module: the first test builds it, later ones hit docker's build cache."""
    tag = f"agentenv-test/step-web:{secrets.token_hex(4)}"
    yield tag
    with contextlib.suppress(Exception):  # never built
        DockerProvider({}).client.images.remove(tag, force=True)


@pytest.fixture
def bundle(tmp_path: Path, web_tag: str) -> Path:
    folder = tmp_path / "bundle"
    web = folder / "services" / "web"
    web.mkdir(parents=True)
    (web / "Dockerfile").write_text(WEB_DOCKERFILE)
    (web / "index.html").write_text("<h1>hi</h1>\n")
    folder.joinpath("tag").write_text(web_tag)
    return folder


def task(bundle: Path, **fields: Any) -> dict[str, Any]:
    step = {
        "id": "web",
        "type": "run_docker_container",
        "context": "services/web",
        "ports": [8000],
        "tag": bundle.joinpath("tag").read_text(),
        **fields,
    }
    return {"name": "docker-step", "steps": [step]}


def step_record(record: dict[str, Any], step_id: str = "web") -> dict[str, Any]:
    return next(s for s in record["steps"] if s["id"] == step_id)


def test_http_readiness_urls_labels_and_teardown(bundle: Path, tmp_path: Path) -> None:
    fields = {"env": {"GREETING": "hello step"}, "ready": {"http": "/greeting.txt", "timeout": 120}}
    record = run_task(task(bundle, **fields), tmp_path, bundle_dir=bundle)
    web = step_record(record)
    assert record["status"] == "succeeded", web["error"]
    output = web["output"]
    assert output["url"] == output["urls"]["8000"] and output["url"].startswith("http://127.0.0.1:")
    assert output["image"] == bundle.joinpath("tag").read_text()
    assert record["teardown_errors"] == []
    # the container was labelled with the run, and the run's end removed it with its network
    assert DockerProvider({}).list({"agentenv.run": record["id"]}) == []
    assert DockerProvider({}).client.networks.list(names=[output["id"]]) == []


def test_log_readiness(bundle: Path, tmp_path: Path) -> None:
    record = run_task(task(bundle, ready={"log": "^serv(ing)$", "timeout": 120}), tmp_path, bundle_dir=bundle)
    assert record["status"] == "succeeded", step_record(record)["error"]


def test_a_container_that_exits_fails_the_step_with_its_output(bundle: Path, tmp_path: Path) -> None:
    fields = {"command": ["sh", "-c", "echo broken-config >&2; exit 3"], "ready": {"log": "never", "timeout": 120}}
    record = run_task(task(bundle, **fields), tmp_path, bundle_dir=bundle)
    web = step_record(record)
    assert record["status"] == "failed" and web["status"] == "failed"
    assert "stopped before it was ready" in web["error"] and "broken-config" in web["error"]
    assert DockerProvider({}).list({"agentenv.run": record["id"]}) == []


def test_readiness_timeout_names_the_field(bundle: Path, tmp_path: Path) -> None:
    fields = {"command": ["sleep", "600"], "ready": {"http": "/", "timeout": 2}}
    record = run_task(task(bundle, **fields), tmp_path, bundle_dir=bundle)
    web = step_record(record)
    assert web["status"] == "failed" and "ready.timeout" in web["error"], web["error"]
    assert DockerProvider({}).list({"agentenv.run": record["id"]}) == []


def test_bad_fields_fail_before_anything_runs(bundle: Path, tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="exactly one of"):
        run_task(task(bundle, ready={"http": "/", "log": "x"}), tmp_path, bundle_dir=bundle)
    with pytest.raises(TaskError, match="not in `ports`"):
        run_task(task(bundle, ready={"http": "/", "port": 9000}), tmp_path, bundle_dir=bundle)
    with pytest.raises(TaskError, match="bogus"):
        run_task(task(bundle, bogus=1), tmp_path, bundle_dir=bundle)


def test_missing_context_fails_naming_the_field(bundle: Path, tmp_path: Path) -> None:
    record = run_task(task(bundle, context="services/absent"), tmp_path, bundle_dir=bundle)
    web = step_record(record)
    assert web["status"] == "failed" and "field `context`" in web["error"]
