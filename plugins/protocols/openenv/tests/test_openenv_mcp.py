"""OpenEnv's MCP mode on `agentenv openenv serve`: `list_tools`/`call_tool` actions, JSON-RPC on `/mcp` and
`/openapi.json`, checked on the wire and then with OpenEnv's own `MCPToolClient` and `openenv validate --url`
(openenv-core in its separate venv)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("issue_refund", {"order_id": "ORD-5001", "amount": 89.99, "reason": "damaged"}),
    ("close_ticket", {"ticket_id": "TCK-9001", "resolution": "Refunded 89.99."}),
    ("send_email", {"to": ["dana.kim@example.com"], "subject": "Refund", "body": "We refunded 89.99 for the boots."}),
]
ANSWER = "Refunded 89.99, closed TCK-9001, emailed Dana."


def rpc(http: httpx.Client, method: str, **params: Any) -> dict[str, Any]:
    reply: dict[str, Any] = http.post(
        "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    ).json()
    return reply


def test_mcp_actions_on_a_websocket_session_need_no_reset_to_list_tools(serve: Callable[..., str]) -> None:
    url = serve("support-refund").replace("http://", "ws://") + "/ws"

    async def exchange(ws: Any, message: dict[str, Any]) -> dict[str, Any]:
        await ws.send(json.dumps(message))
        reply: dict[str, Any] = json.loads(await ws.recv())
        return reply

    async def scenario() -> None:
        async with websockets.connect(url) as ws:
            listed = await exchange(ws, {"type": "step", "data": {"type": "list_tools"}})  # before any reset
            names = [tool["name"] for tool in listed["data"]["observation"]["tools"]]
            assert "issue_refund" in names and names[-1] == "submit_answer" and listed["data"]["done"] is False
            await exchange(ws, {"type": "reset", "data": {}})
            bad = await exchange(ws, {"type": "step", "data": {"type": "call_tool", "tool_name": "get_ticket"}})
            error = bad["data"]["observation"]["error"]
            assert error["error_type"] == "invalid_args" and "ticket_id" in error["message"]
            unknown = await exchange(ws, {"type": "step", "data": {"type": "call_tool", "tool_name": "nope"}})
            assert unknown["data"]["observation"]["error"]["error_type"] == "tool_not_found"
            dance = await exchange(ws, {"type": "step", "data": {"type": "dance"}})
            assert dance["type"] == "error" and dance["data"]["code"] == "VALIDATION_ERROR"
            for name, arguments in CALLS:
                step = {"type": "call_tool", "tool_name": name, "arguments": arguments}
                called = (await exchange(ws, {"type": "step", "data": step}))["data"]
                assert called["observation"]["error"] is None and called["observation"]["tool_name"] == name
            # JSON-RPC on the same connection acts on the same session
            rpc_listed = await exchange(
                ws, {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}}
            )
            assert rpc_listed["type"] == "mcp" and rpc_listed["data"]["id"] == 9
            submit = {"type": "call_tool", "tool_name": "submit_answer", "arguments": {"answer": ANSWER}}
            final = (await exchange(ws, {"type": "step", "data": submit}))["data"]
            assert final["done"] is True and final["reward"] == 1.0
            assert final["observation"]["result"] == {"data": {"score": 1.0, "passed": True}}
            late = await exchange(ws, {"type": "step", "data": submit})
            assert late["type"] == "error" and "episode is over" in late["data"]["message"]

    asyncio.run(scenario())


def test_the_mcp_endpoint_speaks_json_rpc_with_sessions_and_openapi_lists_the_routes(
    serve: Callable[..., str],
) -> None:
    url = serve("support-refund", "--max-sessions", "1")
    with httpx.Client(base_url=url, timeout=30) as http:
        document = http.get("/openapi.json").json()
        assert document["info"]["version"].startswith("1.") and {"/reset", "/step", "/state", "/mcp"} <= set(
            document["paths"]
        )
        assert http.get("/schema").json()["action"]["title"] == "AgentEnvAction"
        invalid = http.post("/mcp", json={})
        assert invalid.status_code == 200 and invalid.json()["error"]["code"] == -32600
        assert http.post("/mcp", content=b"{oops").json()["error"]["code"] == -32700
        assert rpc(http, "resources/list")["error"]["code"] == -32601
        assert "submit_answer" in {tool["name"] for tool in rpc(http, "tools/list")["result"]["tools"]}
        stateless = rpc(http, "tools/call", name="get_ticket", arguments={"ticket_id": "TCK-9001"})
        assert stateless["result"]["data"]["ticket_id"] == "TCK-9001" and stateless["result"]["done"] is False
        session = rpc(http, "openenv/session/create")["result"]["session_id"]
        full = rpc(http, "openenv/session/create")
        assert "sessions are in use" in full["error"]["message"]  # --max-sessions 1 counts /mcp sessions too
        failed = rpc(http, "tools/call", name="get_ticket", arguments={}, session_id=session)
        assert failed["error"]["data"]["code"] == "invalid_arguments"
        for name, arguments in CALLS:
            assert "result" in rpc(http, "tools/call", name=name, arguments=arguments, session_id=session)
        graded = rpc(http, "tools/call", name="submit_answer", arguments={"answer": ANSWER}, session_id=session)
        assert graded["result"]["reward"] == 1.0 and graded["result"]["done"] is True
        assert rpc(http, "openenv/session/close", session_id=session)["result"]["closed"] is True
        assert "unknown session_id" in rpc(http, "tools/list", session_id=session)["error"]["message"]
        assert "session_id" in rpc(http, "openenv/session/create")["result"]  # the slot is free again


MCP_CLIENT = """
import asyncio, json, sys
from openenv.core.mcp_client import MCPToolClient
from openenv.core.env_server.mcp_types import CallToolAction

async def episode(url, calls, answer, production=False):
    async with MCPToolClient(base_url=url) as env:
        env.use_production_mode = production
        tools = await env.list_tools()  # before reset, as verifiers' OpenEnv taskset does
        if not production:
            await env.reset()
        ticket = await env.call_tool("get_ticket", ticket_id="TCK-9001")
        try:
            await env.call_tool("get_ticket", ticket_id=5)
            refused = None
        except RuntimeError as exc:
            refused = str(exc)
        for name, arguments in calls:
            await env.call_tool(name, **arguments)
        if production:
            return {"tools": len(tools), "ticket": ticket["ticket_id"], "refused": refused,
                    "graded": await env.call_tool("submit_answer", answer=answer)}
        final = await env.step(CallToolAction(tool_name="submit_answer", arguments={"answer": answer}))
        return {"tools": len(tools), "ticket": ticket["ticket_id"], "refused": refused, "reward": final.reward,
                "done": final.done}

async def main(url, calls, answer, sessions):
    solved = await episode(url, calls, answer)
    wrong = await episode(url, calls[:1], "Refunded.")
    production = await episode(url, calls, answer, production=True)
    many = await asyncio.gather(*(episode(url, calls, answer) for _ in range(sessions)), return_exceptions=True)
    errors = [repr(r) for r in many if isinstance(r, BaseException)]
    rewards = sorted({r["reward"] for r in many if isinstance(r, dict)})
    print(json.dumps({"solved": solved, "wrong": wrong, "production": production, "errors": errors,
                      "rewards": rewards}))

asyncio.run(main(sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])))
"""


@pytest.mark.slow
def test_openenvs_mcp_tool_client_plays_episodes_in_64_concurrent_sessions(
    serve: Callable[..., str], openenv_python: Path
) -> None:
    url = serve("support-refund", "--max-sessions", "70")
    proc = subprocess.run(
        [str(openenv_python), "-c", MCP_CLIENT, url, json.dumps(CALLS), ANSWER, "64"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    solved, wrong, production = seen["solved"], seen["wrong"], seen["production"]
    assert solved["tools"] > 40 and solved["ticket"] == "TCK-9001" and "invalid_arguments" in solved["refused"]
    assert solved["reward"] == 1.0 and solved["done"] is True
    assert 0.0 <= wrong["reward"] < 1.0 and wrong["done"] is True
    assert production["tools"] == solved["tools"] and production["graded"] == {"score": 1.0, "passed": True}
    assert seen["errors"] == [] and seen["rewards"] == [1.0]


@pytest.mark.slow
def test_openenv_validate_url_passes_every_criterion(serve: Callable[..., str], openenv_python: Path) -> None:
    url = serve("support-refund")
    proc = subprocess.run(
        [str(openenv_python.with_name("openenv")), "validate", "--url", url],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(proc.stdout)
    failed = [c["id"] for c in report["criteria"] if not c["passed"]]
    assert proc.returncode == 0 and report["passed"] is True and failed == [], failed
    assert report["summary"]["passed_count"] == report["summary"]["total_count"] == 6
    assert report["mode"] == "simulation" and report["standard_profile"] == "openenv-http/1.x"


def test_the_mcp_endpoint_answers_hostile_json_with_a_parse_error_not_a_500() -> None:
    from agentenv_openenv.app import build_app
    from agentenv_rl.api import Template
    from starlette.testclient import TestClient

    app = build_app(Template("support-refund"), 2)
    json_type = {"content-type": "application/json"}
    with TestClient(app, raise_server_exceptions=False) as client:
        for body, why in (
            (b"[" * 100_000 + b"]" * 100_000, "nest too deeply"),
            (b'{"jsonrpc": "2.0", "id": NaN, "method": "tools/list"}', "NaN"),
            (b"\xff", "not UTF-8"),
        ):
            answer = client.post("/mcp", content=body, headers=json_type)
            assert answer.status_code == 200, (why, answer.text[:200])
            assert answer.json()["error"]["code"] == -32700 and why in answer.json()["error"]["message"]
