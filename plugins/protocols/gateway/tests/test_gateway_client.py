"""`RemoteWorld` and `McpToolAccess`: a served world used through the `World` interface, from another thread."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from agentenv import get_host
from agentenv.contracts import kinds
from agentenv_gateway.client import McpToolAccess, RemoteUnavailable, RemoteWorld, mcp_outcome, wait_for_card
from agentenv_runtime import World, WorldError, build_world

# The same roles and tokens as conftest's served world (pytest's importlib mode cannot import conftest).
ROLES = {"support": {"tools": ["*"], "deny": ["issue_refund"]}, "billing_lead": {"tools": ["*"]}}
TOKENS = {"support": "tok-support", "billing_lead": "tok-billing", "control": "tok-control"}
REFUND = {"order_id": "ORD-5001", "amount": 89.99, "reason": "Boots arrived with a split sole"}
NUDGE = {
    "id": "nudge",
    "kind": "time",
    "when": {"at": "2026-11-24T10:00:00Z"},
    "actions": [{"call_tool": {"tool": "post_message", "args": {"channel": "support", "text": "Any news?"}}}],
}


def mirror_envs() -> list:
    host = get_host()
    return [host.get(kinds.ENVS, name)() for name in ("slack", "email", "helpdesk")]


def remote_for(served: Any) -> RemoteWorld:
    trigger_kinds = {name: entry.obj for name, entry in get_host().registry(kinds.TRIGGER_KINDS).items()}
    return RemoteWorld(mirror_envs(), url=served.url, tokens=TOKENS, roles=ROLES, trigger_kinds=trigger_kinds)


@pytest.fixture
def remote(served: Any) -> Iterator[RemoteWorld]:
    world = remote_for(served)
    yield world
    world.close()


def test_calls_go_through_the_served_world_as_each_role(served: Any, remote: RemoteWorld) -> None:
    assert isinstance(remote, World)
    names = {t["name"] for t in remote.list_tools("support")}
    assert "issue_refund" not in names and "get_ticket" in names
    assert len(remote.list_tools("billing_lead")) == len(served.world.list_tools("billing_lead"))
    ticket = remote.call("get_ticket", {"ticket_id": "TCK-9001"}, role="support")
    assert ticket.ok and ticket.result["customer_email"] == "dana.kim@example.com"
    refused = remote.call("issue_refund", REFUND, role="support")
    assert refused.error is not None and refused.error["code"] == "forbidden"
    bad = remote.call("get_ticket", {"ticket": "x"}, role="support")
    assert bad.error is not None and bad.error["code"] == "invalid_arguments"
    with pytest.raises(WorldError, match="no token for role 'stranger'"):
        remote.call("get_ticket", {}, role="stranger")
    assert [e["tool"] for e in served.world.trajectory.events] == ["get_ticket", "issue_refund", "get_ticket"]


def test_tool_access_is_an_mcp_client_with_the_roles_token(served: Any, remote: RemoteWorld) -> None:
    access = remote.tool_access("billing_lead")
    assert isinstance(access, McpToolAccess)
    assert {t["name"] for t in access.list_tools()} == {t["name"] for t in served.world.list_tools("billing_lead")}
    assert access.call_tool("verify_order", {"order_id": "ORD-5001", "note": "photo"})["ok"] is True
    outcome = access.call_tool("issue_refund", REFUND)
    assert outcome["ok"] is True and outcome["result"]["refund"]["amount"] == 89.99
    channels = access.call_tool("list_channels", {})
    assert channels["ok"] and isinstance(channels["result"], list)  # not the {"result": …} MCP wrapper
    too_much = access.call_tool("issue_refund", REFUND | {"amount": 100.0})
    assert too_much["ok"] is False and too_much["error"]["field"] == "amount"
    support = remote.tool_access("support")
    assert "issue_refund" not in {t["name"] for t in support.list_tools()}
    assert support.call_tool("issue_refund", REFUND)["error"]["code"] == "forbidden"
    remote.set_tool_access("support", disable=["get_ticket"])  # the list follows mid-session changes
    assert "get_ticket" not in {t["name"] for t in support.list_tools()}
    assert remote.rbac.state()["support"]["deny"] == ["get_ticket", "issue_refund"]
    remote.close()
    assert support.connection.session is None


def test_clock_triggers_and_time_travel(served: Any, remote: RemoteWorld) -> None:
    remote.set_clock("2026-11-24T09:00:00Z", mode="frozen")
    assert served.world.clock.now().isoformat().startswith("2026-11-24T09:00:00")
    assert remote.clock.now() == served.world.clock.now()
    with pytest.raises(WorldError, match="unknown kind"):
        remote.add_trigger({"id": "bad", "kind": "nope", "actions": []})
    remote.add_trigger(NUDGE)
    assert set(served.world.triggers) == {"nudge"} and set(remote.triggers) == {"nudge"}
    with pytest.raises(WorldError, match="already registered"):
        remote.add_trigger(NUDGE)
    assert remote.advance(1800) == 0
    assert remote.run_until_idle() == 1
    assert remote.clock.now().isoformat().startswith("2026-11-24T10:00:00")
    posted = [e for e in remote.trajectory.events if e.get("tool") == "post_message"]
    assert posted and posted[0]["trigger"] == "nudge"
    remote.add_trigger(dict(NUDGE, id="later", when={"at": "2026-11-25T10:00:00Z"}))
    assert remote.remove_trigger("later") is True
    assert remote.remove_trigger("later") is False
    assert set(served.world.triggers) == {"nudge"}


def test_state_snapshot_restore_reset_export_and_env_queries(served: Any, remote: RemoteWorld) -> None:
    before = remote.snapshot()
    assert before == served.world.snapshot()
    refunds_before = served.world.export()["helpdesk"]["refunds"]
    assert remote.call("verify_order", {"order_id": "ORD-5001", "note": "ok"}, role="billing_lead").ok
    assert remote.call("issue_refund", REFUND, role="billing_lead").ok
    helpdesk = remote.env("helpdesk")  # pulled: SQL checks see the served state
    assert helpdesk.query("SELECT SUM(amount_cents) AS c FROM refunds WHERE order_id = 'ORD-5001'")[0]["c"] == 8999
    assert remote.export()["helpdesk"]["refunds"] == served.world.export()["helpdesk"]["refunds"]
    remote.restore(before)
    assert served.world.export()["helpdesk"]["refunds"] == refunds_before
    assert remote.envs["helpdesk"].query("SELECT COUNT(*) AS n FROM refunds")[0]["n"] == len(refunds_before)
    remote.reset()
    assert served.world.trajectory.events == [] and remote.trajectory.events == []
    with pytest.raises(WorldError, match="no env 'nope'"):
        remote.env("nope")
    with pytest.raises(WorldError, match=r"not valid base64|cannot restore"):
        remote.rpc("state/restore", {"snapshot": "%%%"})


def test_loading_into_a_mirror_env_loads_the_served_env() -> None:
    from agentenv_gateway.app import build_app
    from agentenv_gateway.server import serve_in_thread
    from agentenv_runtime import Artifact

    world = build_world("slack,email,helpdesk", roles=ROLES)  # served without data
    with serve_in_thread(build_app(world, tokens=TOKENS)) as url:
        remote = remote_for(SimpleNamespace(url=url, world=world))
        try:
            artifact = Artifact.from_file(type(remote.envs["helpdesk"]).artifact_paths()["acme"])
            remote.env("helpdesk").load(artifact)
            assert {"ticket_id": "TCK-9001"} in world.env("helpdesk").query("SELECT ticket_id FROM tickets")
            assert remote.envs["helpdesk"].loaded[-1].sha256 == artifact.sha256
            remote.call("close_ticket", {"ticket_id": "TCK-9001", "resolution": "done"}, role="billing_lead")
            remote.reset()  # the load is what reset returns to, on the server too
            rows = world.env("helpdesk").query("SELECT status FROM tickets WHERE ticket_id = 'TCK-9001'")
            assert rows == [{"status": "open"}]
        finally:
            remote.close()


def test_trajectory_matches_the_servers_and_keeps_local_events_in_order(served: Any, remote: RemoteWorld) -> None:
    remote.call("get_ticket", {"ticket_id": "TCK-9001"}, role="support")
    remote.trajectory.record("agent_turn", "2026-11-24T10:00:00+00:00", agent="done")
    remote.call("get_order", {"order_id": "ORD-5001"}, role="support")
    kinds = [(e["seq"], e["kind"]) for e in remote.trajectory.events]
    assert kinds == [(0, "tool_call"), (1, "agent_turn"), (2, "tool_call")]
    served_calls = [
        {k: v for k, v in e.items() if k not in ("seq", "real_time")} for e in served.world.trajectory.events
    ]
    local_calls = [
        {k: v for k, v in e.items() if k not in ("seq", "real_time")}
        for e in remote.trajectory.events
        if e["kind"] == "tool_call"
    ]
    assert local_calls == served_calls
    assert remote.trajectory.digest() == remote.trajectory.digest()
    assert remote.trajectory.to_jsonl().count(b"\n") == 3


def test_errors_are_world_errors_that_say_what_happened(served: Any, remote: RemoteWorld) -> None:
    with pytest.raises(WorldError, match=r"clock/advance: .*clock is not set"):
        remote.advance(10)
    with pytest.raises(WorldError, match="method not found"):
        remote.rpc("no/such")
    with pytest.raises(WorldError, match="cannot be forked"):
        remote.fork()
    with pytest.raises(WorldError, match="needs a 'control' token"):
        RemoteWorld(mirror_envs(), url=served.url, tokens={"support": "x"})
    gone = RemoteWorld(mirror_envs(), url="http://127.0.0.1:9", tokens=TOKENS, roles=ROLES)
    with pytest.raises(RemoteUnavailable, match="did not answer"):
        gone.snapshot()
    assert gone.trajectory.events == []  # a world that is gone keeps what was pulled last
    access = McpToolAccess("http://127.0.0.1:9", "t")
    assert access.call_tool("get_ticket", {})["error"]["code"] == "unreachable"
    gone.close()


def test_wait_for_card(served: Any) -> None:
    card = wait_for_card(served.url, TOKENS["control"], timeout=5)
    assert card["url"] == "/agentenv"
    with pytest.raises(TimeoutError, match="no Environment Card"):
        wait_for_card("http://127.0.0.1:9", None, timeout=0.2)
    with pytest.raises(RuntimeError, match="exited"):
        wait_for_card("http://127.0.0.1:9", None, timeout=5, alive=lambda: False)


def test_mcp_outcome_prefers_the_exact_json_text() -> None:
    class Block:
        type = "text"

        def __init__(self, text: str) -> None:
            self.text = text

    class Result:
        def __init__(self, text: str, structured: object, is_error: bool) -> None:
            self.content, self.structured_content, self.is_error = [Block(text)], structured, is_error

    assert mcp_outcome(Result('{"result": 1}', {"result": 1}, False)).result == {"result": 1}
    assert mcp_outcome(Result("[1, 2]", {"result": [1, 2]}, False)).result == [1, 2]
    error = mcp_outcome(Result('{"code": "x", "message": "m"}', {"error": {"code": "x", "message": "m"}}, True))
    assert error.error == {"code": "x", "message": "m"}
