"""MCP over streamable HTTP with the official client: listing, calling, roles and refusals."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

REFUND = {"order_id": "ORD-5001", "amount": 89.99, "reason": "Boots arrived with a split sole"}


def test_initialize_list_and_call(served, mcp, tokens):
    async def run():
        async with mcp(served.url, tokens["billing_lead"]) as session:
            listed = await session.list_tools()
            names = [t.name for t in listed.tools]
            assert {"get_ticket", "post_message", "send_email", "issue_refund"} <= set(names)
            assert len(names) == len(served.world.list_tools("billing_lead"))
            ticket_tool = next(t for t in listed.tools if t.name == "get_ticket")
            assert ticket_tool.input_schema["required"] == ["ticket_id"]
            assert ticket_tool.description
            result = await session.call_tool("get_ticket", {"ticket_id": "TCK-9001"})
            assert result.is_error is False
            assert result.structured_content["customer_email"] == "dana.kim@example.com"
            assert json.loads(result.content[0].text) == result.structured_content
            listing = await session.call_tool("list_channels", {})
            assert isinstance(listing.structured_content["result"], list)  # non-object results are wrapped

    asyncio.run(run())
    calls = [e for e in served.world.trajectory.events if e["kind"] == "tool_call"]
    assert [(e["tool"], e["role"]) for e in calls] == [
        ("get_ticket", "billing_lead"),
        ("list_channels", "billing_lead"),
    ]


def test_support_role_does_not_see_or_call_issue_refund(served, mcp, tokens):
    before = served.world.export()

    async def run():
        async with mcp(served.url, tokens["support"]) as session:
            names = [t.name for t in (await session.list_tools()).tools]
            assert "issue_refund" not in names and "get_ticket" in names
            refused = await session.call_tool("issue_refund", REFUND)
            assert refused.is_error is True
            assert refused.structured_content["error"]["code"] == "forbidden"
            assert "issue_refund" in json.loads(refused.content[0].text)["message"]

    asyncio.run(run())
    assert served.world.export() == before


def test_billing_lead_refund_goes_through_world_rules(served, mcp, tokens):
    async def run():
        async with mcp(served.url, tokens["billing_lead"]) as session:
            verified = await session.call_tool("verify_order", {"order_id": "ORD-5001", "note": "photo of split sole"})
            assert not verified.is_error
            refund = await session.call_tool("issue_refund", REFUND)
            assert refund.is_error is False, refund.content
            too_much = await session.call_tool("issue_refund", REFUND | {"amount": 100.0})
            assert too_much.is_error and too_much.structured_content["error"]["field"] == "amount"

    asyncio.run(run())
    last = served.world.trajectory.events[-1]
    refunds = served.world.call("list_refunds", {"order_id": "ORD-5001"}).result
    assert len(refunds["refunds"]) == 1 and refunds["total_refunded"] == 89.99
    assert last["role"] == "billing_lead" and last["error"]["field"] == "amount"


def test_bad_arguments_name_the_field(served, mcp, tokens):
    async def run():
        async with mcp(served.url, tokens["support"]) as session:
            result = await session.call_tool("get_ticket", {"ticket": "TCK-9001"})
            assert result.is_error
            fields = {e["field"] for e in result.structured_content["error"]["errors"]}
            assert {"ticket_id", "ticket"} <= fields
            unknown = await session.call_tool("no_such_tool", {})
            assert unknown.structured_content["error"]["code"] == "unknown_tool"

    asyncio.run(run())


@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_mcp_needs_a_known_token(served, mcp, token):
    headers = {"accept": "application/json, text/event-stream"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    response = httpx.post(f"{served.url}/mcp", json=initialize, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["error"]["code"] == -32001

    async def run():
        async with mcp(served.url, token):
            pass

    with pytest.raises(BaseException):  # noqa: B017 - the SDK surfaces the 401 as an exception group
        asyncio.run(run())


def test_tokenless_world_is_role_default_and_loopback_only(serve, mcp):
    with serve(tokens=None) as handle:

        async def run():
            async with mcp(handle.url, None) as session:
                names = [t.name for t in (await session.list_tools()).tools]
                assert "issue_refund" in names  # `default` sees everything

        asyncio.run(run())
        assert httpx.get(f"{handle.url}/health").status_code == 200
        rebound = httpx.get(f"{handle.url}/health", headers={"host": "evil.example:80"})
        assert rebound.status_code == 421
