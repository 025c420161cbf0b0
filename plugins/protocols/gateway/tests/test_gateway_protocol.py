"""The reference AgentEnv protocol's rules on our gateway: public card, `AgentEnv-Role`, child cards,
operations, data-plane shapes, reset semantics and the extensions' REST routes.

The same contracts are checked with the reference implementation's own client in
`tests/test_reference_protocol.py` (repository root); these tests need only our workspace.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from agentenv_gateway.rpc import METHODS

CARD = "/.well-known/agent-env.json"
ROLE = "AgentEnv-Role"
TRIO = ["data/reset", "data/add", "data/get"]


def card_of(url: str, **headers: str) -> httpx.Response:
    return httpx.get(url + CARD, headers=headers)


def rpc(url: str, method: str, params: object = None, path: str = "/agentenv", **headers: str) -> dict:
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    response = httpx.post(url + path, json=message, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def tokens_of(tokens: dict[str, str], role: str) -> dict[str, str]:
    return {"authorization": f"Bearer {tokens[role]}"}


def names(tools: list[dict]) -> set[str]:
    return {t["name"] for t in tools}


# ---- the card and the role header -------------------------------------------------------------------
def test_public_card_and_role_views(served, tokens):
    public = card_of(served.url)
    assert public.status_code == 200  # a discovery document: no token
    card = public.json()
    assert card["url"] == "/agentenv" and card["capabilities"]["tools"] == []
    assert card["capabilities"]["operations"] == TRIO  # the data plane the server serves
    assert all(child["capabilities"]["tools"] == [] for child in card["children_environments"])
    support = card_of(served.url, **tokens_of(tokens, "support")).json()
    assert "issue_refund" not in names(support["capabilities"]["tools"]) and "get_ticket" in names(
        support["capabilities"]["tools"]
    )
    assert support["capabilities"]["operations"] == []  # support may call no data-plane method
    control = card_of(served.url, **tokens_of(tokens, "control")).json()
    assert control["capabilities"]["operations"] == TRIO


def test_operations_are_the_data_plane_and_extensions_declare_the_rest(served, tokens):
    """The reference card model's `operations` is the data plane (absent = the full data trio), not every
    JSON-RPC method: each of our other methods is declared by its extension (`params.rpc`) instead."""
    for headers in ({}, tokens_of(tokens, "control")):
        card = card_of(served.url, **headers).json()
        assert card["capabilities"]["operations"] == TRIO
        declared = {m for ext in card["capabilities"]["extensions"] for m in ext["params"].get("rpc", [])}
        assert declared | set(TRIO) == set(METHODS) and not declared & set(TRIO)


def test_role_header_is_honoured_only_from_control(served, tokens):
    as_support = card_of(served.url, **tokens_of(tokens, "control"), **{ROLE: "support"}).json()
    assert "issue_refund" not in names(as_support["capabilities"]["tools"])
    as_billing = card_of(served.url, **tokens_of(tokens, "control"), **{ROLE: "billing_lead"}).json()
    assert "issue_refund" in names(as_billing["capabilities"]["tools"])
    widened = card_of(served.url, **tokens_of(tokens, "support"), **{ROLE: "billing_lead"})
    assert widened.status_code == 403 and "control token" in widened.json()["error"]["message"]
    call = httpx.post(
        f"{served.url}/rest/tools/issue_refund",
        json={"order_id": "ORD-1", "amount": 1},
        headers=tokens_of(tokens, "support") | {ROLE: "billing_lead"},
    )
    assert call.status_code == 403
    assert not [e for e in served.world.trajectory.events if e.get("tool") == "issue_refund"]
    assert card_of(served.url, **{ROLE: "support"}).status_code == 403  # anonymous may name no role
    assert card_of(served.url, **tokens_of(tokens, "support"), **{ROLE: "support"}).status_code == 200
    rpc_refused = httpx.post(
        f"{served.url}/agentenv",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers=tokens_of(tokens, "support") | {ROLE: "control"},
    )
    assert rpc_refused.status_code == 403 and rpc_refused.json()["error"]["code"] == -32003


def test_role_header_on_a_tokenless_server(serve):
    with serve(tokens=None) as handle:
        support = card_of(handle.url, **{ROLE: "support"}).json()
        assert "issue_refund" not in names(support["capabilities"]["tools"])
        listed = httpx.get(f"{handle.url}/rest/tools", headers={ROLE: "support"}).json()["tools"]
        assert "issue_refund" not in names(listed) and "get_ticket" in names(listed)
        assert "issue_refund" in names(httpx.get(f"{handle.url}/rest/tools").json()["tools"])


def test_mcp_per_call_role_field(served, mcp, tokens):
    async def run() -> None:
        async with mcp(served.url, tokens["support"]) as session:
            refused = await session.call_tool(
                "get_ticket", {"ticket_id": "TCK-9001"}, meta={"agentenv.io/role": "billing_lead"}
            )
            assert refused.is_error and refused.structured_content["error"]["code"] == "forbidden"
        async with mcp(served.url, tokens["control"]) as session:
            as_support = await session.call_tool(
                "issue_refund", {"order_id": "ORD-1", "amount": 1}, meta={"agentenv.io/role": "support"}
            )
            assert as_support.is_error and as_support.structured_content["error"]["code"] == "forbidden"
            ticket = await session.call_tool(
                "get_ticket", {"ticket_id": "TCK-9001"}, meta={"agentenv.io/role": "support"}
            )
            assert not ticket.is_error

    asyncio.run(run())
    calls = [(e["tool"], e["role"]) for e in served.world.trajectory.events if e["kind"] == "tool_call"]
    assert calls == [("issue_refund", "support"), ("get_ticket", "support")]


# ---- child cards -------------------------------------------------------------------------------------
def test_child_cards_are_real_cards_with_the_roles_tools(served, tokens):
    support = card_of(served.url, **tokens_of(tokens, "support")).json()
    children = {c["name"]: c for c in support["children_environments"]}
    assert [c["url"] for c in children.values()] == [f"/envs/{n}/agentenv" for n in ("slack", "email", "helpdesk")]
    helpdesk = names(children["helpdesk"]["capabilities"]["tools"])
    assert "get_ticket" in helpdesk and "issue_refund" not in helpdesk and "send_email" not in helpdesk
    assert all(c["capabilities"]["operations"] == [] for c in children.values())  # support has no data plane
    assert set().union(*(names(c["capabilities"]["tools"]) for c in children.values())) == names(
        support["capabilities"]["tools"]
    )
    control = card_of(served.url, **tokens_of(tokens, "control")).json()
    assert all(c["capabilities"]["operations"] == TRIO for c in control["children_environments"])


def test_child_url_serves_that_envs_data_plane(served, tokens):
    auth = tokens_of(tokens, "control")
    got = rpc(served.url, "data/get", path="/envs/helpdesk/agentenv", **auth)["result"]
    assert [p["metadata"]["env"] for p in got["parts"]] == ["helpdesk"]
    row = dict(got["parts"][0]["data"]["tickets"][0], ticket_id="TCK-CHILD")
    added = rpc(served.url, "data/add", {"parts": [{"kind": "data", "data": {"tickets": [row]}}]},
                path="/envs/helpdesk/agentenv", **auth)
    assert "result" in added, added
    assert served.world.query("helpdesk", "SELECT ticket_id FROM tickets WHERE ticket_id = 'TCK-CHILD'")
    other = rpc(served.url, "data/get", {"env": "slack"}, path="/envs/helpdesk/agentenv", **auth)
    assert other["error"]["code"] == -32602 and other["error"]["data"]["field"] == "env"
    clock = rpc(served.url, "clock/get", path="/envs/helpdesk/agentenv", **auth)
    assert clock["error"]["code"] == -32601
    assert httpx.post(f"{served.url}/envs/nope/agentenv", json={}, headers=auth).status_code == 404
    refused = rpc(served.url, "data/get", path="/envs/helpdesk/agentenv", **tokens_of(tokens, "support"))
    assert refused["error"]["code"] == -32003


# ---- data plane shapes and reset semantics ------------------------------------------------------------
def test_data_add_without_env(served, tokens):
    auth = tokens_of(tokens, "control")
    ticket = dict(served.world.envs["helpdesk"].export()["tickets"][0], ticket_id="TCK-META")
    by_meta = {"kind": "data", "data": {"tickets": [ticket]}, "metadata": {"env": "helpdesk"}}
    channel = dict(served.world.envs["slack"].export()["conversations"][0], id="C_DOC", name="doc-part")
    document = {"name": "extra", "env": "slack", "version": "1", "data": {"conversations": [channel]}}
    reply = rpc(served.url, "data/add", {"parts": [by_meta, {"kind": "data", "data": document}]}, **auth)
    assert len(reply["result"]["loaded"]) == 2
    assert served.world.query("helpdesk", "SELECT 1 FROM tickets WHERE ticket_id = 'TCK-META'")
    assert served.world.query("slack", "SELECT 1 FROM conversations WHERE id = 'C_DOC'")
    unnamed = rpc(served.url, "data/add", {"parts": [{"kind": "data", "data": {"tickets": []}}]}, **auth)
    assert unnamed["error"]["data"]["field"] == "parts.0" and "metadata.env" in unnamed["error"]["message"]


def test_data_add_all_or_none_across_envs(served, tokens):
    before = served.world.export()
    ticket = dict(before["helpdesk"]["tickets"][0], ticket_id="TCK-NEW")
    duplicate = before["slack"]["conversations"][0]  # a primary key already there: the slack load fails
    parts = [
        {"kind": "data", "data": {"tickets": [ticket]}, "metadata": {"env": "helpdesk"}},
        {"kind": "data", "data": {"conversations": [duplicate]}, "metadata": {"env": "slack"}},
    ]
    reply = rpc(served.url, "data/add", {"parts": parts}, **tokens_of(tokens, "control"))
    assert reply["error"]["data"]["field"] == "parts.1", reply
    assert served.world.export() == before
    served.world.reset()
    assert served.world.export() == before  # the reset point did not move either


def _artifact_bytes(served) -> tuple[bytes, str]:
    channel = dict(served.world.envs["slack"].export()["conversations"][0], id="C_URI", name="by-uri")
    document = {"name": "by-uri", "env": "slack", "version": "1", "data": {"conversations": [channel]}}
    return json.dumps(document).encode(), "C_URI"


def test_files_by_uri(serve, tmp_path: Path):
    with serve(tokens=None) as handle:
        raw, channel = _artifact_bytes(handle)
        data_uri = "data:application/json;base64," + base64.b64encode(raw).decode()
        reply = rpc(handle.url, "data/add", {"parts": [{"kind": "file", "file": {"uri": data_uri}}]})
        assert "result" in reply, reply
        assert handle.world.query("slack", "SELECT 1 FROM conversations WHERE id = ?", (channel,))
        path = tmp_path / "extra.json"
        path.write_bytes(raw.replace(b"C_URI", b"C_FILE").replace(b"by-uri", b"by-file"))
        reply = rpc(handle.url, "data/add", {"parts": [{"kind": "file", "file": {"uri": path.as_uri()}}]})
        assert "result" in reply, reply
        assert handle.world.query("slack", "SELECT 1 FROM conversations WHERE id = 'C_FILE'")
        served_file = raw.replace(b"C_URI", b"C_HTTP").replace(b"by-uri", b"by-http")
        with _file_server(served_file) as file_url:
            reply = rpc(handle.url, "data/add", {"parts": [{"kind": "file", "file": {"uri": file_url}}]})
            assert "result" in reply, reply
            missing = rpc(handle.url, "data/add", {"parts": [{"kind": "file", "file": {"uri": file_url + "x"}}]})
            assert missing["error"]["data"]["field"] == "parts.0.file.uri" and "404" in missing["error"]["message"]
        assert handle.world.query("slack", "SELECT 1 FROM conversations WHERE id = 'C_HTTP'")
        odd = rpc(handle.url, "data/add", {"parts": [{"kind": "file", "file": {"uri": "ftp://x/y.json"}}]})
        assert odd["error"]["data"]["field"] == "parts.0.file.uri"
        # a URL on this very server is fetched without blocking it (the fetch is awaited, not run in the world)
        itself = rpc(handle.url, "data/add", {"parts": [{"kind": "file", "file": {"uri": f"{handle.url}/health"}}]})
        assert itself["error"]["data"]["field"].startswith("parts.0.file"), itself


def test_file_uris_are_refused_with_tokens(served, tokens, tmp_path: Path):
    raw, _ = _artifact_bytes(served)
    path = tmp_path / "extra.json"
    path.write_bytes(raw)
    reply = rpc(served.url, "data/add", {"parts": [{"kind": "file", "file": {"uri": path.as_uri()}}]},
                **tokens_of(tokens, "control"))
    assert reply["error"]["data"]["field"] == "parts.0.file.uri" and "token-less" in reply["error"]["message"]


class _OneFile(BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        found = self.path == "/artifact.json"
        self.send_response(200 if found else 404)
        self.end_headers()
        if found:
            self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


class _file_server:
    def __init__(self, body: bytes) -> None:
        handler = type("Handler", (_OneFile,), {"body": body})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)

    def __enter__(self) -> str:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/artifact.json"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_reset_to_loaded_or_empty(serve):
    with serve(tokens=None) as handle:
        loaded = handle.world.export()
        handle.world.call("update_ticket", {"ticket_id": "TCK-9001", "status": "pending"})
        assert rpc(handle.url, "data/reset")["result"]["to"] == "loaded"  # this server's default
        assert handle.world.export() == loaded
        emptied = rpc(handle.url, "data/reset", {"env": "helpdesk", "to": "empty"})["result"]
        assert emptied == {"reset": True, "to": "empty", "envs": ["helpdesk"]}
        assert all(rows == [] for rows in handle.world.envs["helpdesk"].export().values())
        assert handle.world.export()["slack"] == loaded["slack"]  # the other envs are untouched
        assert rpc(handle.url, "data/reset", {"to": "sideways"})["error"]["data"]["field"] == "to"
    with serve(tokens=None, reset_to="empty") as handle:
        rpc(handle.url, "data/reset")
        assert all(rows == [] for env in handle.world.export().values() for rows in env.values())
        rpc(handle.url, "data/add", {"env": "helpdesk", "parts": [{"kind": "data", "data": {"tickets": []}}]})
        assert rpc(handle.url, "data/reset", {"to": "loaded"})["result"]["to"] == "loaded"


# ---- the extensions' REST routes ------------------------------------------------------------------------
def test_extension_endpoints_are_advertised_and_served(served, tokens):
    auth = tokens_of(tokens, "control")
    card = card_of(served.url, **auth).json()
    extensions = {e["uri"]: e["params"] for e in card["capabilities"]["extensions"]}
    for uri in ("clock", "triggers", "trajectory", "state", "tool-access", "disable-tool", "enable-tool", "step"):
        methods = extensions[f"urn:agentenv:{uri}/v1"]["methods"]
        for method in methods.values():  # every advertised route answers (not 404/405) for control
            answered = httpx.request(method["method"], served.url + method["endpoint"], json={}, headers=auth)
            assert answered.status_code not in (404, 405) or method["endpoint"] == "/clock/time", (uri, method)


def test_clock_routes(served, tokens):
    auth = tokens_of(tokens, "control")
    assert httpx.get(f"{served.url}/clock/time", headers=auth).status_code == 404  # not armed yet
    body = {"virtual_time": "2026-11-24T10:00:00Z", "virtual_seconds_per_real_second": 60}
    state = httpx.put(f"{served.url}/clock/set-time", json=body, headers=auth).json()
    assert state["armed"] and state["virtual_seconds_per_real_second"] == 60
    assert state["virtual_time"].startswith("2026-11-24T10:0")
    now = httpx.get(f"{served.url}/clock/time", headers=auth).json()["virtual_time"]
    assert now.startswith("2026-11-24T1") and now.endswith("Z")
    assert served.world.clock.armed
    bad = httpx.put(f"{served.url}/clock/set-time", json={"virtual_time": "soon"}, headers=auth)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_params"
    assert httpx.post(f"{served.url}/clock/clear", headers=auth).json() == {"ok": True, "armed": False}
    assert not served.world.clock.armed
    refused = httpx.put(f"{served.url}/clock/set-time", json=body, headers=tokens_of(tokens, "support"))
    assert refused.status_code == 403 and not served.world.clock.armed


def test_trigger_access_trajectory_state_and_step_routes(served, tokens):
    auth = tokens_of(tokens, "control")
    trigger = {"id": "t1", "kind": "tool_call", "when": {"tool": "get_ticket"}, "actions": []}
    registered = httpx.post(f"{served.url}/triggers/register", json={"triggers": [trigger]}, headers=auth)
    assert registered.status_code == 200, registered.text
    assert [t["id"] for t in httpx.get(f"{served.url}/triggers/state", headers=auth).json()["triggers"]] == ["t1"]
    unknown = httpx.post(f"{served.url}/triggers/remove", json={"ids": ["t1", "nope"]}, headers=auth)
    assert unknown.status_code == 400 and "t1" in served.world.triggers  # all or none
    assert httpx.post(f"{served.url}/triggers/clear", headers=auth).json()["removed"] == ["t1"]

    disabled = httpx.post(f"{served.url}/tools/disable", json={"role": "billing_lead", "tools": ["get_ticket"]},
                          headers=auth).json()
    assert disabled["role"] == "billing_lead" and "get_ticket" in disabled["disabled"]
    assert not served.world.rbac.permits("billing_lead", "get_ticket")
    enabled = httpx.post(f"{served.url}/tools/enable", json={"role": "billing_lead", "tools": "*"}, headers=auth)
    assert "get_ticket" in enabled.json()["allowed"] and served.world.rbac.permits("billing_lead", "get_ticket")

    step = httpx.post(f"{served.url}/step", json={"action": "list_tools"}, headers=tokens_of(tokens, "support"))
    assert "issue_refund" not in names(step.json()["tools"]) and "parameters" in step.json()["tools"][0]
    called = httpx.post(
        f"{served.url}/step",
        json={"action": "call_tool", "tool_name": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}},
        headers=tokens_of(tokens, "support"),
    ).json()
    assert called["isError"] is False and called["structuredContent"]["ticket_id"] == "TCK-9001"
    forbidden = httpx.post(
        f"{served.url}/step", json={"action": "call_tool", "tool_name": "issue_refund", "arguments": {}},
        headers=tokens_of(tokens, "support"),
    ).json()
    assert forbidden["isError"] is True and forbidden["structuredContent"]["error"]["code"] == "forbidden"

    lines = httpx.get(f"{served.url}/trajectory", headers=auth).text.splitlines()
    kinds = [json.loads(line)["kind"] for line in lines]
    assert "access" in kinds and "tool_call" in kinds
    state = httpx.get(f"{served.url}/state", headers=auth).json()
    assert [s["name"] for s in state["mcp_servers"]] == ["slack", "email", "helpdesk"]
    assert "issue_refund" in state["roles"]["support"]["disabled"]
    assert httpx.get(f"{served.url}/state", headers=tokens_of(tokens, "support")).status_code == 403
    assert httpx.post(f"{served.url}/tools/disable", content=b"[1]", headers=auth).status_code == 400


@pytest.mark.parametrize("payload", [{"role": "", "tools": []}, {"role": "x", "tools": "some"}])
def test_tool_access_route_rejects_bad_bodies(served, tokens, payload):
    before = served.world.rbac.state()
    response = httpx.post(f"{served.url}/tools/disable", json=payload, headers=tokens_of(tokens, "control"))
    assert response.status_code == 400 and response.json()["error"]["field"] in ("role", "tools")
    assert served.world.rbac.state() == before


def test_extension_route_bodies_are_bounded(served, tokens):
    def chunks():
        yield b'{"role": "support", "tools": ["'
        yield b"x" * (1024 * 1024)
        yield b'"]}'

    response = httpx.post(f"{served.url}/tools/disable", content=chunks(), headers=tokens_of(tokens, "control"))
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"


def test_serve_refuses_a_bad_reset_to():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "agentenv", "serve", "helpdesk", "--reset-to", "sideways"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--reset-to sideways: must be `loaded`" in done.stderr


def test_trigger_route_takes_the_reference_trigger_language(served, tokens):
    auth = tokens_of(tokens, "control")
    theirs = {"id": "lock", "when": {"type": "action", "tool": "get_ticket", "roles": ["support"]},
              "actions": [{"type": "permission", "action": "disable", "role": "support", "tools": ["get_order"]}]}
    registered = httpx.post(f"{served.url}/triggers/register", json={"triggers": [theirs]}, headers=auth)
    assert registered.status_code == 200, registered.text
    assert served.world.triggers["lock"].definition.kind == "tool_call"
    support = tokens_of(tokens, "support")
    httpx.post(f"{served.url}/rest/tools/get_ticket", json={"ticket_id": "TCK-9001"}, headers=support)
    assert not served.world.rbac.permits("support", "get_order")
    untranslatable = {"id": "nl", "when": {"type": "action", "tool": "get_ticket"},
                      "actions": [{"type": "nl", "instruction": "reply"}]}
    refused = httpx.post(f"{served.url}/triggers/register", json={"triggers": [untranslatable]}, headers=auth)
    assert refused.status_code == 400 and refused.json()["error"]["field"] == "triggers.0.actions.0.type"
    assert "nl" not in served.world.triggers
