"""The agentenv agent-config extension (`urn:agentenv:agent-config/v1`): what a served agent can be told.

A served agentenv agent declares the extension in its card (`capabilities.extensions`) with params in the
reference implementation's shape — `{"endpoint": "/agentenv", "methods": {"set": {"method": "POST", "request":
{"supported": [...]}}, "get": {"method": "GET", ...}}, "rpc": [...], "install": {...}}` — and answers at that
endpoint (a path under the agent's base URL) both JSON-RPC 2.0 (the `rpc` methods) and the reference's REST
operations: `POST` a JSON object of `supported` fields, `GET` → `{"config": {...}}` (see `agentenv_a2a.served`).
These models are the wire shapes; they import no SDK.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

EXTENSION_URI = "urn:agentenv:agent-config/v1"
EXTENSION_PATH = "/agentenv"
METHODS = (
    "config/get",
    "config/set",
    "state/save",
    "state/load",
    "state/reset",
    "trajectory/get",
)
REST_FIELDS = ("description", "name", "role", "system_prompt")
"""The fields the reference's REST `set` may send (the `supported` list its clients negotiate against): those
with the same meaning in both. Skills, peers and MCP servers are separate extensions there, with other shapes."""


def card_methods() -> dict[str, Any]:
    """The extension's `methods` object, as the reference implementation's clients read it: the REST `set` (with
    the fields it accepts) and `get` (readback) at the extension's endpoint."""
    return {
        "set": {"method": "POST", "request": {"supported": list(REST_FIELDS)}},
        "get": {"method": "GET", "response": {"required": ["config"]}},
    }


class SkillConfig(BaseModel):
    """A skill the agent has: a name, what it is for, and the instructions (`text`) it follows."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="Skill name, unique per agent.")
    description: str = Field("", description="What the skill is for (shown on the card).")
    text: str = Field("", description="The skill's instructions, given to the agent.")


class PeerConfig(BaseModel):
    """Another A2A agent this agent may message (tool `message_peer`)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="Name the agent uses for the peer.")
    url: str = Field(pattern=r"^https?://", description="Base URL of the peer's A2A endpoint.")
    description: str = Field("", description="What the peer is good for.")


class McpServerConfig(BaseModel):
    """An MCP server (streamable HTTP) whose tools the agent may call."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="Name of the server.")
    url: str = Field(pattern=r"^https?://", description="The server's base URL or its MCP endpoint (`<base>/mcp`).")
    token: str | None = Field(None, description="Bearer token sent to the server.", repr=False)


class ConfigUpdate(BaseModel):
    """`config/set` params: every field given replaces the current value; absent fields stay."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(None, min_length=1)
    description: str | None = None
    system_prompt: str | None = None
    role: str | None = Field(None, min_length=1)
    skills: list[SkillConfig] | None = None
    peers: list[PeerConfig] | None = None
    mcp_servers: list[McpServerConfig] | None = None


class AgentConfig(BaseModel):
    """The whole configuration of a served agent, as `config/get` returns it."""

    name: str
    description: str
    system_prompt: str = ""
    role: str = "default"
    skills: list[SkillConfig] = Field(default_factory=list)
    peers: list[PeerConfig] = Field(default_factory=list)
    mcp_servers: list[McpServerConfig] = Field(default_factory=list)

    def public(self) -> dict[str, Any]:
        """The config as JSON, with MCP tokens hidden."""
        data = self.model_dump(mode="json")
        for server in data["mcp_servers"]:
            if server.get("token"):
                server["token"] = "***"
        return data


class InstallDeclaration(BaseModel):
    """How to install the agent elsewhere: files to write, then commands to run (each must exit 0).

    The same shape as a `[tool.agentenv.install]` table and the `install_agent` step's declaration;
    `requires` lists the Python distributions the files and commands expect.
    """

    model_config = ConfigDict(extra="forbid")

    files: dict[str, str] = Field(default_factory=dict, description="Relative path → text content.")
    commands: list[str | list[str]] = Field(
        default_factory=list, description="Commands in order: a string runs with `sh -c`, a list as argv."
    )
    requires: list[str] = Field(default_factory=list, description="Python distributions the agent needs.")
