"""The env checks against a data plane in the reference implementation's wire shapes, served on loopback.

The card is the one the reference gateway composes in front of one backing server (its own extensions, no
`operations`, the server's card as the only child, rewritten under `/svc/{key}`), and the data plane answers
as the reference SDK's servers do: `data/get` parts carry no `metadata.env`, `data/add` takes `parts` only.
`tests/test_reference_interop.py` runs the same against a front built with the reference's own code.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterator
from typing import Any

import pytest
from agentenv_gateway.api import serve_in_thread
from agentenv_validators.card import card_rows
from agentenv_validators.client import WorldClient
from agentenv_validators.protocol import protocol_rows
from agentenv_validators.suite import run_checks

SEED = [{"id": 1, "text": "first"}, {"id": 2, "text": "second"}]
TRIO = ["data/reset", "data/add", "data/get"]


def peer_card(child_operations: list[str]) -> dict[str, Any]:
    """The reference gateway's card over one backing server `notes` (its card rewritten as the child)."""
    child = {
        "name": "notes",
        "protocolVersion": "1.0",
        "url": "/svc/mcp-notes/agentenv",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [],
        "capabilities": {"extensions": None, "tools": [{"name": "add_note"}], "operations": child_operations},
        "children_environments": None,
    }
    return {
        "name": "env",
        "protocolVersion": "1.0",
        "url": "/agentenv",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [{"url": "/mcp", "transport": "mcp"}],
        "capabilities": {"extensions": [{"uri": "urn:agentenv:clock/v1", "required": False}]},
        "children_environments": [child],
    }


def peer_app(card: dict[str, Any]) -> Any:
    """Card + data plane: `data/reset` back to the seed rows, `data/add` of parts, parts without metadata."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    notes = {"notes": copy.deepcopy(SEED)}

    async def served_card(_: Request) -> JSONResponse:
        return JSONResponse(card)

    async def rpc(request: Request) -> JSONResponse:
        body = await request.json()
        method, params = body.get("method"), body.get("params") or {}
        result: dict[str, Any] = {}
        if method == "data/reset":
            notes["notes"] = copy.deepcopy(SEED)
        elif method == "data/add":  # the reference AddDataRequest: `parts`, anything else ignored
            for part in params["parts"]:
                for table, rows in part["data"].items():
                    notes[table].extend(rows)
        elif method == "data/get":
            result = {"parts": [{"kind": "data", "data": copy.deepcopy(notes)}]}
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), "error": error})
        return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), "result": result})

    return Starlette(
        routes=[Route("/.well-known/agent-env.json", served_card), Route("/agentenv", rpc, methods=["POST"])]
    )


@pytest.fixture
def peer_url() -> Iterator[str]:
    with serve_in_thread(peer_app(peer_card(TRIO))) as url:
        yield url


def weighted_failures(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["weight"] > 0 and not r["passed"]]


def test_parts_without_metadata_env_are_the_only_childs(peer_url: str) -> None:
    rows = asyncio.run(protocol_rows(WorldClient(peer_url), reset="empty"))
    assert not weighted_failures(rows), rows
    by_criterion = {r["criterion"]: r for r in rows}
    assert by_criterion["data/get answers"]["detail"] == "1 env(s)"
    assert by_criterion["data/add loads a row"]["detail"] == "one row into notes.notes"
    assert by_criterion["data/get shows the added row"]["passed"]
    # the reference's data/add takes no `env`: nothing to route, so an unknown env is not asked about
    assert "data/add of an unknown env is refused and changes nothing" not in by_criterion


def test_a_card_of_only_the_required_name_passes_with_warnings() -> None:
    rows = card_rows(200, {"name": "notes"}, None)
    assert not weighted_failures(rows), rows
    warned = {r["criterion"] for r in rows if r["weight"] == 0 and not r["passed"]}
    assert warned == {"protocolVersion", "url", "preferredTransport", "additionalInterfaces", "capabilities"}
    wrong = card_rows(200, {"name": "notes", "protocolVersion": "0.9"}, None)
    assert [r["criterion"] for r in weighted_failures(wrong)] == ["protocolVersion"]


def test_the_only_childs_operations_decide_the_data_plane_check() -> None:
    """The reference gateway's card lists no operations; its one child's say which it serves."""
    with serve_in_thread(peer_app(peer_card(["data/get"]))) as url:
        checks = {c.step: c for c in asyncio.run(run_checks(WorldClient(url), classes=None, first_exports=None))}
    assert checks["verify_env_core_protocol"].skipped.startswith("the card advertises data/get data-plane methods")
