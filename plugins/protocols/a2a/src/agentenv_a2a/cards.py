"""Reading another agent's card as a client must: relative URLs resolved, both card versions, both shapes of the
agent-config extension's `methods`. Shared by the `a2a` agent kind and `agentenv agent validate`.

- **Relative URLs.** The reference implementation's agents serve the 0.3 card with `"url": "/a2a"`; a client
  must resolve it against the address the card was fetched from (RFC 3986, `urllib.parse.urljoin`) before it
  can send anything there.
- **Card versions.** The 1.0 card (`/.well-known/agent-card.json`) first, else the 0.3 one
  (`/.well-known/agent.json`), which is all agents of the reference implementation serve.
- **agent-config `methods`.** agentenv servers used to list the JSON-RPC method names
  (`"methods": ["config/get", …]`); the reference implementation's clients read an object of REST operations
  (`"methods": {"set": {"method": "POST", "request": {"supported": [...]}}, …}`), which our servers now emit,
  with the JSON-RPC names under `"rpc"`. `rpc_methods` reads both.

The SDK is imported inside the functions that fetch or convert cards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import AgentCard

CARD_PATH = "/.well-known/agent-card.json"
LEGACY_CARD_PATH = "/.well-known/agent.json"
CARD_PATHS = (CARD_PATH, LEGACY_CARD_PATH)


class CardError(RuntimeError):
    """No usable card at an agent's address; the message names every address tried and why it failed."""


def resolve_url(card_url: str, url: str) -> str:
    """`url` as read on a card fetched from `card_url`, made absolute (an absolute one is returned as is)."""
    return urljoin(card_url, url)


def resolve_card_urls(card: AgentCard, card_url: str) -> AgentCard:
    """Make every interface URL of `card` (a parsed card, changed in place) absolute against `card_url`."""
    for interface in card.supported_interfaces:
        if interface.url:
            interface.url = resolve_url(card_url, interface.url)
    return card


async def fetch_card(http: Any, base_url: str) -> tuple[AgentCard, str]:
    """(the parsed card with absolute URLs, the address it came from) of the agent at `base_url`, over the
    `httpx.AsyncClient` `http`: the 1.0 card, else the 0.3 one. CardError names both attempts."""
    import httpx
    from a2a.client import A2ACardResolver
    from a2a.utils.errors import A2AError

    base = base_url.rstrip("/")
    resolver = A2ACardResolver(http, base)
    problems = []
    for path in CARD_PATHS:
        try:
            card = await resolver.get_agent_card(relative_card_path=path)
        except (A2AError, httpx.HTTPError) as exc:
            problems.append(f"card {base}{path}: {exc}")
            continue
        return resolve_card_urls(card, base + path), base + path
    raise CardError(f"cannot reach the A2A agent at {base} ({'; '.join(problems)})")


def extension_endpoint(base_url: str, params: dict[str, Any], default: str) -> str:
    """Where an extension's `params.endpoint` points: an absolute URL as is; a path (the reference
    implementation's form, e.g. `/ext/agent-config`) appended to the agent's base URL, as its clients do, so an
    agent behind a path prefix keeps it."""
    endpoint = params.get("endpoint")
    if not isinstance(endpoint, str) or not endpoint:
        endpoint = default
    if endpoint.startswith(("http://", "https://")):
        return endpoint
    return base_url.rstrip("/") + "/" + endpoint.lstrip("/")


def rpc_methods(params: dict[str, Any]) -> list[str] | None:
    """The agentenv JSON-RPC methods an agent-config extension declares: `methods` when it is a list (the older
    agentenv shape), else `rpc` (beside the reference's `methods` object); None when it declares none."""
    methods = params.get("methods")
    listed = methods if isinstance(methods, list) else params.get("rpc")
    if not isinstance(listed, list):
        return None
    return [str(name) for name in listed]


__all__ = [
    "CARD_PATHS",
    "CardError",
    "extension_endpoint",
    "fetch_card",
    "resolve_card_urls",
    "resolve_url",
    "rpc_methods",
]
