"""REST tool calls, the OpenAPI document and the Environment Card."""

from __future__ import annotations

import httpx
import pytest


def auth(tokens, role):
    return {"authorization": f"Bearer {tokens[role]}"}


def test_list_tools_per_role(served, tokens):
    support = httpx.get(f"{served.url}/rest/tools", headers=auth(tokens, "support")).json()["tools"]
    billing = httpx.get(f"{served.url}/rest/tools", headers=auth(tokens, "billing_lead")).json()["tools"]
    assert "issue_refund" not in {t["name"] for t in support}
    assert "issue_refund" in {t["name"] for t in billing}
    assert len(billing) == len(support) + 1
    assert all({"name", "description", "inputSchema"} <= set(t) for t in billing)
    assert httpx.get(f"{served.url}/rest/tools").status_code == 401


@pytest.mark.parametrize(
    ("role", "tool", "body", "status", "code"),
    [
        ("support", "get_ticket", {"ticket_id": "TCK-9001"}, 200, None),
        ("support", "get_ticket", {}, 400, "invalid_arguments"),
        ("support", "get_ticket", {"ticket_id": 5, "extra": True}, 400, "invalid_arguments"),
        ("support", "issue_refund", {"order_id": "ORD-5001", "amount": 1, "reason": "x"}, 403, "forbidden"),
        ("support", "no_such_tool", {}, 404, "unknown_tool"),
        ("billing_lead", "issue_refund", {"order_id": "ORD-5001", "amount": 500, "reason": "split sole"}, 422, None),
        ("support", "get_ticket", {"ticket_id": "TCK-0000"}, 422, None),
    ],
)
def test_call_statuses(served, tokens, role, tool, body, status, code):
    before = served.world.export()
    response = httpx.post(f"{served.url}/rest/tools/{tool}", json=body, headers=auth(tokens, role))
    assert response.status_code == status, response.text
    payload = response.json()
    assert payload["ok"] is (status == 200)
    if status != 200:
        assert payload["error"]["message"]
        if code:
            assert payload["error"]["code"] == code
        assert served.world.export() == before
    else:
        assert payload["result"]["ticket_id"] == "TCK-9001"


def test_bad_bodies_change_nothing(served, tokens):
    before = served.world.export()
    headers = auth(tokens, "billing_lead") | {"content-type": "application/json"}
    url = f"{served.url}/rest/tools/update_ticket"
    malformed = httpx.post(url, content=b'{"ticket_id": "TCK-9001", "status":', headers=headers)
    assert malformed.status_code == 400 and malformed.json()["error"]["code"] == "invalid_json"
    assert httpx.post(url, content=b"[1, 2]", headers=headers).status_code == 400
    assert httpx.post(url, content=b"\xff\xfe", headers=headers).status_code == 400
    huge = httpx.post(url, content=b'{"ticket_id": "' + b"x" * (1024 * 1024 + 1) + b'"}', headers=headers)
    assert huge.status_code == 413
    assert served.world.export() == before
    empty = httpx.post(f"{served.url}/rest/tools/list_channels", headers=headers)
    assert empty.status_code == 200  # an empty body means no arguments
    assert httpx.get(f"{served.url}/rest/tools/get_ticket", headers=headers).status_code == 405


def _refs(node):
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def test_openapi_document(served, tokens):
    document = httpx.get(f"{served.url}/openapi.json", headers=auth(tokens, "support")).json()
    assert document["openapi"] == "3.1.0"
    assert document["servers"] == [{"url": served.url}]
    assert document["security"] == [{"bearer": []}]
    tools = {t["name"] for t in served.world.list_tools("support")}
    paths = {p.removeprefix("/rest/tools/") for p in document["paths"] if p != "/rest/tools"}
    assert paths == tools and "issue_refund" not in paths
    operation = document["paths"]["/rest/tools/get_ticket"]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["ticket_id"] and body["additionalProperties"] is False
    assert {"200", "400", "401", "403", "404", "413", "422"} <= set(operation["responses"])
    for ref in _refs(document):  # every $ref (send_email's attachments use $defs) resolves in the document
        node = document
        for part in ref.removeprefix("#/").split("/"):
            node = node[part]
    assert any(name.startswith("send_email.") for name in document["components"]["schemas"])
    billing = httpx.get(f"{served.url}/openapi.json", headers=auth(tokens, "billing_lead")).json()
    assert "/rest/tools/issue_refund" in billing["paths"]


def test_card_per_role(served, tokens):
    card = httpx.get(f"{served.url}/.well-known/agent-env.json", headers=auth(tokens, "support")).json()
    assert card["url"] == "/agentenv"  # relative: joined onto the address the card was fetched from
    assert card["protocolVersion"] == "1.0"
    assert card["additionalInterfaces"] == [
        {"url": "/mcp", "transport": "mcp"},
        {"url": "/agentenv", "transport": "JSONRPC"},
        {"url": "/rest", "transport": "HTTP+JSON"},
    ]
    names = {t["name"] for t in card["capabilities"]["tools"]}
    assert "issue_refund" not in names and "get_ticket" in names
    assert [c["name"] for c in card["children_environments"]] == ["slack", "email", "helpdesk"]
    assert any(e["uri"] == "urn:agentenv:clock/v1" for e in card["capabilities"]["extensions"])
    billing = httpx.get(f"{served.url}/.well-known/agent-env.json", headers=auth(tokens, "billing_lead")).json()
    assert "issue_refund" in {t["name"] for t in billing["capabilities"]["tools"]}
    public = httpx.get(f"{served.url}/.well-known/agent-env.json")  # a discovery document: no token needed
    assert public.status_code == 200 and public.json()["capabilities"]["tools"] == []
    assert httpx.get(f"{served.url}/rest/tools").status_code == 401  # everything else still needs one


def test_public_url_is_advertised(serve):
    with serve(tokens=None, url="https://worlds.example/acme/") as handle:
        card = httpx.get(f"{handle.url}/.well-known/agent-env.json").json()
        assert card["url"] == "/agentenv" and card["additionalInterfaces"][0]["url"] == "/mcp"
        spec = httpx.get(f"{handle.url}/openapi.json").json()
        assert spec["servers"][0]["url"] == "https://worlds.example/acme"
