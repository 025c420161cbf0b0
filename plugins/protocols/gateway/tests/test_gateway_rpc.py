"""The JSON-RPC data plane at /agentenv: data/*, the extensions, and strict JSON-RPC errors."""

from __future__ import annotations

import base64
import gzip
import json

import httpx
import pytest


class Rpc:
    def __init__(self, url: str, token: str | None) -> None:
        self.url = f"{url}/agentenv"
        self.headers = {"authorization": f"Bearer {token}"} if token else {}
        self.next_id = 0

    def raw(self, body: bytes | str, **headers: str) -> httpx.Response:
        return httpx.post(self.url, content=body, headers=self.headers | headers)

    def reply(self, method: str, params: object = None) -> dict:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        response = httpx.post(self.url, json=message, headers=self.headers)
        assert response.status_code == 200, response.text
        reply = response.json()
        assert reply["id"] == self.next_id and reply["jsonrpc"] == "2.0"
        return reply

    def __call__(self, method: str, params: object = None) -> object:
        reply = self.reply(method, params)
        assert "error" not in reply, reply
        return reply["result"]

    def error(self, method: str, params: object = None) -> dict:
        reply = self.reply(method, params)
        assert "result" not in reply, reply
        return reply["error"]


@pytest.fixture
def rpc(served, tokens):
    return Rpc(served.url, tokens["control"])


def export(answer):
    """`{env: tables}` of a `data/get` answer (`{"parts": [data part per env]}`)."""
    assert set(answer) == {"parts"}
    return {part["metadata"]["env"]: part["data"] for part in answer["parts"]}


def test_data_get_reset_and_add(served, rpc):
    loaded = export(rpc("data/get"))
    assert set(loaded) == {"slack", "email", "helpdesk"}
    assert "TCK-9001" in {t["ticket_id"] for t in export(rpc("data/get", {"env": "helpdesk"}))["helpdesk"]["tickets"]}
    served.world.call("update_ticket", {"ticket_id": "TCK-9001", "status": "pending"})
    assert export(rpc("data/get", {"env": "helpdesk"})) != {"helpdesk": loaded["helpdesk"]}
    assert rpc("data/reset")["reset"] is True
    assert export(rpc("data/get")) == loaded
    assert served.world.trajectory.events == []

    channel = dict(loaded["slack"]["conversations"][0], id="C_NEW", name="escalations")
    document = {"name": "extra", "env": "slack", "version": "1.0.0", "data": {"conversations": [channel]}}
    gz = base64.b64encode(gzip.compress(json.dumps(document).encode())).decode()
    text_channel = dict(channel, id="C_TEXT", name="text-part")
    file_doc = dict(document, data={"conversations": [dict(channel, id="C_FILE", name="file-part")]})
    result = rpc(
        "data/add",
        {
            "env": "slack",
            "parts": [
                {"kind": "data", "data": {"conversations": [dict(channel, id="C_DATA", name="data-part")]}},
                {"kind": "text", "text": json.dumps({"conversations": [text_channel]})},
                {"kind": "file", "file": {"bytes": base64.b64encode(json.dumps(file_doc).encode()).decode()}},
                {"kind": "data", "data": document},
            ],
        },
    )
    assert len(result["loaded"]) == 4 and result["loaded"][3].startswith("slack/extra@1.0.0#")
    ids = {c["id"] for c in export(rpc("data/get", {"env": "slack"}))["slack"]["conversations"]}
    assert {"C_DATA", "C_TEXT", "C_FILE", "C_NEW"} <= ids
    rpc("data/reset")  # the added rows are now part of the loaded state
    assert {"C_DATA", "C_NEW"} <= {c["id"] for c in export(rpc("data/get", {"env": "slack"}))["slack"]["conversations"]}
    gz_doc = dict(document, data={"conversations": [dict(channel, id="C_GZ", name="gz-part")]})
    gz = base64.b64encode(gzip.compress(json.dumps(gz_doc).encode())).decode()
    assert rpc("data/add", {"env": "slack", "parts": [{"kind": "file", "file": {"bytes": gz, "name": "x.json.gz"}}]})


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"parts": [{"kind": "data", "data": {}}]}, "parts.0"),  # several envs: which one?
        ({"env": "nope", "parts": [{"kind": "data", "data": {}}]}, "env"),
        ({"env": "slack", "parts": []}, "parts"),
        ({"env": "slack", "parts": [{"kind": "data", "data": {"nope": []}}]}, "parts.0.data.nope"),
        (
            {"env": "slack", "parts": [{"kind": "data", "data": {"conversations": {"a": 1}}}]},
            "parts.0.data.conversations",
        ),
        ({"env": "slack", "parts": [{"kind": "text", "text": "{not json"}]}, "parts.0.text"),
        ({"env": "slack", "parts": [{"kind": "file", "file": {"bytes": "!!!"}}]}, "parts.0.file.bytes"),
        (
            {
                "env": "slack",
                "parts": [{"kind": "data", "data": {"name": "a", "env": "email", "version": "1", "data": {}}}],
            },
            "parts.0.data.env",
        ),
        ({"env": "slack", "parts": [{"kind": "video"}]}, "parts.0"),
    ],
)
def test_data_add_invalid_params_name_the_field(served, rpc, params, field):
    before = served.world.export()
    error = rpc.error("data/add", params)
    assert error["code"] == -32602
    assert error["data"]["field"].startswith(field), error
    assert served.world.export() == before


def test_data_add_is_all_or_nothing(served, rpc):
    before = served.world.export()
    channel = dict(before["slack"]["conversations"][0], id="C_OK", name="ok")
    duplicate = dict(before["slack"]["conversations"][0])  # same primary key as an existing row: the insert fails
    error = rpc.error(
        "data/add",
        {
            "env": "slack",
            "parts": [
                {"kind": "data", "data": {"conversations": [channel]}},
                {"kind": "data", "data": {"conversations": [duplicate]}},
            ],
        },
    )
    assert error["code"] == -32602 and error["data"]["field"] == "parts.1"
    assert served.world.export() == before
    rpc("data/reset")
    assert served.world.export() == before


def test_clock_triggers_access_trajectory(served, rpc, tokens):
    assert rpc("clock/get")["armed"] is False
    state = rpc("clock/set", {"start": "2026-11-24T09:00:00Z", "mode": "frozen", "timezone": "Europe/Berlin"})
    assert state["now"].startswith("2026-11-24T09:00:00") and state["local"].endswith("+01:00")
    error = rpc.error("clock/set", {"rate": -1})
    assert error["code"] == -32602 and error["data"]["field"] == "rate"
    error = rpc.error("clock/set", {"mode": "warp"})
    assert error["data"]["field"] == "mode"

    trigger = {
        "id": "nudge",
        "kind": "time",
        "when": {"at": "2026-11-24T10:00:00Z"},
        "actions": [
            {"call_tool": {"tool": "post_message", "args": {"channel": "support", "text": "Any news on TCK-9001?"}}}
        ],
    }
    on_refund = {
        "id": "audit",
        "kind": "tool_call",
        "when": {"tool": "get_ticket"},
        "actions": [{"set_tool_access": {"role": "support", "disable": ["get_ticket"]}}],
    }
    assert rpc("triggers/register", {"triggers": [trigger, on_refund]}) == {
        "registered": ["nudge", "audit"], "added": ["nudge", "audit"], "all": ["nudge", "audit"]}
    error = rpc.error(
        "triggers/register", {"triggers": [dict(trigger, id="other"), {"id": "bad", "kind": "nope", "actions": []}]}
    )
    assert error["data"]["field"] == "triggers.1"
    assert [t["id"] for t in rpc("triggers/state")["triggers"]] == ["nudge", "audit"]  # `other` rolled back
    assert rpc("triggers/state")["triggers"][0]["next_at"].startswith("2026-11-24T10:00:00")

    assert rpc("clock/advance", {"seconds": 3600})["fired"] == 1
    past_9999 = rpc.error("clock/advance", {"seconds": 1e15})  # clamped to 9999-12-31 without a word before
    assert past_9999["data"]["field"] == "seconds" and "years 1 to 9999" in past_9999["message"]
    assert rpc("clock/get")["now"].startswith("2026-11-24T10:00:00")
    posted = [e for e in served.world.trajectory.events if e["kind"] == "tool_call" and e["tool"] == "post_message"]
    assert posted and posted[0]["trigger"] == "nudge"

    support = {"authorization": f"Bearer {tokens['support']}"}
    ok = httpx.post(f"{served.url}/rest/tools/get_ticket", json={"ticket_id": "TCK-9001"}, headers=support)
    assert ok.status_code == 200
    again = httpx.post(f"{served.url}/rest/tools/get_ticket", json={"ticket_id": "TCK-9001"}, headers=support)
    assert again.status_code == 403  # the tool_call trigger took get_ticket away from support

    access = rpc("access/set", {"role": "support", "enable": ["get_ticket"], "disable": ["send_email"]})
    assert "get_ticket" in access["access"]["tools"] and "send_email" in access["access"]["deny"]
    listed = httpx.get(f"{served.url}/rest/tools", headers=support).json()["tools"]
    assert "send_email" not in {t["name"] for t in listed} and "get_ticket" in {t["name"] for t in listed}
    assert rpc.error("access/set", {"role": "support", "enable": ["nope"]})["data"]["field"] == "enable.0"
    assert rpc.error("access/set", {"enable": []})["data"]["field"] == "role"

    events = rpc("trajectory/get")
    assert events["total"] == len(served.world.trajectory.events)
    kinds = [e["kind"] for e in events["events"]]
    assert "trigger" in kinds and "access" in kinds
    tail = rpc("trajectory/get", {"since": events["total"] - 1})
    assert len(tail["events"]) == 1 and tail["events"][0]["seq"] == events["total"] - 1
    assert rpc("trajectory/get", {"since": 0, "limit": 2})["next"] == 2
    assert rpc.error("trajectory/get", {"since": -1})["data"]["field"] == "since"

    assert rpc("triggers/remove", {"id": "audit"}) == {"removed": "audit"}
    assert rpc.error("triggers/remove", {"id": "audit"})["data"]["field"] == "id"
    assert rpc("clock/clear")["armed"] is False
    assert rpc.error("clock/advance", {"seconds": 5})["data"]["field"] == "seconds"


def test_snapshot_and_restore(served, rpc):
    snap = rpc("state/snapshot")
    before = served.world.export()
    served.world.call("close_ticket", {"ticket_id": "TCK-9001", "resolution": "refunded"})
    assert served.world.export() != before
    assert rpc("state/restore", {"snapshot": snap["snapshot"]})["restored"] is True
    assert served.world.export() == before
    assert rpc.error("state/restore", {"snapshot": "%%%"})["data"]["field"] == "snapshot"
    garbage = base64.b64encode(b"AEWORLD1junk").decode()
    assert rpc.error("state/restore", {"snapshot": garbage})["code"] == -32602
    assert served.world.export() == before


def test_strict_jsonrpc_errors(served, rpc):
    before = served.world.export()
    parse = rpc.raw(b"{not json")
    assert parse.status_code == 200 and parse.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": parse.json()["error"]["message"]},
    }
    for body, code in [
        (b"[]", -32600),
        (b"42", -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "data/get"}', -32600),
        (b'{"jsonrpc": "2.0", "id": true, "method": "data/get"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 7}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "data/get", "extra": 1}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "data/nope"}', -32601),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "data/get", "params": [1]}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "data/get", "params": {"bogus": 1}}', -32602),
    ]:
        response = rpc.raw(body)
        assert response.status_code == 200, body
        assert response.json()["error"]["code"] == code, (body, response.json())
    assert rpc.error("data/get", {"bogus": 1})["data"]["field"] == "bogus"
    batch = rpc.raw(
        json.dumps(
            [
                {"jsonrpc": "2.0", "id": "a", "method": "clock/get"},
                {"jsonrpc": "2.0", "method": "clock/get"},  # notification: no reply
                {"jsonrpc": "2.0", "id": "b", "method": "nope"},
                7,
            ]
        )
    )
    replies = batch.json()
    assert [r.get("id") for r in replies] == ["a", "b", None]
    assert "result" in replies[0] and replies[1]["error"]["code"] == -32601 and replies[2]["error"]["code"] == -32600
    only_notification = rpc.raw(b'{"jsonrpc": "2.0", "method": "clock/get"}')
    assert only_notification.status_code == 204
    assert served.world.export() == before


def test_roles_and_limits_on_the_data_plane(served, tokens):
    support = Rpc(served.url, tokens["support"])
    forbidden = support.error("data/reset")
    assert forbidden["code"] == -32003
    assert support.error("access/set", {"role": "support", "enable": ["issue_refund"]})["code"] == -32003
    names = {t["name"] for t in support("tools/list")["tools"]}
    assert "issue_refund" not in names and "get_ticket" in names
    assert support("tools/call", {"name": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}})["ok"] is True
    assert support("tools/call", {"name": "issue_refund", "arguments": {}})["error"]["code"] == "forbidden"

    anonymous = Rpc(served.url, None)
    response = anonymous.raw(b'{"jsonrpc": "2.0", "id": 1, "method": "clock/get"}')
    assert response.status_code == 401 and response.json()["error"]["code"] == -32001
    wrong = Rpc(served.url, "not-a-token").raw(b'{"jsonrpc": "2.0", "id": 1, "method": "clock/get"}')
    assert wrong.status_code == 401

    control = Rpc(served.url, tokens["control"])
    big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "data/get", "params": {"env": "x" * (1024 * 1024)}})
    assert control.raw(big).status_code == 413

    def chunks():
        yield b'{"jsonrpc": "2.0", "id": 1, "method": "data/get", "params": {"env": "'
        for _ in range(17):
            yield b"y" * 65536
        yield b'"}}'

    streamed = httpx.post(f"{served.url}/agentenv", content=chunks(), headers=control.headers)
    assert streamed.status_code == 413
