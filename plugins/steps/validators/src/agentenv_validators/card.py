"""The Environment Card check (34): served, every required field present and well formed, names match.

Follows the reference protocol's card model: only `name` is required (an absent `protocolVersion`, `url`,
`preferredTransport`, `additionalInterfaces` or `capabilities` takes the model's default, a warning row of
weight 0 here); `url` and interface URLs may be paths relative to the env address; `capabilities.tools`,
`operations` and `children_environments` are optional (a leaf server has no children; absent `operations`
means a card from before they were advertised, the data trio assumed); a card without an MCP interface is
reached at `/mcp` by convention.
"""

from __future__ import annotations

from typing import Any

from agentenv_validators.results import Row, row
from agentenv_validators.schemas import WORLD_TOOLS

PROTOCOL_VERSION = "1.0"
CORE_OPERATIONS = ("data/reset", "data/add", "data/get")


def _nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def card_rows(status: int, card: Any, served_tools: list[dict[str, Any]] | None) -> list[Row]:
    """Rows for a card fetched with HTTP `status`; `served_tools` (from MCP) are matched against its names."""
    if status != 200 or not isinstance(card, dict):
        return [
            row("card served", False, f"HTTP {status}; expected 200 with a JSON object at /.well-known/agent-env.json")
        ]
    rows = [row("card served", True, "HTTP 200, JSON object")]
    rows.append(row("name", _nonempty_str(card.get("name")), f"{card.get('name')!r}"))
    version = card.get("protocolVersion")
    rows.append(
        _defaulted("protocolVersion")
        if version is None
        else row("protocolVersion", version == PROTOCOL_VERSION, f"{version!r} (expected {PROTOCOL_VERSION!r})")
    )
    url = card.get("url")
    url_ok = _nonempty_str(url) and str(url).startswith(("http://", "https://", "/"))
    url_detail = f"{url!r} (a path relative to the env address, or an http(s) URL)"
    rows.append(_defaulted("url") if url is None else row("url", url_ok, url_detail))
    transport = card.get("preferredTransport")
    rows.append(
        _defaulted("preferredTransport")
        if transport is None
        else row("preferredTransport", _nonempty_str(transport), f"{transport!r}")
    )
    interfaces = card.get("additionalInterfaces")
    rows.append(_defaulted("additionalInterfaces") if interfaces is None else _interfaces_row(interfaces))
    capabilities = card.get("capabilities")
    if capabilities is None:
        rows.append(_defaulted("capabilities"))
        capabilities = {}
    elif not isinstance(capabilities, dict):
        rows.append(row("capabilities", False, "not an object (of tools, extensions, operations)"))
        capabilities = {}
    tools = capabilities.get("tools")
    tools_ok = isinstance(tools, list) and all(isinstance(t, dict) and _nonempty_str(t.get("name")) for t in tools)
    tools_detail = f"{len(tools)} tools" if tools_ok else "not a list of tools with names"  # type: ignore[arg-type]
    tools_row_ok = tools is None or tools_ok
    rows.append(row("capabilities.tools", tools_row_ok, "not advertised" if tools is None else tools_detail))
    extensions = capabilities.get("extensions")
    ext_ok = isinstance(extensions, list) and all(
        isinstance(e, dict) and _nonempty_str(e.get("uri")) for e in extensions
    )
    ext_detail = "a list of {uri, …}" if ext_ok else "an entry has no uri"
    ext_detail = "none advertised" if extensions is None else ext_detail
    rows.append(row("capabilities.extensions", extensions is None or ext_ok, ext_detail))
    rows.append(_operations_row(capabilities.get("operations")))
    children = card.get("children_environments")
    children_ok = isinstance(children, list) and all(
        isinstance(c, dict) and _nonempty_str(c.get("name")) for c in children
    )
    if children is None or children == []:
        rows.append(row("children_environments", True, "none: a leaf environment"))
    else:
        names = ", ".join(str(c.get("name")) for c in children) if children_ok else "an entry without a name"
        rows.append(row("children_environments", children_ok, names))
    if tools_ok:
        rows.append(_names_row(tools, children if children_ok else [], served_tools))  # type: ignore[arg-type]
    return rows


DEFAULTS = {
    "protocolVersion": f'"{PROTOCOL_VERSION}"',
    "url": '"/agentenv"',
    "preferredTransport": '"JSONRPC"',
    "additionalInterfaces": "[] (MCP at /mcp by convention)",
    "capabilities": "{} (no tools, extensions or operations declared: the data trio assumed)",
}
"""The reference card model's defaults: only `name` is required there, so an absent field means its default."""


def _defaulted(field: str) -> Row:
    """A warning (weight 0): `field` is absent, which the protocol reads as its default."""
    return row(
        field, False, f"absent: the protocol's default {DEFAULTS[field]} applies; set it to be explicit", weight=0
    )


def _operations_row(operations: Any) -> Row:
    if operations is None:
        return row("capabilities.operations", True, "absent: a card from before operations, the data trio assumed")
    if not isinstance(operations, list) or not all(isinstance(op, str) for op in operations):
        return row("capabilities.operations", False, "not a list of method names")
    missing = [op for op in CORE_OPERATIONS if op not in operations]
    served = ", ".join(operations) or "none"
    return row("capabilities.operations", True, served + (f" (no {', '.join(missing)})" if missing else ""))


def child_tool_names(child: dict[str, Any]) -> list[str]:
    """A child card's tools: `capabilities.tools` entries (the protocol's), or a bare `tools` list of names."""
    listed = (child.get("capabilities") or {}).get("tools") if isinstance(child.get("capabilities"), dict) else None
    if listed is None:
        listed = child.get("tools") or []
    return [str(t.get("name") if isinstance(t, dict) else t) for t in listed]


def _interfaces_row(interfaces: Any) -> Row:
    if not isinstance(interfaces, list) or not all(isinstance(i, dict) for i in interfaces):
        return row("additionalInterfaces", False, "missing or not a list of {url, transport}")
    incomplete = [i for i in interfaces if not (_nonempty_str(i.get("url")) and _nonempty_str(i.get("transport")))]
    if incomplete:
        return row("additionalInterfaces", False, f"entries without url or transport: {incomplete}")
    transports = [str(i["transport"]) for i in interfaces]
    has_mcp = any(t.lower() == "mcp" for t in transports)
    note = "" if has_mcp else " (no mcp: /mcp by convention)"
    return row("additionalInterfaces", True, ", ".join(transports) + note)


def _names_row(tools: list[dict[str, Any]], children: list[dict[str, Any]], served: list[dict[str, Any]] | None) -> Row:
    """The card's tool names equal the served (MCP) names, and every child's tools are in the namespace."""
    card_names = {str(t["name"]) for t in tools}
    problems = []
    if served is not None:
        served_names = {str(t.get("name")) for t in served}
        if only_card := sorted(card_names - served_names):
            problems.append(f"on the card but not served over MCP: {', '.join(only_card)}")
        if only_served := sorted(served_names - card_names):
            problems.append(f"served over MCP but not on the card: {', '.join(only_served)}")
    owned: set[str] = set()
    for child in children:
        for name in child_tool_names(child):
            qualified = f"{child['name']}_{name}"
            if name in card_names:
                owned.add(name)
            elif qualified in card_names:
                owned.add(qualified)
            else:
                problems.append(f"child {child['name']!r} declares tool {name!r}, which the card does not list")
    declared = children and any(child_tool_names(child) for child in children)
    if declared and (orphans := sorted(card_names - owned - WORLD_TOOLS)):
        problems.append(f"tools no child environment declares: {', '.join(orphans)}")
    detail = "; ".join(problems) or f"{len(card_names)} names agree between card, MCP and children"
    return row("tool names match", not problems, detail)
