"""What the served card says, in the reference AgentEnv protocol's terms.

Every URL on the card is a path relative to the address the card was fetched from (`/agentenv`, `/mcp`,
`/envs/slack/agentenv`, `/clock/time`), so a card stays right behind any proxy or port mapping; clients
join them onto the env address (`resolve`), and absolute URLs still work. Extensions advertise their REST
routes the reference way (`params.endpoint`, `params.methods.NAME.{method, endpoint}`) and name our
JSON-RPC methods beside them (`params.rpc`). `operations` names the JSON-RPC methods this caller may call.
"""

from __future__ import annotations

from typing import Any

from agentenv_runtime.world.card import OPERATIONS, build_card

from agentenv_gateway.core import Gateway
from agentenv_gateway.rpc import METHODS

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


def _ext(uri: str, description: str, methods: dict[str, tuple[str, str]], rpc: list[str]) -> dict[str, Any]:
    first = next(iter(methods.values()))[1]
    return {
        "uri": uri,
        "description": description,
        "params": {
            "endpoint": first,
            "methods": {name: {"method": verb, "endpoint": path} for name, (verb, path) in methods.items()},
            "rpc": rpc,
        },
        "required": False,
    }


_TOOL_ACCESS = {"disable": ("POST", "/tools/disable"), "enable": ("POST", "/tools/enable")}
EXTENSIONS: list[dict[str, Any]] = [
    _ext(
        "urn:agentenv:clock/v1",
        "Virtual clock: read (get_time, state), set (set_time), clear; JSON-RPC also advances and runs until idle.",
        {
            "get_time": ("GET", "/clock/time"),
            "set_time": ("PUT", "/clock/set-time"),
            "clear": ("POST", "/clock/clear"),
            "state": ("GET", "/clock/state"),
        },
        ["clock/set", "clock/get", "clock/clear", "clock/advance", "clock/run_until_idle"],
    ),
    _ext(
        "urn:agentenv:triggers/v1",
        "World triggers (agentenv trigger definitions): register, remove, clear, state.",
        {
            "register": ("POST", "/triggers/register"),
            "remove": ("POST", "/triggers/remove"),
            "clear": ("POST", "/triggers/clear"),
            "state": ("GET", "/triggers/state"),
        },
        ["triggers/register", "triggers/remove", "triggers/state"],
    ),
    _ext(
        "urn:agentenv:tool-access/v1",
        "Enable or disable tools per role.",
        _TOOL_ACCESS,
        ["access/set", "access/get"],
    ),
    _ext("urn:agentenv:disable-tool/v1", "Disable tools for a role.", {"disable": _TOOL_ACCESS["disable"]}, []),
    _ext("urn:agentenv:enable-tool/v1", "Enable tools for a role.", {"enable": _TOOL_ACCESS["enable"]}, []),
    _ext(
        "urn:agentenv:trajectory/v1",
        "The trajectory of tool calls, trigger firings and access changes (REST: JSONL).",
        {"get": ("GET", "/trajectory")},
        ["trajectory/get"],
    ),
    _ext(
        "urn:agentenv:state/v1",
        "The world's envs, their tools and the role rules; JSON-RPC also snapshots and restores.",
        {"get": ("GET", "/state")},
        ["state/snapshot", "state/restore"],
    ),
    _ext(
        "urn:agentenv:step/v1",
        "List or call tools over REST as the caller's role.",
        {"step": ("POST", "/step")},
        ["tools/list", "tools/call"],
    ),
]


def operations(gw: Gateway, role: str | None) -> list[str]:
    """The JSON-RPC methods at /agentenv this caller may call; the public card names every served one."""
    return [name for name, method in METHODS.items() if role is None or not method.control or gw.may_control(role)]


def served_card(gw: Gateway, role: str | None) -> dict[str, Any]:
    """The card as `role` sees it (None: the public card, for a caller without a token)."""
    child_ops = list(OPERATIONS) if role is None or gw.may_control(role) else []
    return build_card(
        gw.world,
        url=RPC_PATH,
        role=role,
        interfaces=interfaces(),
        operations=operations(gw, role),
        extensions=EXTENSIONS,
        child_url=child_rpc_path,
        child_operations=child_ops,
    )


def resolve(base: str, url: str) -> str:
    """A card URL joined onto the env address: relative paths (the protocol's) and absolute URLs alike."""
    if url.startswith(("http://", "https://")):
        return url.rstrip("/")
    return base.rstrip("/") + "/" + url.lstrip("/") if url else base.rstrip("/")
