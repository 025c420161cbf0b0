"""The `docker` sandbox provider: one container on its own network per sandbox, everything labelled.

Every container, network and volume made here carries `agentenv.managed=true`, the sandbox's name
(`agentenv.sandbox`), the spec's labels (among them the run's `agentenv.run`) and the process that made it
(`agentenv.owner.*`, see `owner.py`). Labels are the only record: a run that crashed leaves containers whose
labels say which run made them, so `prune_objects({"agentenv.run": RUN})` — or `agentenv docker prune --run RUN`,
or `agentenv sandbox prune` — finds and removes them from any process, later. What a process that still runs
made is a live run's world, not a leftover: prune keeps it (unless that process is the one pruning) and
`kept_objects` says why.

What the provider honours and what it refuses (`SpecRefused`, naming the field):
- `mode="vm"`: refused (containers only).
- `network`: `allow_all` is a private bridge network with egress; an `allowlist` with no hosts is an
  `internal` network (no route out), which docker enforces; a non-empty allowlist is refused, because
  docker has no per-host egress filter and a sandbox must not look safer than it is. `loopback` is
  `network_mode="none"` (the container's own loopback, nothing else); `none` is refused (docker always gives
  a container a loopback). A sandbox without network access publishes no `ports`.
- `disk_mb`: passed as the storage-driver `size` option when the engine's driver can limit it
  (overlay2 on xfs, btrfs, zfs, devicemapper); refused otherwise (e.g. fuse-overlayfs, vfs).
- `cpu` → NanoCpus, `memory_mb` → memory limit, `ports` → published on 127.0.0.1 at a random host port.
- `ttl_seconds` → label `agentenv.deadline`, and the default command (`sleep`) ends then, so the container
  stops by itself; expired sandboxes are what `prune_objects(expired=True)` removes.
"""

from __future__ import annotations

import builtins
import contextlib
import secrets
import sys
import time
from typing import TYPE_CHECKING, Any

from agentenv.contracts import Sandbox, SandboxProvider, SandboxSpec, SpecRefused

from agentenv_docker.owner import live_owner, sandbox_labels
from agentenv_docker.sandbox import DockerSandbox
from agentenv_docker.settings import DEADLINE, MANAGED, SANDBOX, DockerSettings, build_command, is_local_base

if TYPE_CHECKING:
    import docker

SIZE_DRIVERS = {"btrfs", "zfs", "devicemapper", "windowsfilter"}
"""Storage drivers whose containers accept `--storage-opt size=` (overlay2 too, on xfs with project quota)."""


def label_filter(labels: dict[str, str]) -> list[str]:
    """Docker `label=` filters that match objects carrying all `labels` and made by this plugin."""
    return [f"{MANAGED}=true", *(f"{key}={value}" for key, value in sorted(labels.items()))]


def is_expired(labels: dict[str, str], now: float | None = None) -> bool:
    """Whether an object's `agentenv.deadline` label lies in the past (False when it has none)."""
    raw = labels.get(DEADLINE)
    if not raw:
        return False
    try:
        deadline = float(raw)
    except ValueError:
        return False
    return deadline <= (time.time() if now is None else now)


class DockerProvider(SandboxProvider):
    name = "docker"
    description = "Docker containers on this machine's engine, one private network per sandbox; labelled and prunable."
    Settings = DockerSettings
    modes = frozenset({"container"})

    def __init__(self, settings: DockerSettings | dict[str, Any] | None = None) -> None:
        self.settings: DockerSettings = DockerSettings.load(settings)
        self._client: docker.DockerClient | None = None

    # -- engine -------------------------------------------------------------------------------------

    @property
    def client(self) -> docker.DockerClient:
        """A client for the configured engine, made on first use (importing the SDK only then)."""
        if self._client is None:
            import docker

            if self.settings.docker_host:
                self._client = docker.DockerClient(base_url=self.settings.docker_host)
            else:
                self._client = docker.from_env()
        return self._client

    def available(self) -> tuple[bool, str]:
        try:
            import docker  # noqa: F401
        except ImportError:
            return False, "the `docker` Python package is not installed (pip install docker)"
        try:
            self.client.ping()
        except Exception as exc:
            return False, f"cannot reach the docker engine ({type(exc).__name__}: {exc}); is the daemon running?"
        return True, ""

    # -- create -------------------------------------------------------------------------------------

    def create(self, spec: SandboxSpec) -> Sandbox:
        return self.launch(spec)

    def launch(self, spec: SandboxSpec, *, image_command: bool = False) -> DockerSandbox:
        """Create and start a sandbox; `image_command` keeps the image's own CMD when the spec gives none.

        Plain sandboxes default to `sleep infinity` so that commands can be run in them; a step that runs
        a service image (`run_docker_container`) wants the image's CMD instead.
        """
        from docker.errors import APIError, ImageNotFound

        storage_opt = self._check(spec)
        image = self._image(spec.image)
        name = f"agentenv-{secrets.token_hex(6)}"
        labels = {**spec.labels, **sandbox_labels(name)}
        if spec.ttl_seconds is not None:
            labels[DEADLINE] = str(int(time.time()) + spec.ttl_seconds)
        network_options: dict[str, str]
        if spec.network.mode == "loopback":  # no network but the container's own loopback
            network_options = {"network_mode": "none"}
        else:
            internal = spec.network.mode == "allowlist"
            network = self.client.networks.create(name, driver="bridge", internal=internal, labels=labels)
            network_options = {"network": network.name}
        command: list[str] | None = spec.command
        if command is None and not image_command:
            # With a ttl the default command ends at the deadline, so the container stops on its own
            # even when nobody prunes it (docker-init then stops everything started in it).
            command = ["sleep", str(spec.ttl_seconds) if spec.ttl_seconds is not None else "infinity"]
        options: dict[str, Any] = {
            "name": name,
            "command": command,
            "detach": True,
            "labels": labels,
            "environment": dict(spec.env),
            **network_options,
            "working_dir": self.settings.workdir,
            "init": True,  # PID 1 reaps zombies and forwards signals, so `sleep infinity` stops at once
            "stop_signal": "SIGTERM",
        }
        if spec.cpu is not None:
            options["nano_cpus"] = int(spec.cpu * 1_000_000_000)
        if spec.memory_mb is not None:
            options["mem_limit"] = f"{spec.memory_mb}m"
        if storage_opt:
            options["storage_opt"] = storage_opt
        if spec.ports:
            options["ports"] = {f"{port}/tcp": (self.settings.publish_host, None) for port in spec.ports}
        try:
            container = self.client.containers.run(image, **options)
        except ImageNotFound as exc:
            self.remove_sandbox(name)
            raise SpecRefused(f"image: {image!r} is not available: {exc.explanation or exc}") from None
        except APIError as exc:
            self.remove_sandbox(name)
            if storage_opt and ("size" in str(exc).lower() or "quota" in str(exc).lower()):
                raise SpecRefused(f"disk_mb: the engine refused a size limit: {exc.explanation or exc}") from None
            raise
        except BaseException:
            self.remove_sandbox(name)
            raise
        return DockerSandbox(self, container.id, name, labels)

    def _check(self, spec: SandboxSpec) -> dict[str, str]:
        """Refuse what cannot be honoured; returns storage options for `disk_mb`."""
        if spec.mode != "container":
            raise SpecRefused(f"mode: the docker provider makes containers, not {spec.mode!r} sandboxes")
        if spec.network.mode == "allowlist" and spec.network.allow:
            raise SpecRefused(
                "network: docker cannot limit egress to named hosts "
                f"({', '.join(spec.network.allow)}); use mode 'allow_all', or an allowlist with no hosts "
                "for a sandbox without network access"
            )
        if spec.network.mode == "none":
            raise SpecRefused(
                "network: mode 'none' (not even a loopback) cannot be had: docker gives every container its own "
                "loopback; use mode 'loopback' (nothing outside the container, in or out)"
            )
        if spec.network.mode in ("allowlist", "loopback") and spec.ports:
            raise SpecRefused(
                f"network: a sandbox without network access (mode {spec.network.mode!r}) cannot publish `ports`; "
                "docker does not route published ports into it"
            )
        if spec.disk_mb is None:
            return {}
        driver, backing = self._storage_driver()
        if driver in SIZE_DRIVERS or (driver == "overlay2" and backing == "xfs"):
            return {"size": f"{spec.disk_mb}M"}
        on = f" on {backing}" if backing else ""
        raise SpecRefused(
            f"disk_mb: this engine's storage driver {driver}{on} cannot limit a container's disk size "
            "(overlay2 on xfs with pquota, btrfs, zfs or devicemapper can); leave disk_mb unset"
        )

    def _storage_driver(self) -> tuple[str, str]:
        info = self.client.info()
        status = dict(tuple(pair) for pair in info.get("DriverStatus") or [] if len(pair) == 2)
        return str(info.get("Driver", "")), str(status.get("Backing Filesystem", ""))

    def _image(self, wanted: str | None) -> str:
        """The image to start from: present locally, pulled, or (the base) built from a Debian mirror."""
        from docker.errors import DockerException, ImageNotFound

        image = wanted or self.settings.base_image
        try:
            self.client.images.get(image)
            return image
        except ImageNotFound:
            pass
        if wanted is None and is_local_base(image):
            if not self.settings.build_base:
                raise SpecRefused(
                    f"image: the base image {image} is missing and `build_base` is off; build it with "
                    f"`{build_command(image)}`, or set [plugins.agentenv-docker.docker] base_image "
                    "to an image with python3 (e.g. python:3.12-slim)"
                )
            from agentenv_docker.base_image import BaseImageError, ensure_base_image

            try:
                ensure_base_image(image, log=lambda line: print(f"[agentenv-docker] {line}", file=sys.stderr))
            except BaseImageError as exc:
                raise SpecRefused(f"image: the base image {image} is missing and could not be built: {exc}") from None
            return image
        if self.settings.pull:
            try:
                self.client.images.pull(image)
                return image
            except DockerException as exc:
                reason = f"it is not present locally and could not be pulled ({exc})"
        else:
            reason = "it is not present locally and `pull` is off"
        field = "image" if wanted else "image (from [plugins.agentenv-docker.docker] base_image)"
        raise SpecRefused(f"{field}: cannot use {image!r}: {reason}")

    # -- find and clean up --------------------------------------------------------------------------

    def list(self, labels: dict[str, str]) -> list[Sandbox]:
        return list(self.sandboxes(labels))

    def sandboxes(self, labels: dict[str, str] | None = None, *, expired: bool = False) -> builtins.list[DockerSandbox]:
        """Containers of this plugin carrying all `labels` (stopped ones too); only expired ones if asked."""
        found = []
        for container in self.client.containers.list(all=True, filters={"label": label_filter(labels or {})}):
            own = dict(container.labels or {})
            if expired and not is_expired(own):
                continue
            found.append(DockerSandbox.from_container(self, container))
        return found

    def prune(self, labels: dict[str, str]) -> builtins.list[str]:
        """The contract's prune: remove everything carrying `labels` but a live run's; returns the sandboxes
        (containers) removed."""
        return self.prune_objects(labels)["containers"]

    def kept_objects(self, labels: dict[str, str] | None = None, *, expired: bool = False) -> dict[str, str]:
        """The sandboxes carrying `labels` that prune leaves alone, name → why (their owner process still runs)."""
        return {s.id: why for s in self.sandboxes(labels, expired=expired) if (why := live_owner(s.labels))}

    def prune_objects(
        self, labels: dict[str, str] | None = None, *, expired: bool = False
    ) -> dict[str, builtins.list[str]]:
        """Remove every container, network and volume of this plugin carrying all `labels`.

        With `expired=True` only objects whose `agentenv.deadline` has passed are removed. Objects whose
        owner process still runs are kept (`kept_objects` names them). Returns the names removed, by kind.
        Objects without `agentenv.managed=true` are never touched.
        """
        from docker.errors import NotFound

        def leftover(object_labels: dict[str, str]) -> bool:
            return (not expired or is_expired(object_labels)) and live_owner(object_labels) is None

        filters = {"label": label_filter(labels or {})}
        removed: dict[str, builtins.list[str]] = {"containers": [], "networks": [], "volumes": []}
        for container in self.client.containers.list(all=True, filters=filters):
            if leftover(dict(container.labels or {})):
                with contextlib.suppress(NotFound):
                    container.remove(force=True, v=True)
                    removed["containers"].append(container.name)
        for network in self.client.networks.list(filters=filters):
            if leftover(dict(network.attrs.get("Labels") or {})):
                with contextlib.suppress(NotFound):
                    network.remove()
                    removed["networks"].append(network.name)
        for volume in self.client.volumes.list(filters=filters):
            if leftover(dict(volume.attrs.get("Labels") or {})):
                with contextlib.suppress(NotFound):
                    volume.remove(force=True)
                    removed["volumes"].append(volume.name)
        return removed

    def remove_sandbox(self, name: str) -> None:
        """Remove sandbox `name`'s container, network and volumes; missing ones are fine."""
        from docker.errors import NotFound

        with contextlib.suppress(NotFound):
            self.client.containers.get(name).remove(force=True, v=True)
        with contextlib.suppress(NotFound):
            self.client.networks.get(name).remove()
        for volume in self.client.volumes.list(filters={"label": label_filter({SANDBOX: name})}):
            with contextlib.suppress(NotFound):
                volume.remove(force=True)
