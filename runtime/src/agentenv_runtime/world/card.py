"""The Environment Card: the document a served world returns at `/.well-known/agent-env.json`.

Built from the classes alone, so `agentenv env card` prints exactly what the gateway will serve.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agentenv import __version__

from agentenv_runtime.world.world import World

PROTOCOL_VERSION = "1.0"
CARD_PATH = "/.well-known/agent-env.json"
EXTENSIONS: tuple[tuple[str, str], ...] = (
    ("urn:agentenv:clock/v1", "Virtual clock: set, read, clear."),
    ("urn:agentenv:triggers/v1", "World triggers: register, remove, state."),
    ("urn:agentenv:tool-access/v1", "Enable or disable tools per role."),
    ("urn:agentenv:trajectory/v1", "Read the trajectory of tool calls and trigger firings."),
    ("urn:agentenv:state/v1", "Read the world's state; snapshot and restore."),
)
OPERATIONS = ("data/reset", "data/add", "data/get")
"""The data-plane methods a served world answers (the protocol's `operations`: callable method names)."""


def build_card(
    world: World,
    *,
    url: str = "",
    role: str | None = "default",
    interfaces: list[dict[str, str]] | None = None,
    preferred_transport: str = "JSONRPC",
    operations: Sequence[str] = OPERATIONS,
    extensions: list[dict[str, Any]] | None = None,
    child_url: Callable[[str], str] | None = None,
    child_operations: Sequence[str] = OPERATIONS,
) -> dict[str, Any]:
    """The card of `world` as `role` sees it (None: the public card, which lists no tools).

    Each env is a child card of its own (`child_url(name)` is where its data plane is served, relative to
    the world's address), with the tools of that env the role may use. `interfaces` lists the transports
    (MCP, REST) when served; `operations` names the methods callable by this caller.
    """
    tools = world.list_tools(role) if role is not None else []
    owner = {name: env.name for name, (env, _) in world.tools.items()}
    children = [
        {
            "name": env.name,
            "description": env.description,
            "protocolVersion": PROTOCOL_VERSION,
            "version": _dist_version(type(env).__module__),
            "url": child_url(env.name) if child_url else "",
            "preferredTransport": "JSONRPC",
            "capabilities": {
                "tools": [tool for tool in tools if owner.get(tool["name"]) == env.name],
                "operations": list(child_operations),
            },
            "artifacts": [artifact.ref for artifact in env.loaded],
        }
        for env in world.envs.values()
    ]
    default_extensions = [{"uri": uri, "description": text, "required": False} for uri, text in EXTENSIONS]
    return {
        "name": world.name,
        "description": " + ".join(env.description or env.name for env in world.envs.values()),
        "protocolVersion": PROTOCOL_VERSION,
        "version": __version__,
        "url": url,
        "preferredTransport": preferred_transport,
        "additionalInterfaces": list(interfaces or []),
        "capabilities": {
            "tools": tools,
            "extensions": default_extensions if extensions is None else extensions,
            "operations": list(operations),
        },
        "children_environments": children,
    }


def _dist_version(module: str) -> str:
    """The version of the distribution that ships `module`: the plugin whose entry point lives in the same
    package (works for editable installs too), else the installed files' owner; "" when neither knows."""
    from importlib.metadata import PackageNotFoundError, entry_points, packages_distributions, version

    top = module.split(".")[0]
    for ep in entry_points(group="agentenv.plugins"):
        if ep.value.split(".")[0].split(":")[0] == top and ep.dist is not None:
            return ep.dist.version
    for dist in packages_distributions().get(top, []):
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return ""
