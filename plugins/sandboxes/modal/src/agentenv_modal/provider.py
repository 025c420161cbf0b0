"""The `modal` and `modal-vm` sandbox providers: Modal Sandboxes driven through the official `modal` SDK.

`modal` creates ordinary Modal Sandboxes (gVisor containers, Modal's default runtime). `modal-vm` creates them
with `runtime="vm"`, the SDK's VM-isolated runtime (`modal.types.SandboxRuntime = Literal["gvisor", "vm"]`);
it accepts `mode="vm"` and also `mode="container"` specs, since a VM is at least as isolated as a container.

How the spec maps onto `modal.Sandbox.create`:
- `image`: a registry tag (`modal.Image.from_registry`) or an image id `im-…` (`modal.Image.from_id`);
  None means `default_image` from the settings, else Modal's `debian_slim`.
- `command`: the sandbox's entrypoint. Modal ends a sandbox when its entrypoint exits. With no command the
  provider runs `sleep <ttl>` (Modal would otherwise run the image's CMD, which for most registry images
  exits at once), so the sandbox stays up until its time to live.
- `env`: an in-memory `modal.Secret.from_dict`, so values never land in the image definition.
- `cpu`, `memory_mb`: request and hard limit both (`cpu=(c, c)`, `memory=(m, m)`). `disk_mb` is refused:
  the SDK has no disk limit for sandboxes.
- `ports`: `encrypted_ports` (HTTPS tunnels, the default) or `unencrypted_ports` (raw TCP) by setting;
  `url(port)` reads the tunnel.
- `ttl_seconds`: `timeout`; a spec without one gets `default_ttl_seconds` (Modal requires a lifetime).
- `network`: `allowlist` becomes `outbound_cidr_allowlist` (IP addresses and CIDRs) plus
  `outbound_domain_allowlist` (host names, `*.` wildcards); an empty allowlist blocks all egress while keeping
  tunnels. Entries Modal cannot enforce (ports, URLs, paths) are refused. `loopback` is `block_network=True`
  (no network outside the sandbox, no tunnels, so no `ports`); `none` is refused.
- `labels`: Modal sandbox tags, so `list(labels)` is `modal.Sandbox.list(app_id=…, tags=labels)`; the provider
  adds the reserved tag `agentenv.provider` so `modal` and `modal-vm` list only their own sandboxes.

Every sandbox belongs to one Modal App (`app_name`, created on first use). The SDK is imported only inside
functions: importing this module costs nothing until a sandbox is made.
"""

from __future__ import annotations

import contextlib
import ipaddress
import math
import re
import threading
import time
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any, Literal

from agentenv.contracts import ExecResult, Sandbox, SandboxProvider, SandboxSpec, SpecRefused
from pydantic import BaseModel, ConfigDict, Field

TIMEOUT_EXIT_CODE = 124
"""Exit code of a command killed for running past its timeout (as coreutils `timeout` reports it)."""

PROVIDER_TAG = "agentenv.provider"
"""Reserved tag naming the provider that made a sandbox; hidden from `labels`."""

_SETTINGS_TABLE = "[plugins.agentenv-modal]"
_HOST = re.compile(r"^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$", re.I)


class ModalSettings(BaseModel):
    """Settings of the `modal` and `modal-vm` providers. Credentials come from Modal's own configuration
    (`MODAL_TOKEN_ID` / `MODAL_TOKEN_SECRET`, or the profile written by `modal token new`)."""

    model_config = ConfigDict(extra="forbid")

    app_name: str = Field("agentenv", description="Modal App every sandbox belongs to (created if missing).")
    environment: str | None = Field(None, description="Modal environment; None = the configured default.")
    default_image: str | None = Field(
        None, description="Registry tag or `im-…` id used when a spec has no image; None = Modal's debian_slim."
    )
    workdir: str = Field("/root", description="Absolute working folder of commands and of relative file paths.")
    default_ttl_seconds: int = Field(3600, gt=0, description="Lifetime of a sandbox whose spec sets no ttl.")
    tunnels: Literal["encrypted", "unencrypted"] = Field(
        "encrypted", description="`encrypted`: https:// tunnel URLs; `unencrypted`: http:// over raw TCP tunnels."
    )
    tunnel_timeout: int = Field(50, gt=0, description="Seconds `url()` waits for tunnel metadata.")
    region: str | None = Field(None, description="Modal region to run in; None = Modal's choice.")


_clients: dict[tuple[str, str], Any] = {}
_clients_lock = threading.Lock()


def _credentials() -> tuple[str, str] | None:
    from modal.config import config

    token_id, token_secret = config.get("token_id"), config.get("token_secret")
    return (token_id, token_secret) if token_id and token_secret else None


def _client() -> Any:
    """A `modal.Client` for the configured server and token, shared per (server, token) in this process.

    An explicit client (rather than `Client.from_env`'s process-wide singleton) follows `MODAL_SERVER_URL`
    and the token as they are when the provider is first used.
    """
    import modal
    from modal.config import config

    credentials = _credentials()
    if credentials is None:
        raise RuntimeError("no Modal credentials: set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, or run `modal token new`")
    key = (str(config.get("server_url")), credentials[0])
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = modal.Client.from_credentials(*credentials)
        return client


def _split_allowlist(hosts: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(CIDRs, domains, refusals) for a network allowlist."""
    cidrs, domains, bad = [], [], []
    for entry in hosts:
        try:
            cidrs.append(str(ipaddress.ip_network(entry, strict=False)))
            continue
        except ValueError:
            pass
        if _HOST.match(entry):
            domains.append(entry.lower())
        else:
            bad.append(entry)
    return cidrs, domains, bad


class ModalSandbox(Sandbox):
    """One Modal Sandbox, through a `modal.Sandbox` handle."""

    def __init__(self, handle: Any, labels: dict[str, str], settings: ModalSettings) -> None:
        self.id: str = handle.object_id
        self.labels = {k: v for k, v in labels.items() if k != PROVIDER_TAG}
        self.handle = handle
        self.settings = settings
        self._torn_down = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<ModalSandbox {self.id}>"

    def _path(self, path: str) -> str:
        """`path` in the sandbox: relative paths are taken from the working folder, `..` is refused."""
        pure = PurePosixPath(path.replace("\\", "/"))
        if ".." in pure.parts:
            raise ValueError(f"path {path!r} contains '..'; name the file directly")
        full = pure if pure.is_absolute() else PurePosixPath(self.settings.workdir) / pure
        if full == PurePosixPath(self.settings.workdir) or str(full) == "/":
            raise ValueError(f"path {path!r} names a folder; name a file inside it")
        return str(full)

    def _require_running(self) -> None:
        if self._torn_down:
            raise RuntimeError(f"Modal sandbox {self.id} was torn down; create a new sandbox")

    @contextlib.contextmanager
    def _ended_is_runtime_error(self) -> Iterator[None]:
        """Turn the SDK's errors for a finished sandbox into one clear RuntimeError saying how it ended."""
        from modal.exception import ClientClosed, ConflictError, NotFoundError, SandboxTerminatedError

        try:
            yield
        except (ConflictError, NotFoundError, SandboxTerminatedError, ClientClosed) as exc:
            status = self.status()
            if status == "running":
                raise
            why = "past its ttl or its command exited" if status == "stopped" else "terminated"
            raise RuntimeError(f"Modal sandbox {self.id} is {status} ({why}); create a new sandbox") from exc

    def exec(self, command: list[str], *, timeout: float | None = None) -> ExecResult:
        """Run `command` to completion in the working folder; past `timeout` it is killed (exit code 124)."""
        self._require_running()
        if not command or not all(isinstance(part, str) for part in command):
            raise ValueError(f"command must be a non-empty list of strings, got {command!r}")
        seconds = None if timeout is None else max(1, math.ceil(timeout))
        started = time.monotonic()
        with self._ended_is_runtime_error():
            proc = self.handle.exec(*command, timeout=seconds, text=False)
            out: bytes = proc.stdout.read()
            err: bytes = proc.stderr.read()
            code: int = proc.wait()
        note = ""
        # The SDK reports -1 when its exec deadline passes; a kill at the deadline shows as 128 + signal.
        if seconds is not None and (code == -1 or (code > 128 and time.monotonic() - started >= seconds)):
            code = TIMEOUT_EXIT_CODE
            note = f"\n[modal] timed out after {timeout}s\n"
        return ExecResult(
            exit_code=code,
            stdout=out.decode("utf-8", errors="replace"),
            stderr=err.decode("utf-8", errors="replace") + note,
        )

    def put_file(self, path: str, data: bytes) -> None:
        """Write through the SDK's filesystem API (parent folders are created)."""
        self._require_running()
        target = self._path(path)
        with self._ended_is_runtime_error():
            self.handle.filesystem.write_bytes(data, target)

    def get_file(self, path: str) -> bytes:
        self._require_running()
        from modal.exception import SandboxFilesystemNotFoundError

        target = self._path(path)
        try:
            with self._ended_is_runtime_error():
                data: bytes = self.handle.filesystem.read_bytes(target)
        except SandboxFilesystemNotFoundError as exc:
            raise FileNotFoundError(f"{target} does not exist in Modal sandbox {self.id}") from exc
        return data

    def url(self, port: int) -> str:
        """The tunnel URL of `port`: https://… (encrypted tunnels) or http://host:port (unencrypted)."""
        self._require_running()
        tunnels = self.handle.tunnels(timeout=self.settings.tunnel_timeout)
        tunnel = tunnels.get(port)
        if tunnel is None:
            raise ValueError(
                f"port {port} has no tunnel in Modal sandbox {self.id}; list it in the spec's `ports` "
                f"(tunnelled: {sorted(tunnels)})"
            )
        if self.settings.tunnels == "unencrypted":
            host, tcp_port = tunnel.tcp_socket
            return f"http://{host}:{tcp_port}"
        return str(tunnel.url)

    def status(self) -> Literal["running", "stopped", "missing"]:
        """`running` until the sandbox finishes; `missing` once terminated; `stopped` past its ttl (or when its
        entrypoint command exited)."""
        if self._torn_down:
            return "missing"
        from modal.exception import NotFoundError, SandboxTerminatedError, SandboxTimeoutError

        try:
            if self.handle.poll() is None:
                return "running"
            self.handle.wait(raise_on_termination=True)  # finished: returns at once, raising how it ended
        except SandboxTerminatedError:
            return "missing"
        except SandboxTimeoutError:
            return "stopped"
        except NotFoundError:
            return "missing"
        return "stopped"

    def teardown(self) -> None:
        """Terminate the sandbox (Modal discards its file system) and close the connection. Idempotent."""
        with self._lock:
            if self._torn_down:
                return
            from modal.exception import NotFoundError, SandboxTimeoutError

            # waiting makes the end final: processes are gone and tunnels closed once this returns
            with contextlib.suppress(NotFoundError, SandboxTimeoutError):  # gone already / ended by its ttl
                self.handle.terminate(wait=True)
            self._torn_down = True
            self.handle.detach()


class ModalProvider(SandboxProvider):
    """Modal Sandboxes: gVisor containers in Modal's cloud, driven through the `modal` SDK."""

    name = "modal"
    description = "Modal Sandboxes (gVisor containers in Modal's cloud), through the official modal SDK."
    modes = frozenset({"container"})
    Settings = ModalSettings
    runtime: str | None = None
    """`modal.Sandbox.create(runtime=...)`; None lets Modal choose (gVisor)."""

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        if not isinstance(settings, ModalSettings):
            raw = settings.model_dump() if isinstance(settings, BaseModel) else settings or {}
            settings = ModalSettings.model_validate(raw)
        self.settings: ModalSettings = settings
        if not self.settings.workdir.startswith("/"):
            raise ValueError(
                f"workdir={self.settings.workdir!r} under {_SETTINGS_TABLE} must be an absolute path, e.g. '/root'"
            )
        self._app: Any = None
        self._app_lock = threading.Lock()

    def available(self) -> tuple[bool, str]:
        try:
            import modal  # noqa: F401
        except ImportError as exc:
            return False, f"the modal SDK is not importable ({exc}); install agentenv-modal"
        if _credentials() is None:
            return False, "no Modal credentials: set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, or run `modal token new`"
        return True, ""

    # -- spec ------------------------------------------------------------------------------------

    def refusals(self, spec: SandboxSpec) -> list[str]:
        """Why `spec` cannot be honoured, one reason per field (empty when it can)."""
        reasons = []
        if spec.mode not in self.modes:
            reasons.append(
                f"mode={spec.mode!r}: the {self.name!r} provider runs gVisor containers; "
                "use the 'modal-vm' provider for VM isolation"
            )
        if spec.disk_mb is not None:
            reasons.append(
                f"disk_mb={spec.disk_mb!r}: Modal sandboxes take no disk limit (the SDK has no such option); "
                "drop the field"
            )
        if spec.network.mode == "allowlist":
            _, _, bad = _split_allowlist(spec.network.allow)
            if bad:
                reasons.append(
                    f"network.allow={bad!r}: Modal enforces IP addresses, CIDRs and host names (`*.` wildcards) "
                    "only, not ports, URLs or paths; list bare hosts"
                )
        if spec.network.mode == "none":
            reasons.append(
                "network.mode='none': Modal has no setting that removes a sandbox's own loopback; use 'loopback' "
                "(block_network: no network outside the sandbox)"
            )
        if spec.network.mode == "loopback" and spec.ports:
            reasons.append(
                f"ports={spec.ports!r}: Modal opens no tunnel to a sandbox whose network is blocked "
                "(network.mode='loopback'); drop `ports` or allow the network"
            )
        if PROVIDER_TAG in spec.labels:
            reasons.append(f"labels[{PROVIDER_TAG!r}]: this label is reserved by agentenv-modal; rename it")
        for key, value in spec.env.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
                reasons.append(f"env[{key!r}]: Modal accepts only letters, digits and underscores in names")
            elif not isinstance(value, str):
                reasons.append(f"env[{key!r}]: values must be strings")
        return reasons

    def _image(self, tag: str | None) -> Any:
        import modal

        tag = tag or self.settings.default_image
        if tag is None:
            return modal.Image.debian_slim()
        if tag.startswith("im-"):
            return modal.Image.from_id(tag, client=_client())
        return modal.Image.from_registry(tag)

    def _get_app(self) -> Any:
        with self._app_lock:
            if self._app is None:
                import modal

                self._app = modal.App.lookup(
                    self.settings.app_name,
                    create_if_missing=True,
                    environment_name=self.settings.environment,
                    client=_client(),
                )
            return self._app

    def create(self, spec: SandboxSpec) -> ModalSandbox:
        reasons = self.refusals(spec)
        if reasons:
            raise SpecRefused(f"{self.name} sandbox cannot honour the spec: " + "; ".join(reasons))
        import modal
        from modal.exception import InvalidError

        kwargs: dict[str, Any] = {}
        if spec.cpu is not None:
            kwargs["cpu"] = (spec.cpu, spec.cpu)
        if spec.memory_mb is not None:
            kwargs["memory"] = (spec.memory_mb, spec.memory_mb)
        if spec.network.mode == "allowlist":
            cidrs, domains, _ = _split_allowlist(spec.network.allow)
            kwargs["outbound_cidr_allowlist"] = cidrs
            if domains:
                kwargs["outbound_domain_allowlist"] = domains
        elif spec.network.mode == "loopback":
            kwargs["block_network"] = True
        if spec.ports:
            key = "unencrypted_ports" if self.settings.tunnels == "unencrypted" else "encrypted_ports"
            kwargs[key] = list(spec.ports)
        if self.runtime is not None:
            kwargs["runtime"] = self.runtime
        if self.settings.region is not None:
            kwargs["region"] = self.settings.region
        tags = {**spec.labels, PROVIDER_TAG: self.name}
        ttl = spec.ttl_seconds or self.settings.default_ttl_seconds
        # Without arguments Modal runs the image's CMD, which exits at once for most registry images
        # (`python:3.11-slim` runs `python3`); an explicit sleep keeps the sandbox up for its lifetime.
        entrypoint = spec.command or ["sleep", str(ttl)]
        try:
            handle = modal.Sandbox.create(
                *entrypoint,
                app=self._get_app(),
                image=self._image(spec.image),
                secrets=[modal.Secret.from_dict(dict(spec.env))] if spec.env else [],
                workdir=self.settings.workdir,
                timeout=ttl,
                tags=tags,
                client=_client(),
                **kwargs,
            )
        except InvalidError as exc:  # what the SDK or Modal's server rejects about the request
            raise SpecRefused(f"{self.name} sandbox cannot honour the spec: Modal refused it: {exc}") from exc
        return ModalSandbox(handle, tags, self.settings)

    def list(self, labels: dict[str, str]) -> list[Sandbox]:
        """Running sandboxes of this provider's App carrying all of `labels` (Modal lists only live ones)."""
        import modal

        found: list[Sandbox] = []
        wanted = {**labels, PROVIDER_TAG: self.name}
        for handle in modal.Sandbox.list(app_id=self._get_app().app_id, tags=wanted, client=_client()):
            tags = handle.get_tags()
            if all(tags.get(k) == v for k, v in wanted.items()):  # the server filters too; make sure
                found.append(ModalSandbox(handle, tags, self.settings))
        return found


class ModalVmProvider(ModalProvider):
    """Modal Sandboxes in Modal's VM runtime (`runtime="vm"`): VM isolation instead of gVisor."""

    name = "modal-vm"
    description = "Modal Sandboxes in Modal's VM runtime (runtime='vm'), through the official modal SDK."
    modes = frozenset({"container", "vm"})
    runtime = "vm"
