"""The `e2b` sandbox provider: E2B sandboxes (Firecracker microVMs) through the official `e2b` SDK.

Mapping of the contract onto E2B:

- `create` → `Sandbox.create(template, timeout, envs, metadata, network)`. `image` names an E2B *template*
  (default `base`); an unknown template is refused. `ttl_seconds` is the sandbox timeout, after which E2B
  kills it. `labels` are E2B metadata, plus `agentenv.managed=true` so that `list` only finds our sandboxes.
- `exec` → `commands.run(shlex.join(command))` (envd runs it with `bash -l -c`), in the user's home unless
  `workdir` is set; a command past its timeout is killed (SIGKILL through envd) and reports exit code 124.
- `put_file`/`get_file` → `files.write`/`files.read` (envd's `/files`); relative paths resolve in the same
  folder commands run in.
- `url(port)` → `https://` + `get_host(port)`: E2B's edge exposes every port of a running sandbox.
- `status` → `Sandbox.get_info` (running / paused → stopped / gone → missing, or stopped when its
  timeout has passed); `teardown` → `Sandbox.kill`; `list(labels)` → `Sandbox.list(query=metadata)`.
- `network` allowlists are enforced by E2B's egress firewall: `allow_out=<hosts>`, `deny_out=0.0.0.0/0`.
  `loopback` is `deny_out=0.0.0.0/0` with `allow_public_traffic=False` (its URLs need the sandbox's access
  token) and no `ports`; `none` is refused (a sandbox always has its own loopback).
- `cpu`, `memory_mb` and `disk_mb` are fixed per E2B template, so a spec setting them is refused.

Modes: E2B sandboxes are VMs, so `vm` specs are honoured. `container` specs are honoured too: a microVM
gives everything a container spec asks of a sandbox (its own filesystem from an image — here a template —
processes and network) with stronger isolation. The `e2b` SDK is imported only inside the functions that use it.
"""

from __future__ import annotations

import builtins
import contextlib
import ipaddress
import posixpath
import re
import shlex
import time
from typing import TYPE_CHECKING, Any, Literal

from agentenv.contracts import ExecResult, Sandbox, SandboxProvider, SandboxSpec, SpecRefused
from pydantic import BaseModel

from agentenv_e2b.settings import DIST, MANAGED, SETTINGS_TABLE, E2BSettings

if TYPE_CHECKING:
    import e2b

TIMEOUT_EXIT_CODE = 124
"""Exit code of a command killed for running past its timeout (as coreutils `timeout` reports it)."""

_HOST = re.compile(r"^(\*\.)?([A-Za-z0-9-]{1,63}\.)*[A-Za-z0-9-]{1,63}$")


def _allow_entry_ok(entry: str) -> bool:
    """Whether E2B's `allow_out` takes `entry`: an IP address, a CIDR block, a host name or `*.domain`."""
    with contextlib.suppress(ValueError):
        ipaddress.ip_network(entry, strict=False)
        return True
    return bool(_HOST.match(entry))


class E2BSandbox(Sandbox):
    """One E2B sandbox. Made by `create` (connected) or by `list` (connected on first use)."""

    def __init__(
        self,
        provider: E2BProvider,
        sandbox_id: str,
        labels: dict[str, str],
        *,
        deadline: float | None,
        sdk: e2b.Sandbox | None = None,
    ) -> None:
        self.id = sandbox_id
        self.labels = dict(labels)
        self.provider = provider
        self.deadline = deadline
        self._sdk = sdk
        self._torn_down = False

    def __repr__(self) -> str:
        return f"<E2BSandbox {self.id}>"

    @property
    def sdk(self) -> e2b.Sandbox:
        """The SDK's sandbox object (connecting to a listed sandbox on first use)."""
        if self._torn_down:
            raise RuntimeError(f"e2b sandbox {self.id} was torn down; create a new sandbox")
        if self._sdk is None:
            from e2b import Sandbox as SdkSandbox

            self._sdk = SdkSandbox.connect(self.id, **self.provider.api_params())
        return self._sdk

    def _path(self, path: str) -> str:
        if not path or path in (".", "/"):
            raise ValueError(f"path {path!r} names a folder; name a file")
        workdir = self.provider.settings.workdir
        return posixpath.join(workdir, path) if workdir and not path.startswith("/") else path

    # -- the Sandbox contract ---------------------------------------------------------------------

    def exec(self, command: list[str], *, timeout: float | None = None) -> ExecResult:
        """Run `command` to completion; past `timeout` seconds kill it and report exit code 124."""
        from e2b.exceptions import SandboxNotRunningException, SandboxUnreachableException, TimeoutException
        from e2b.sandbox.commands.command_handle import CommandExitException

        if not command or not all(isinstance(part, str) for part in command):
            raise ValueError(f"command must be a non-empty list of strings, got {command!r}")
        out: list[str] = []
        err: list[str] = []
        settings = self.provider.settings
        handle = self.sdk.commands.run(
            shlex.join(command),
            background=True,
            cwd=settings.workdir,
            user=settings.user,
            timeout=timeout or 0,  # 0: no limit in the SDK
        )
        try:
            result = handle.wait(on_stdout=out.append, on_stderr=err.append)
            code = result.exit_code
        except CommandExitException as exc:  # a non-zero exit is a result here, not an error
            code = exc.exit_code
        except (SandboxNotRunningException, SandboxUnreachableException):
            raise
        except TimeoutException:
            with contextlib.suppress(Exception):
                handle.kill()
            note = f"\n[e2b] timed out after {timeout}s; killed process {handle.pid}\n"
            return ExecResult(exit_code=TIMEOUT_EXIT_CODE, stdout="".join(out), stderr="".join(err) + note)
        return ExecResult(exit_code=code, stdout="".join(out), stderr="".join(err))

    def put_file(self, path: str, data: bytes) -> None:
        self.sdk.files.write(self._path(path), bytes(data), user=self.provider.settings.user, use_octet_stream=True)

    def get_file(self, path: str) -> bytes:
        from e2b.exceptions import FileNotFoundException

        try:
            return bytes(self.sdk.files.read(self._path(path), format="bytes", user=self.provider.settings.user))
        except FileNotFoundException as exc:
            raise FileNotFoundError(f"e2b sandbox {self.id}: no file {path!r} ({exc})") from exc

    def url(self, port: int) -> str:
        """E2B's edge serves every port of a running sandbox at `<port>-<id>.<domain>`."""
        return f"{self.provider.settings.url_scheme}://{self.sdk.get_host(port)}"

    def status(self) -> Literal["running", "stopped", "missing"]:
        """`missing` once torn down; `stopped` when paused or gone after its timeout; else `running`."""
        from e2b import Sandbox as SdkSandbox
        from e2b.exceptions import NotFoundException

        if self._torn_down:
            return "missing"
        try:
            info = SdkSandbox.get_info(self.id, **self.provider.api_params())
        except NotFoundException:
            expired = self.deadline is not None and time.time() >= self.deadline
            return "stopped" if expired else "missing"
        state = getattr(info.state, "value", info.state)
        return "running" if state == "running" else "stopped"

    def teardown(self) -> None:
        """Kill the sandbox (E2B removes everything in it). Calling it again is harmless."""
        from e2b import Sandbox as SdkSandbox

        if self._torn_down:
            return
        SdkSandbox.kill(self.id, **self.provider.api_params())  # False when already gone: fine
        self._torn_down = True


class E2BProvider(SandboxProvider):
    """Sandboxes that are E2B microVMs, created from E2B templates."""

    name = "e2b"
    description = "E2B cloud sandboxes (Firecracker microVMs from templates) through the e2b SDK."
    modes = frozenset({"vm", "container"})
    Settings = E2BSettings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        self.settings: E2BSettings = E2BSettings.load(settings)

    # -- connection -------------------------------------------------------------------------------

    def api_key(self) -> str | None:
        """The API key with an `env:` reference resolved; None when the variable is not set."""
        from agentenv.config import ConfigError, resolve

        try:
            value = resolve(self.settings.api_key, field=f"plugins.{DIST}.api_key", file=None)
        except ConfigError:
            return None
        return value or None

    def api_params(self) -> dict[str, Any]:
        """The SDK's per-call connection options (`ApiParams`) from the settings."""
        params: dict[str, Any] = {"api_key": self.api_key()}
        for key in ("domain", "api_url", "sandbox_url", "request_timeout"):
            value = getattr(self.settings, key)
            if value is not None:
                params[key] = value
        return params

    def available(self) -> tuple[bool, str]:
        import importlib.util

        if importlib.util.find_spec("e2b") is None:
            return False, "the e2b SDK is not installed (pip install agentenv-e2b)"
        if self.api_key() is None:
            return False, f"no E2B API key: export E2B_API_KEY or set api_key under {SETTINGS_TABLE}"
        return True, ""

    # -- specs ------------------------------------------------------------------------------------

    def refusals(self, spec: SandboxSpec) -> list[str]:
        """Why `spec` cannot be honoured, one reason per field (empty when it can)."""
        reasons = []
        if spec.mode not in self.modes:
            reasons.append(f"mode={spec.mode!r}: e2b sandboxes are microVMs; use mode 'vm' or 'container'")
        for field in ("cpu", "memory_mb", "disk_mb"):
            value = getattr(spec, field)
            if value is not None:
                reasons.append(
                    f"{field}={value!r}: E2B fixes CPU, memory and disk per template, not per sandbox; drop the "
                    "field and build a template with the resources you need (`e2b template build --cpu-count "
                    "--memory-mb`), then name it in `image`"
                )
        if spec.network.mode == "allowlist":
            bad = [entry for entry in spec.network.allow if not _allow_entry_ok(entry)]
            if bad:
                reasons.append(
                    f"network.allow={bad!r}: E2B's egress allowlist takes IP addresses, CIDR blocks, host names "
                    "and '*.domain' wildcards only (no schemes, ports or paths)"
                )
        if spec.network.mode == "none":
            reasons.append(
                "network.mode='none': an E2B sandbox always has its own loopback; use 'loopback' (no egress, "
                "its URLs closed to the public)"
            )
        if spec.network.mode == "loopback" and spec.ports:
            reasons.append(
                f"ports={spec.ports!r}: with network.mode='loopback' nothing outside the sandbox reaches its ports; "
                "drop `ports` or allow the network"
            )
        if spec.ttl_seconds is not None and spec.ttl_seconds <= 0:
            reasons.append(f"ttl_seconds={spec.ttl_seconds!r}: must be a positive number of seconds")
        return reasons

    def create(self, spec: SandboxSpec) -> E2BSandbox:
        from e2b import Sandbox as SdkSandbox
        from e2b.exceptions import SandboxException

        reasons = self.refusals(spec)
        if reasons:
            raise SpecRefused("e2b sandbox cannot honour the spec: " + "; ".join(reasons))
        template = spec.image or self.settings.template
        timeout = spec.ttl_seconds or self.settings.default_ttl_seconds
        network: dict[str, Any] | None = None
        if spec.network.mode == "allowlist":  # allow entries win over deny entries in E2B's firewall
            network = {"allow_out": list(spec.network.allow), "deny_out": ["0.0.0.0/0"]}
        elif spec.network.mode == "loopback":  # no egress, and its URLs answer only authenticated requests
            network = {"deny_out": ["0.0.0.0/0"], "allow_public_traffic": False}
        metadata = {**spec.labels, MANAGED: "true"}
        started = time.time()
        try:
            sdk = SdkSandbox.create(
                template=template,
                timeout=timeout,
                envs=dict(spec.env) or None,
                metadata=metadata,
                network=network,  # type: ignore[arg-type]
                **self.api_params(),
            )
        except SandboxException as exc:
            if getattr(exc, "status_code", None) == 404:
                raise SpecRefused(
                    f"image={template!r}: E2B has no template of that name ({exc}); name an E2B template "
                    "(not a docker image) in `image`, or set `template` under " + SETTINGS_TABLE
                ) from exc
            raise
        effective = timeout or SdkSandbox.default_sandbox_timeout
        sandbox = E2BSandbox(self, sdk.sandbox_id, metadata, deadline=started + effective, sdk=sdk)
        try:
            self._prepare(sandbox, spec)
        except BaseException:
            sandbox.teardown()
            raise
        return sandbox

    def _prepare(self, sandbox: E2BSandbox, spec: SandboxSpec) -> None:
        """Make the working folder (when set) and start the spec's command in the background."""
        settings = self.settings
        if settings.workdir:
            sandbox.sdk.files.make_dir(settings.workdir, user=settings.user)  # False when it exists: fine
        if spec.command:
            handle = sandbox.sdk.commands.run(
                shlex.join(spec.command), background=True, cwd=settings.workdir, user=settings.user, timeout=0
            )
            handle.disconnect()  # the command keeps running in the sandbox

    def list(self, labels: dict[str, str]) -> builtins.list[Sandbox]:
        """Running and paused sandboxes of this provider carrying all of `labels`."""
        from e2b import Sandbox as SdkSandbox
        from e2b.sandbox.sandbox_api import SandboxQuery

        paginator = SdkSandbox.list(query=SandboxQuery(metadata={**labels, MANAGED: "true"}), **self.api_params())
        found: builtins.list[Sandbox] = []
        while paginator.has_next:
            for info in paginator.next_items():
                end = info.end_at.timestamp() if getattr(info, "end_at", None) else None
                found.append(E2BSandbox(self, info.sandbox_id, dict(info.metadata or {}), deadline=end))
        return found
