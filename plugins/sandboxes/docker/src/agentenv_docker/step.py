"""`run_docker_container`: build an image from a folder of the bundle, run it, wait until it is ready.

    {"id": "api", "type": "run_docker_container", "context": "services/api", "ports": [8000],
     "env": {"MODE": "test"}, "ready": {"http": "/health", "port": 8000, "timeout": 60}}

The container is a docker sandbox labelled with the run (`agentenv.run`) and the step (`agentenv.step`);
the run tears it down (container, network) when it ends, fails or is cancelled, and `agentenv docker prune
--run RUN` removes it if the process running the task was killed. Output: the sandbox id, the image, and a
URL per published port (`urls`, keyed by container port; `url` is the first).
"""

from __future__ import annotations

import asyncio
import re
import time
import urllib.error
import urllib.request
from typing import Any

from agentenv.contracts import SandboxSpec, SpecRefused, Step, StepContext, StepFailed
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentenv_docker.settings import RUN, DockerSettings

STEP_LABEL = "agentenv.step"


class Ready(BaseModel):
    """When the container counts as ready: an HTTP path answers 2xx/3xx, or a line of its output matches."""

    model_config = ConfigDict(extra="forbid")

    http: str | None = Field(None, description="Path to GET on `port`, e.g. `/health`.")
    port: int | None = Field(None, description="Container port of the HTTP check (default: the first of `ports`).")
    log: str | None = Field(None, description="Regular expression a line of the container's output must match.")
    timeout: float = Field(60.0, gt=0, description="Seconds to wait before the step fails.")

    @model_validator(mode="after")
    def _one_check(self) -> Ready:
        if (self.http is None) == (self.log is None):
            raise ValueError("give exactly one of `http` (a path) or `log` (a regex)")
        if self.http is not None and not self.http.startswith("/"):
            raise ValueError(f"`http` must be a path starting with '/', not {self.http!r}")
        if self.log is not None:
            try:
                re.compile(self.log)
            except re.error as exc:
                raise ValueError(f"`log` is not a valid regular expression: {exc}") from None
        return self


class RunDockerContainerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    context: str = Field(description="Build context folder (with a Dockerfile), relative to the bundle.")
    tag: str | None = Field(None, description="Image tag; default `agentenv-step/<step id>:latest`.")
    dockerfile: str = Field("Dockerfile", description="Dockerfile name inside the context.")
    ports: list[int] = Field(default_factory=list, description="Container ports to publish on 127.0.0.1.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables of the container.")
    command: list[str] | None = Field(None, description="Command to run; default: the image's CMD.")
    ready: Ready | None = Field(None, description="Readiness check: {http, port, timeout} or {log, timeout}.")

    @model_validator(mode="after")
    def _ready_port(self) -> RunDockerContainerSettings:
        if self.ready is not None and self.ready.http is not None:
            port = self.ready.port if self.ready.port is not None else (self.ports[0] if self.ports else None)
            if port is None:
                raise ValueError("`ready.http` needs a port: set `ready.port` or list it in `ports`")
            if port not in self.ports:
                raise ValueError(f"`ready.port` {port} is not in `ports` {self.ports}; publish it to check it")
        return self


class RunDockerContainer(Step[RunDockerContainerSettings]):
    name = "run_docker_container"
    description = "Build an image from a folder of the bundle and run it in a docker sandbox, waiting until ready."
    Settings = RunDockerContainerSettings
    creates_resources = True

    async def execute(self, settings: RunDockerContainerSettings, ctx: StepContext) -> dict[str, Any]:
        step_id = ctx.step_id
        context = ctx.resolve_path(settings.context)
        if not (context / settings.dockerfile).is_file():
            raise StepFailed(f"field `context`: {context} has no {settings.dockerfile}; point it at a build context")
        try:
            docker_settings = DockerSettings.load(ctx.config.plugin_settings("agentenv-docker").get("docker", {}))
        except ValueError as exc:
            raise StepFailed(f"config [plugins.agentenv-docker.docker]: {exc}") from None
        from agentenv_docker.images import ImageBuildError, build_image
        from agentenv_docker.provider import DockerProvider

        provider = DockerProvider(docker_settings)
        usable, reason = provider.available()
        if not usable:
            raise StepFailed(f"the docker provider cannot run here: {reason}")
        tag = settings.tag or f"agentenv-step/{step_id.lower()}:latest"
        ctx.log(f"{step_id}: building {tag} from {context}")
        try:
            await asyncio.to_thread(build_image, context, tag, settings=docker_settings, dockerfile=settings.dockerfile)
        except ImageBuildError as exc:
            raise StepFailed(f"field `context`: {exc}") from None
        spec = SandboxSpec(
            image=tag,
            command=settings.command,
            env=settings.env,
            ports=settings.ports,
            labels={RUN: ctx.run_id, STEP_LABEL: step_id},
        )
        try:
            sandbox = await asyncio.to_thread(provider.launch, spec, image_command=True)
        except SpecRefused as exc:
            raise StepFailed(f"the docker provider refused the container: {exc}") from None
        ctx.add_resource(step_id, sandbox, sandbox.teardown)
        try:
            urls = {str(port): sandbox.url(port) for port in settings.ports}
        except ValueError:  # a container that already exited has no published ports left
            if sandbox.status() == "running":
                raise
            raise StepFailed(
                f"field `ready`: the container stopped before it was ready; its output:\n"
                f"{sandbox.logs(tail=40).strip()}"
            ) from None
        if settings.ready is not None:
            ctx.log(f"{step_id}: waiting for {sandbox.id} to be ready")
            await asyncio.to_thread(wait_ready, sandbox, settings.ready, settings.ports)
        return {"id": sandbox.id, "image": tag, "urls": urls, "url": next(iter(urls.values()), None)}


def wait_ready(sandbox: Any, ready: Ready, ports: list[int]) -> None:
    """Poll until `ready` holds; StepFailed (with the container's last output) on timeout or exit."""
    deadline = time.monotonic() + ready.timeout
    pattern = re.compile(ready.log) if ready.log is not None else None
    target = ""
    if ready.http is not None:
        port = ready.port if ready.port is not None else ports[0]
        target = sandbox.url(port) + ready.http
    last = "no answer yet"
    while True:
        if pattern is not None:
            if any(pattern.search(line) for line in sandbox.logs().splitlines()):
                return
            last = "no matching line yet"
        else:
            try:
                with urllib.request.urlopen(target, timeout=5) as response:
                    if response.status < 400:
                        return
                    last = f"HTTP {response.status}"
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}"
            except OSError as exc:
                last = f"{type(exc).__name__}: {exc}"
        if sandbox.status() != "running":
            raise StepFailed(
                f"field `ready`: the container stopped before it was ready; its output:\n"
                f"{sandbox.logs(tail=40).strip()}"
            )
        if time.monotonic() >= deadline:
            what = f"GET {target}" if pattern is None else f"a log line matching {ready.log!r}"
            raise StepFailed(
                f"field `ready.timeout`: no {what} within {ready.timeout}s ({last}); "
                f"last output:\n{sandbox.logs(tail=40).strip()}"
            )
        time.sleep(0.25)
