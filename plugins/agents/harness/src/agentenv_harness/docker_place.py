"""The Docker sandbox of a harness: its CLI in a container of its own, one container per prompt.

- **Image**: the kind's recipe built on agentenv-docker's base image, tagged by content (see `image`).
- **Network**: an `internal` Docker network per agent, so the container has no route out. A `Relay` on the
  network's gateway address (this host's side of the bridge) forwards one port per endpoint the CLI may use:
  the world's MCP server (with the role's own token, as in the process sandbox) and the model endpoint, which
  may listen on this host's loopback (a stand-in model, a world served in process). A remote endpoint keeps
  its host name (mapped to the gateway in the container's /etc/hosts), so TLS still checks out. Nothing else
  is reachable: no telemetry, no update check, no web beyond the model's own.
- **Files**: the agent's private folder (home, config, transcripts) is mounted at its own path, so the
  kind's argument list and config hold unchanged and transcripts land on this host; the world's working
  trees (workspace envs) are mounted at their mount points when the harness's own tools are on.
- **Lifetime**: each prompt is a `docker run` of the CLI under docker-init, named and labelled like the
  docker provider's sandboxes (`agentenv.managed`, owner, run); its stdout is followed line by line (for the
  kind's watch), and the container is removed when the prompt ends, times out, is stopped, cancelled or
  interrupted. The network and relay go with the agent; `agentenv docker prune` removes what a killed
  process left.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from agentenv_harness.errors import HarnessError
from agentenv_harness.image import LABEL, Recipe, ensure_image
from agentenv_harness.places import Place, Tree
from agentenv_harness.process import Finished, Watch
from agentenv_harness.relay import Relay, is_loopback_host

AGENT_LABEL = "agentenv.harness.agent"
RUN_LABEL = "agentenv.run"
MEMORY = "4g"
PIDS = 4096


def docker_problem(kind: str) -> str | None:
    """Why the Docker sandbox cannot work here (agentenv-docker missing, no engine), or None."""
    try:
        from agentenv_docker.api import engine
    except ImportError:
        return (
            f"sandbox = 'docker' needs agentenv-docker: pip install 'agentenv-{kind}[docker]' "
            "(or agentenv plugin add agentenv-docker)"
        )
    try:
        engine().close()
    except Exception as exc:
        return (
            f"sandbox = 'docker': the Docker engine does not answer ({type(exc).__name__}: {exc}); start it, "
            "or use sandbox = 'process' (the world's tools only)"
        )
    return None


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class DockerPlace(Place):
    """One agent's container sandbox: its image, internal network and relay, and a container per prompt."""

    name = "docker"

    def __init__(self, kind: str, recipe: Recipe, binary: Path, folder: Path, log: Callable[[str], None]) -> None:
        problem = docker_problem(kind)
        if problem:
            raise HarnessError(problem)
        self.kind, self.recipe, self.host_binary, self.folder, self.log = kind, recipe, binary, folder, log
        self.agent_id = secrets.token_hex(6)
        self.image: str | None = None
        self.image_built = False
        self.network: Any = None
        self.gateway = ""
        self.relay: Relay | None = None
        self.ports: dict[tuple[str, int], int] = {}
        self.hosts: dict[str, str] = {}
        self.trees: list[Tree] = []
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            from agentenv_docker.api import engine

            self._client = engine()
        return self._client

    # ---- set-up -------------------------------------------------------------------------------------
    def _labels(self, name: str) -> dict[str, str]:
        """The docker provider's labels (so `agentenv docker prune` knows them), the kind, this agent, the run."""
        from agentenv_docker.api import sandbox_labels

        labels = {**sandbox_labels(name), LABEL: self.kind, AGENT_LABEL: self.agent_id}
        if self.run_id:
            labels[RUN_LABEL] = self.run_id
        return labels

    def prepare(self) -> None:
        if self.image is None:
            self.image, self.image_built = ensure_image(self.kind, self.recipe, self.host_binary, self.client, self.log)
        if self.network is None:
            name = f"agentenv-harness-{self.agent_id}"
            try:
                self.network = self.client.networks.create(
                    name, driver="bridge", internal=True, labels=self._labels(name)
                )
                self.network.reload()
                self.gateway = str(self.network.attrs["IPAM"]["Config"][0]["Gateway"])
            except Exception as exc:
                raise HarnessError(
                    f"sandbox = 'docker': the agent's internal network could not be made ({type(exc).__name__}: "
                    f"{exc}); `agentenv docker prune` removes networks that crashed runs left"
                ) from None
        if self.relay is None:
            self.relay = Relay(self.gateway)

    def binary(self) -> str:
        return self.recipe.image_path

    def url(self, url: str) -> str:
        """The relayed URL: the gateway address (a loopback target) or the host name mapped to it, and the
        relay's port; path and query unchanged."""
        if self.relay is None:
            self.prepare()
        assert self.relay is not None
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        if (host, port) not in self.ports:
            try:
                self.ports[host, port] = self.relay.forward(host, port)
            except OSError as exc:
                raise HarnessError(
                    f"sandbox = 'docker': cannot listen on {self.gateway}, the agent network's gateway ({exc}); the "
                    "Docker engine must run on this machine (a remote DOCKER_HOST cannot reach this host's endpoints)"
                ) from None
        seen_as = self.gateway  # a loopback or an address: the relay's address stands in for it
        if not is_loopback_host(host) and not _is_address(host):
            self.hosts[host] = self.gateway  # a name: kept (TLS checks it), pointed at the relay
            seen_as = host
        return urlunsplit((parts.scheme, f"{seen_as}:{self.ports[host, port]}", parts.path, parts.query, ""))

    def use_trees(self, trees: list[Tree]) -> None:
        self.trees = trees

    def working_folder(self, default: Path) -> Path:
        return Path(self.trees[0].mount_point) if self.trees else default

    # ---- one prompt ----------------------------------------------------------------------------------
    def _start(self, name: str, argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> Any:
        volumes = {str(self.folder): {"bind": str(self.folder), "mode": "rw"}}
        volumes.update({str(tree.path): {"bind": tree.mount_point, "mode": "rw"} for tree in self.trees})
        return self.client.containers.run(
            self.image,
            list(argv),
            name=name,
            detach=True,
            init=True,
            environment=dict(env),
            working_dir=str(cwd),
            network=self.network.name,
            extra_hosts=dict(self.hosts) or None,
            volumes=volumes,
            labels=self._labels(name),
            user=f"{os.getuid()}:{os.getgid()}",
            mem_limit=MEMORY,
            pids_limit=PIDS,
        )

    def _follow(self, container: Any, watch: Watch | None, lines: list[str], stopped: list[str]) -> None:
        """Read the CLI's stdout as it comes (its stderr is read once it ended); `watch` may stop it."""
        pending = b""
        for chunk in container.logs(stream=True, follow=True, stdout=True, stderr=False):
            pending += chunk
            while b"\n" in pending:
                raw, pending = pending.split(b"\n", 1)
                line = raw.decode(errors="replace") + "\n"
                lines.append(line)
                reason = watch(line) if watch is not None and not stopped else None
                if reason:
                    stopped.append(reason)
                    self._kill(container)
        if pending:
            lines.append(pending.decode(errors="replace"))

    @staticmethod
    def _kill(container: Any) -> None:
        with contextlib.suppress(Exception):
            container.kill()

    def _remove(self, name: str) -> None:
        with contextlib.suppress(Exception):
            self.client.containers.get(name).remove(force=True)

    async def run(
        self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float, watch: Watch | None
    ) -> Finished:
        started = time.monotonic()
        name = f"agentenv-harness-{secrets.token_hex(6)}"
        lines: list[str] = []
        stopped: list[str] = []
        starting = asyncio.ensure_future(asyncio.to_thread(self._start, name, argv, env, cwd))
        try:
            try:
                container = await asyncio.shield(starting)
            except Exception as exc:
                raise HarnessError(
                    f"sandbox = 'docker': the {self.kind} container did not start ({type(exc).__name__}: {exc})"
                ) from None
            following = asyncio.ensure_future(asyncio.to_thread(self._follow, container, watch, lines, stopped))
            timed_out = False
            try:
                await asyncio.wait_for(asyncio.shield(following), timeout)
            except TimeoutError:
                timed_out = True
                await asyncio.to_thread(self._kill, container)
                await following
            status = await asyncio.to_thread(container.wait)
            stderr = await asyncio.to_thread(container.logs, stdout=False, stderr=True)
            code = None if timed_out or stopped else int(status.get("StatusCode", -1))
            return Finished(
                code,
                "".join(lines),
                bytes(stderr).decode(errors="replace"),
                time.monotonic() - started,
                timed_out=timed_out,
                stopped=stopped[0] if stopped else None,
            )
        finally:
            if not starting.done():  # cancelled while the container was being made: let it exist, then remove it
                with contextlib.suppress(BaseException):
                    await asyncio.shield(starting)
            self._remove(name)  # blocking on purpose: it must happen even when the run is being torn down

    # ---- the end -------------------------------------------------------------------------------------
    def close(self) -> None:
        if self.relay is not None:
            self.relay.close()
            self.relay = None
        if self._client is None:
            return
        with contextlib.suppress(Exception):
            for container in self.client.containers.list(all=True, filters={"label": f"{AGENT_LABEL}={self.agent_id}"}):
                container.remove(force=True)
        if self.network is not None:
            with contextlib.suppress(Exception):
                self.network.remove()
            self.network = None
        with contextlib.suppress(Exception):
            self._client.close()
        self._client = None
