"""What a `deploy_env` step asks for (its settings) and, for a served world, the plan that starts it: the files,
arguments and tokens of `agentenv serve`. Shared by `deploy` (in process) and `serving` (in a sandbox), which
import it and not each other.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import secrets
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentenv.contracts import StepFailed
from agentenv_runtime import Env, World, WorldError, split_names
from pydantic import Field, ValidationError, field_validator

from agentenv_steps._common import StepSettings, StrList, validation_message

INLINE = "inline"
WORLD_DIR = "world"
"""Folder in the sandbox for the role file, artifacts and settings the server reads at start."""


class RoleSpec(StepSettings):
    tools: list[str] = Field(default_factory=lambda: ["*"], description='Tool names the role may call; ["*"] = all.')
    deny: list[str] = Field(default_factory=list, description="Tool names refused even when `tools` allows them.")


DEFAULT_START = "2026-01-01T09:00:00Z"


class DeployEnvSettings(StepSettings):
    envs: list[str] = Field(description='Env names, as a list or a comma-separated string ("slack,email").')
    artifacts: StrList = Field(
        default_factory=list,
        description="Artifact specs: NAME, ENV=NAME_OR_PATH (paths relative to the bundle), store:KEY, ENV=store:KEY.",
    )
    roles: dict[str, RoleSpec] = Field(
        default_factory=dict, description="Role → {tools, deny}; the `default` role sees every tool unless redefined."
    )
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Env name → that env's settings.")
    mcp: dict[str, str | dict[str, Any]] = Field(
        default_factory=dict,
        description="Env name → an MCP server that joins the world as that env, started with it and stopped on "
        "teardown: a command line, or {command | url | image, args, env, reset_tool, start_timeout} "
        "(needs agentenv-mcp).",
    )
    sandbox: str = Field(
        INLINE,
        min_length=1,
        description="Where the world runs: `inline` = in process (default; `agentenv run --sandbox` overrides it), "
        "or any sandbox provider serving it over MCP (`process`, `docker`, …), or a fallback chain (`docker,process`).",
    )
    rewindable: bool = Field(
        False,
        description="Keep a checkpoint after every tool call, so rewind_env can put the world back to any of them "
        "(in process only; each call then serializes what it changed).",
    )
    ready_timeout: float = Field(
        120.0, gt=0, description="Seconds a served world may take to answer its Environment Card before the step fails."
    )
    start: str = Field(
        DEFAULT_START,
        description="The virtual time the world starts at (frozen until sync_env_clock says otherwise), so every "
        "timestamp the apps write, and so the trajectory digest, is the same on every run.",
    )

    @field_validator("envs", mode="before")
    @classmethod
    def _split_envs(cls, value: Any) -> Any:
        if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return split_names(value)
        return value


def _make_envs(settings: DeployEnvSettings, classes: dict[str, type[Env]]) -> list[Env]:
    """The envs, made from their settings; one that cannot start (a website that never becomes healthy, say) fails
    the step naming it, and the ones made before it are closed."""
    envs: list[Env] = []
    try:
        for name, cls in classes.items():
            try:
                envs.append(cls(settings.settings.get(name)))
            except ValidationError as exc:
                raise StepFailed(f"field `settings.{name}`: {validation_message(exc)}") from None
            except Exception as exc:
                raise StepFailed(f"field `settings.{name}`: {exc}") from None
    except StepFailed:
        close_envs(envs)
        raise
    return envs


def start_envs(world: World) -> None:
    """Start what the world's envs run outside its state (a website's server), once it is deployed: an env with a
    `start()` method has it called. One that fails closes them all and fails the step naming its settings."""
    for env in world.envs.values():
        start = getattr(env, "start", None)
        if not callable(start):
            continue
        try:
            start()
        except Exception as exc:
            close_envs(world.envs.values())
            raise StepFailed(f"field `settings.{env.name}`: {exc}") from None


def close_envs(envs: Iterable[Env]) -> None:
    """Close every env that holds something outside the world's state (a started site, a browser context, an MCP
    server): what a deployed world's teardown does. One that fails to close does not keep the others open."""
    for env in envs:
        close = getattr(env, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()


def _roles(settings: DeployEnvSettings) -> dict[str, Any]:
    return {role: spec.model_dump() for role, spec in settings.roles.items()}


def _check_roles(world: World) -> None:
    try:
        world.check_roles()
    except WorldError as exc:
        field, _, problem = str(exc).partition(": ")
        raise StepFailed(f"field `{field}`: {problem}") from None


# ---- served worlds (serving.py starts them) ---------------------------------------------------------
WAIT_SCRIPT = f'while [ ! -e {WORLD_DIR}/ready ]; do sleep 0.02; done; exec "$@"'
"""The command waits for the files (role file, artifacts) that can only be put once the sandbox exists."""
LAUNCH_FILE = f"{WORLD_DIR}/serve.sh"
WAIT_AND_LAUNCH = f"while [ ! -e {WORLD_DIR}/ready ]; do sleep 0.02; done; exec sh {LAUNCH_FILE}"
"""What any provider's sandbox runs: wait for the files, then the launch script, written once the sandbox
has shown which Python in it runs `agentenv serve` (so the command names no interpreter of its own)."""


def _artifact_file(artifact: Any) -> tuple[bytes, str]:
    """The artifact's original bytes when its file is at hand (same sha256 on the server), else re-encoded."""
    source = Path(artifact.source) if artifact.source and not artifact.source.startswith("<") else None
    if source is not None and source.is_file():
        raw = source.read_bytes()
        plain = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        if hashlib.sha256(plain).hexdigest() == artifact.sha256:
            return raw, ".json.gz" if plain is not raw else ".json"
    return artifact.to_bytes(), ".json"


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


class ServePlan:
    """The files, command arguments and environment that start `agentenv serve` for one deploy_env step."""

    def __init__(
        self, settings: DeployEnvSettings, classes: dict[str, type[Env]], pairs: list[tuple[str, Any]], seed: int
    ):
        roles = _roles(settings)
        self.tokens = {role: secrets.token_urlsafe(24) for role in dict.fromkeys(["default", "control", *roles])}
        names = {role: f"AGENTENV_WORLD_TOKEN_{index}" for index, role in enumerate(self.tokens)}
        self.env = {names[role]: token for role, token in self.tokens.items()}
        self.files: dict[str, bytes] = {}
        args = [",".join(classes)]
        for index, (env_name, artifact) in enumerate(pairs):
            data, suffix = _artifact_file(artifact)
            path = f"{WORLD_DIR}/artifacts/{index}-{env_name}{suffix}"
            self.files[path] = data
            args += ["--artifact", f"{env_name}={path}"]
        if roles:
            lines = []
            for role, spec in roles.items():
                lines += [
                    f"[roles.{_toml_string(role)}]",
                    f"tools = {json.dumps(spec['tools'])}",
                    f"deny = {json.dumps(spec['deny'])}",
                    f'token = "env:{names[role]}"',
                    "",
                ]
            self.files[f"{WORLD_DIR}/roles.toml"] = "\n".join(lines).encode()
            args += ["--role-file", f"{WORLD_DIR}/roles.toml"]
        for role in ("default", "control"):
            if role not in roles:
                args += ["--token", f"{role}=env:{names[role]}"]
        if settings.settings:
            self.files[f"{WORLD_DIR}/settings.json"] = json.dumps(settings.settings, default=str).encode()
            args += ["--settings-file", f"{WORLD_DIR}/settings.json"]
        self.serve_args = [*args, "--seed", str(seed), "--log-level", "warning"]

    def command(self, python: str, host: str, port: str) -> list[str]:
        serve = [python, "-m", "agentenv", "serve", *self.serve_args, "--host", host, "--port", port]
        return ["sh", "-c", WAIT_SCRIPT, "agentenv-serve", *serve]

    def waiting_command(self) -> list[str]:
        """The sandbox's main command with any provider: it waits for `ready`, then runs the launch script."""
        return ["sh", "-c", WAIT_AND_LAUNCH]

    def launch_script(self, python: str, host: str, port: int) -> bytes:
        """`agentenv serve` as `python` runs it. The port is the one the sandbox maps, when it says so through
        `AGENTENV_PORT_<port>` (the process provider does), else `port` itself."""
        serve = shlex.join([python, "-m", "agentenv", "serve", *self.serve_args, "--host", host])
        return f'exec {serve} --port "${{AGENTENV_PORT_{port}:-{port}}}"\n'.encode()
