"""How a task or the command line declares an MCP server: the one place its three forms are told apart.

A server is a stdio command (`mcp-server-time --local-timezone UTC`), a streamable-HTTP URL of a server that
runs elsewhere, or a Docker image started as a stdio command (`docker run -i --rm IMAGE`). Only the command and
image forms are started (and so restarted) by the world; a URL's server keeps its own state across resets unless
it declares a reset tool.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

DOCKER_LABEL = "agentenv.mcp"
"""Label of the containers an image-form server runs in, so they can be found (and only they removed)."""


class McpSpecError(ValueError):
    """A declaration that cannot work; the message names the server and the field."""


class McpServerSpec(BaseModel):
    """One MCP server as an env: exactly one of `command`, `url`, `image`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="The env's name in the world (tools appear under it in the card).")
    command: str | list[str] | None = Field(None, description="A stdio server: a command line, or its argv.")
    url: str | None = Field(None, description="A streamable-HTTP server: its MCP endpoint (http://host/mcp).")
    image: str | None = Field(None, description="A Docker image whose entry point is a stdio MCP server.")
    args: list[str] = Field(default_factory=list, description="With `image`: arguments after the image name.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables of a started server.")
    reset_tool: str | None = Field(
        None, description="A tool of the server that puts its state back; reset calls it instead of a restart."
    )
    start_timeout: float = Field(30.0, gt=0, description="Seconds the server may take to answer and list tools.")

    @model_validator(mode="after")
    def _one_form(self) -> McpServerSpec:
        if not self.name.isidentifier():
            raise ValueError(f"name {self.name!r}: use a plain identifier (letters, digits, _)")
        given = [field for field in ("command", "url", "image") if getattr(self, field)]
        if len(given) != 1:
            got = f" (got {', '.join(given)})" if given else ""
            raise ValueError(f"give exactly one of `command`, `url` or `image`{got}")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url {self.url!r}: an MCP endpoint starts with http:// or https://")
        if self.args and self.image is None:
            raise ValueError("`args` go with `image`; put a command's arguments in `command`")
        return self

    @property
    def started(self) -> bool:
        """True when the world starts the server itself (command or image), so a restart is a clean state."""
        return self.url is None

    def argv(self) -> list[str]:
        """The command that starts a stdio server (an image runs under `docker run -i --rm`)."""
        if self.image is not None:
            labels = ["--label", f"{DOCKER_LABEL}={self.name}"]
            envs = [arg for key, value in self.env.items() for arg in ("-e", f"{key}={value}")]
            return ["docker", "run", "-i", "--rm", *labels, *envs, self.image, *self.args]
        command = self.command
        assert command is not None
        return shlex.split(command) if isinstance(command, str) else list(command)

    def target(self) -> str:
        """What the MCP client connects to: the URL, or the command line."""
        return self.url if self.url is not None else shlex.join(self.argv())

    def describe(self) -> str:
        return self.url or self.image or self.target()


def parse_spec(text: str, *, option: str = "--mcp") -> McpServerSpec:
    """`NAME=COMMAND…`, `NAME=http(s)://…/mcp`, `NAME=docker:IMAGE [ARGS…]` or `NAME={json object}`."""
    name, sep, rest = text.partition("=")
    name, rest = name.strip(), rest.strip()
    if not sep or not name or not rest:
        raise McpSpecError(
            f"{option} {text!r}: expected NAME=COMMAND…, NAME=http://host/mcp, NAME=docker:IMAGE or NAME={{json}}"
        )
    fields: dict[str, Any]
    if rest.startswith("{"):
        try:
            fields = json.loads(rest)
        except json.JSONDecodeError as exc:
            raise McpSpecError(f"{option} {name}: the JSON after NAME= does not parse ({exc})") from None
        if not isinstance(fields, dict):
            raise McpSpecError(f"{option} {name}: the JSON after NAME= must be an object")
    elif rest.startswith(("http://", "https://")):
        fields = {"url": rest}
    elif rest.startswith("docker:"):
        image, *args = shlex.split(rest.removeprefix("docker:"))
        fields = {"image": image, "args": args}
    else:
        fields = {"command": rest}
    return build_spec(name, fields, where=f"{option} {name}")


def build_spec(name: str, fields: dict[str, Any] | str, *, where: str) -> McpServerSpec:
    """A spec from a task's table (`mcp.NAME = {command = …}`, or just the command line as a string)."""
    data = {"command": fields} if isinstance(fields, str) else dict(fields)
    try:
        return McpServerSpec.model_validate({**data, "name": name})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, error['loc'])) or 'server'}: {error['msg'].removeprefix('Value error, ')}"
            for error in exc.errors()
        )
        raise McpSpecError(f"{where}: {problems}") from None
