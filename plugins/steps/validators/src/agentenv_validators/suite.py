"""The checks `agentenv env validate` runs, as one function usable from Python too.

Against installed envs the world is built with their artifacts and served on loopback; against a URL the
served world is checked as it is (its data changes: the data-plane check loads a probe row).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentenv.contracts import kinds

from agentenv_validators.card import CORE_OPERATIONS, card_rows
from agentenv_validators.client import ProbeError, WorldClient
from agentenv_validators.protocol import protocol_rows
from agentenv_validators.results import Row, row
from agentenv_validators.roundtrip import roundtrip_rows
from agentenv_validators.schemas import conformance_rows, declared_tools, schema_rows


@dataclass
class Check:
    """One check's verdict: the step type it corresponds to, its rows, and whether it ran."""

    step: str
    rows: list[Row] = field(default_factory=list)
    skipped: str = ""
    required: bool = True

    @property
    def passed(self) -> bool:
        return bool(self.skipped) or all(r["passed"] for r in self.rows if r["weight"] > 0)

    @property
    def reason(self) -> str:
        if self.skipped:
            return f"skipped: {self.skipped}"
        failed = [r for r in self.rows if not r["passed"] and r["weight"] > 0]
        if failed:
            return "; ".join(f"{r['criterion']}: {r['detail']}" for r in failed)
        return f"{len(self.rows)} criteria passed"

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "passed": self.passed,
            "required": self.required and not self.skipped,
            "skipped": self.skipped or None,
            "reason": self.reason,
            "rows": self.rows,
        }


async def run_checks(
    client: WorldClient,
    *,
    classes: dict[str, tuple[type, Any]] | None,
    first_exports: tuple[dict[str, Any], dict[str, str]] | None,
) -> list[Check]:
    """Checks 30, 31, 34, 35, 36 against the world behind `client`.

    `classes` (installed env classes) enable 31; `first_exports` (env → data, env → source) enable 36
    without the network; with neither, 36 reloads the world's `data/get` into installed classes if it can.
    """
    checks = []
    try:
        served: list[dict[str, Any]] | None = await client.mcp_tools()
    except ProbeError as exc:
        served = None
        listing_error = row("MCP tools/list", False, str(exc))
    # 30
    schema = Check("verify_mcp_tool_schema")
    schema.rows = schema_rows(served) if served else [listing_error if served is None else row("tools", False, "none")]
    checks.append(schema)
    # 31
    spec = Check("verify_spec_conformance")
    if classes is None:
        spec.skipped = "a URL's declared interface is unknown here (installed envs only)"
    elif served is None:
        spec.rows = [listing_error]
    else:
        spec.rows = conformance_rows(served, declared_tools(list(classes.values())))
    checks.append(spec)
    # 34
    card = Check("verify_env_card")
    document: Any = None
    try:
        status, document = await client.fetch_card()
        card.rows = card_rows(status, document, served)
    except ProbeError as exc:
        card.rows = [row("card served", False, str(exc))]
    checks.append(card)
    advertised = _advertised_operations(document if card.rows and card.rows[0]["passed"] else None)
    # 35
    core = Check("verify_env_core_protocol")
    if advertised is not None and not set(CORE_OPERATIONS) <= set(advertised):
        core.skipped = f"the card advertises {', '.join(advertised) or 'no'} data-plane methods (not the data trio)"
    else:
        try:
            core.rows = await protocol_rows(client)
        except ProbeError as exc:
            core.rows = [row("data plane reachable", False, str(exc))]
    checks.append(core)
    # 36
    trip = Check("verify_universe_load_export_roundtrip")
    if advertised is not None and "data/get" not in advertised and first_exports is None:
        trip.skipped = "the card advertises no data/get"
    elif first_exports is not None and classes is not None:
        trip.rows = roundtrip_rows(classes, *first_exports)
    else:
        trip.rows, trip.skipped = await _remote_roundtrip(client)
    checks.append(trip)
    return checks


def _advertised_operations(card: Any) -> list[str] | None:
    """The data plane's `capabilities.operations` (the protocol: `[]` = none), None when absent (all assumed).

    The card's own list, else its only child's: the reference gateway's card declares none and forwards `data/*`
    to its one backing server, whose card (the child) declares what it serves."""
    if not isinstance(card, dict):
        return None
    children = card.get("children_environments") or []
    for holder in (card, children[0] if len(children) == 1 else None):
        capabilities = holder.get("capabilities") if isinstance(holder, dict) else None
        operations = capabilities.get("operations") if isinstance(capabilities, dict) else None
        if isinstance(operations, list):
            return [str(op) for op in operations]
    return None


async def _remote_roundtrip(client: WorldClient) -> tuple[list[Row], str]:
    from agentenv import get_host

    try:
        data, error = await client.rpc("data/get")
    except ProbeError as exc:
        return [row("data/get answers", False, str(exc))], ""
    if error or not isinstance(data, dict):
        return [row("data/get answers", False, f"error {error}" if error else "not an object")], ""
    host = get_host()
    classes = {}
    for name in data:
        try:
            classes[name] = (host.get(kinds.ENVS, name), None)
        except LookupError:
            return [], f"env {name!r} is not installed here, so its export cannot be reloaded"
    return roundtrip_rows(classes, data, dict.fromkeys(data, f"data/get of {client.base}")), ""
