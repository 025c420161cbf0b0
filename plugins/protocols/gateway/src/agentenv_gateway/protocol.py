"""What the served card says, in the reference AgentEnv protocol's terms.

Every URL on the card is a path relative to the address the card was fetched from (`/agentenv`, `/mcp`,
`/envs/slack/agentenv`, `/clock/time`), so a card stays right behind any proxy or port mapping; clients
join them onto the env address (`resolve`), and absolute URLs still work. Extensions advertise their REST
routes the reference way (`params.endpoint`, `params.methods.NAME.{method, endpoint}`) and name our
JSON-RPC methods beside them (`params.rpc`). `operations` names the data-plane methods this caller may call.
"""

from __future__ import annotations

from typing import Any

from agentenv_runtime import OPERATIONS, build_card

from agentenv_gateway.core import Gateway
from agentenv_gateway.rest_ext import ROUTES

MCP_PATH = "/mcp"
RPC_PATH = "/agentenv"
REST_PATH = "/rest"
CHILD_PREFIX = "/envs"


def child_rpc_path(env: str) -> str:
    """Where one env's own data plane is served (`data/*` scoped to it), as its child card's `url`."""
    return f"{CHILD_PREFIX}/{env}{RPC_PATH}"


def interfaces() -> list[dict[str, str]]:
    return [
        {"url": MCP_PATH, "transport": "mcp"},
        {"url": RPC_PATH, "transport": "JSONRPC"},
        {"url": REST_PATH, "transport": "HTTP+JSON"},
    ]


EXTENSION_TEXT: dict[str, tuple[str, list[str]]] = {
    # extension → (description, our JSON-RPC methods of it)
    "clock": (
        "Virtual clock: read (get_time, state), set (set_time), clear; JSON-RPC also advances and runs until idle.",
        ["clock/set", "clock/get", "clock/clear", "clock/advance", "clock/run_until_idle"],
    ),
    "triggers": (
        "World triggers (agentenv trigger definitions): register, remove, clear, state.",
        ["triggers/register", "triggers/remove", "triggers/state"],
    ),
    "tool-access": ("Enable or disable tools per role.", ["access/set", "access/get"]),
    "disable-tool": ("Disable tools for a role.", []),
    "enable-tool": ("Enable tools for a role.", []),
    "trajectory": ("The trajectory of tool calls, trigger firings and access changes (REST: JSONL).",
                   ["trajectory/get"]),
    "state": (
        "The world's envs, their tools and the role rules; JSON-RPC also snapshots and restores.",
        ["state/snapshot", "state/restore"],
    ),
    "step": ("List or call tools over REST as the caller's role.", ["tools/list", "tools/call"]),
}
SHARED_ROUTES = {"disable-tool": ("tool-access", "disable"), "enable-tool": ("tool-access", "enable")}
"""The reference's one-method tool-access extensions, served by our tool-access routes."""


def _extension(name: str, description: str, rpc: list[str]) -> dict[str, Any]:
    owner, only = SHARED_ROUTES.get(name, (name, None))
    methods = {
        method: {"method": verb, "endpoint": path}
        for ext, method, verb, path, _ in ROUTES
        if ext == owner and only in (None, method)
    }
    first = next(iter(methods.values()))["endpoint"]
    params = {"endpoint": first, "methods": methods, "rpc": rpc}
    return {"uri": f"urn:agentenv:{name}/v1", "description": description, "params": params, "required": False}


INTAKE = {
    "uri": "urn:agentenv:intake/v1",
    "description": "What data/add accepts and data/get returns (declaration only).",
    "params": {
        "add": [
            {"part": "data", "format": "json", "load": "additive"},
            {"part": "text", "format": "json", "mimeTypes": ["application/json"], "load": "additive"},
            {"part": "file", "format": "agentenv-artifact", "mimeTypes": ["application/json", "application/gzip"],
             "load": "additive"},
        ],
        "get": [{"part": "data", "format": "json"}],
    },
    "required": False,
}
"""The reference's intake declaration: parts are an artifact document or `{table: [rows]}`; loads add rows."""
EXTENSIONS: list[dict[str, Any]] = [_extension(name, *text) for name, text in EXTENSION_TEXT.items()] + [INTAKE]


def operations(gw: Gateway, role: str | None) -> list[str]:
    """The protocol's data-plane methods (`data/reset`, `data/add`, `data/get`) this caller may call; the public
    card names what the server serves.

    The reference card model's `capabilities.operations` holds the data plane only: its SDK advertises there the
    `@reset_data`/`@add_data`/`@get_data` handlers, and an absent list means "the full data trio". Our other
    JSON-RPC methods are declared by their extensions (`params.rpc`), as the reference declares its extensions'
    methods under `params.methods`."""
    return list(OPERATIONS) if role is None or gw.may_control(role) else []


def served_card(gw: Gateway, role: str | None) -> dict[str, Any]:
    """The card as `role` sees it (None: the public card, for a caller without a token)."""
    data_plane = operations(gw, role)
    return build_card(
        gw.world,
        url=RPC_PATH,
        role=role,
        interfaces=interfaces(),
        operations=data_plane,
        extensions=EXTENSIONS,
        child_url=child_rpc_path,
        child_operations=data_plane,
    )


def resolve(base: str, url: str) -> str:
    """A card URL joined onto the env address: relative paths (the protocol's) and absolute URLs alike."""
    if url.startswith(("http://", "https://")):
        return url.rstrip("/")
    return base.rstrip("/") + "/" + url.lstrip("/") if url else base.rstrip("/")
