"""Replay the fuzz corpus (`tests/fuzz/`, see its README): zero tracebacks, zero 5xx, state unchanged after
refusals. Task files and bundles go through `agentenv run` in process; hostile arguments go to every tool of a
served world over REST, JSON-RPC and MCP (the official client, through `McpToolAccess`) and to the world in
process."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from agentenv_gateway.app import build_app
from agentenv_gateway.client import McpToolAccess
from agentenv_gateway.server import serve_in_thread
from agentenv_runtime import World, build_world
from agentenv_testing.installs import CliResult

CORPUS = Path(__file__).parent / "fuzz"
ROLES = {"support": {"tools": ["*"], "deny": ["issue_refund"]}}
TOKENS = {"support": "tok-fuzz-support", "control": "tok-fuzz-control"}
SUPPORT = {"authorization": f"Bearer {TOKENS['support']}", "content-type": "application/json"}
BATCH = 32

Agentenv = Callable[..., CliResult]


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def generated_tasks(folder: Path) -> list[Path]:
    """Corpus entries too big (or impossible) to keep as files in the repo."""
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    deep = folder / "deep.json"
    deep.write_text('{"name": "deep", "steps": ' + nested(50_000) + "}")
    made.append(deep)
    deep_toml = folder / "deep.toml"
    deep_toml.write_text("name = 'x'\nsteps = " + nested(5_000) + "\n")
    made.append(deep_toml)
    chain = [{"id": "s0", "type": "deploy_env", "envs": ["helpdesk"]}]
    chain += [
        {"id": f"s{i}", "type": "sync_env_clock", "env": "s0", "depends_on": [f"s{i - 1}"]} for i in range(1, 1000)
    ]
    (folder / "chain.json").write_text(json.dumps({"name": "chain", "steps": chain}))
    made.append(folder / "chain.json")
    cycle = [
        {"id": f"c{i}", "type": "deploy_env", "envs": ["helpdesk"], "depends_on": [f"c{(i + 1) % 2000}"]}
        for i in range(2000)
    ]
    (folder / "cycle.json").write_text(json.dumps({"name": "cycle", "steps": cycle}))
    made.append(folder / "cycle.json")
    try:
        odd = Path(os.fsdecode(bytes(folder / "task-") + b"\xff.json"))
        odd.write_text(json.dumps({"name": "odd", "steps": [{"id": "a", "type": "deploy_env", "envs": ["helpdesk"]}]}))
        made.append(odd)
    except (OSError, UnicodeError):  # a file system that only takes UTF-8 names: nothing to test there
        pass
    return made


def corpus_tasks() -> list[Path]:
    return sorted((CORPUS / "tasks").iterdir())


def assert_clean(result: CliResult, *codes: int) -> None:
    """An exit code in `codes`, no traceback, and every stderr line an error line (or its continuation)."""
    assert result.returncode in codes, result
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    if result.returncode == 2:
        assert lines and lines[0].startswith("error: "), result.stderr


@pytest.fixture
def cli(agentenv_config: Any, agentenv_cli: Agentenv) -> Agentenv:
    return agentenv_cli


@pytest.mark.parametrize("task", corpus_tasks(), ids=lambda p: p.name)
def test_corpus_task_file_is_refused_or_run_cleanly(task: Path, cli: Agentenv) -> None:
    dry = cli("run", str(task), "--dry-run")
    assert_clean(dry, 0, 2)
    run = cli("run", str(task), "--json")
    assert_clean(run, 0, 1, 2)
    if dry.returncode == 2:  # what a dry run refuses, a run refuses with the same lines, before anything starts
        assert run.returncode == 2 and run.stderr == dry.stderr, run
        assert cli("runs", "list", "--json").json() == [], "the refused task started a run"


def test_generated_task_files_are_refused_or_run_cleanly(tmp_path: Path, cli: Agentenv) -> None:
    for task in generated_tasks(tmp_path / "generated"):
        assert_clean(cli("run", str(task), "--dry-run"), 0, 2)
    chain = cli("run", str(tmp_path / "generated" / "chain.json"), "--dry-run")
    assert chain.returncode == 0, chain  # a long chain is a valid task, checked without recursion
    assert "cycle" in cli("run", str(tmp_path / "generated" / "cycle.json")).stderr


@pytest.mark.parametrize("bundle", sorted((CORPUS / "bundles").iterdir()), ids=lambda p: p.name)
def test_corpus_bundle_is_refused_cleanly(bundle: Path, cli: Agentenv) -> None:
    result = cli("run", str(bundle), "--dry-run")
    assert_clean(result, 2)
    assert str(bundle) in result.stderr or "no tasks" in result.stderr


def test_overlong_bundle_name_is_refused_cleanly(cli: Agentenv) -> None:
    result = cli("run", "b" * 300)
    assert_clean(result, 2)
    assert "no bundle" in result.stderr


# ---- hostile arguments ------------------------------------------------------------------------------------
def hostile() -> tuple[list[Any], list[Any]]:
    corpus = json.loads((CORPUS / "arguments.json").read_text())
    deep: Any = "leaf"
    for _ in range(200):
        deep = {"d": deep}
    values = [*corpus["values"], "x" * 200_000, deep, " ".join(["word"] * 5_000), list(range(10_000))]
    return values, corpus["arguments"]


def payloads(tool: dict[str, Any], values: list[Any], whole: list[Any]) -> Iterator[Any]:
    properties = list((tool.get("inputSchema") or {}).get("properties") or {}) or ["query"]
    for value in values:
        yield dict.fromkeys(properties, value)
    yield from whole


@pytest.fixture(scope="module")
def served_world() -> Iterator[tuple[str, World]]:
    world = build_world("slack,email,helpdesk", artifacts=["acme"], roles=ROLES)
    app = build_app(world, tokens=TOKENS)
    with serve_in_thread(app) as url:
        yield url, world


def _rest(http: httpx.Client, name: str, arguments: Any) -> tuple[int, Any]:
    response = http.post(f"/rest/tools/{name}", content=json.dumps(arguments).encode())
    return response.status_code, response.json()


def _rpc(http: httpx.Client, name: str, batch: list[Any]) -> tuple[int, Any]:
    body = [
        {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        for i, arguments in enumerate(batch)
    ]
    response = http.post("/agentenv", content=json.dumps(body).encode())
    return response.status_code, response.json()


def over_mcp(arguments: Any) -> bool:
    """The payloads that once broke MCP sessions: unencodable text, NUL, huge or deep values (the rest of
    the corpus goes over REST and JSON-RPC only, to keep the test inside its CI budget)."""
    text = json.dumps(arguments)
    return "\\ud" in text or "\\u0000" in text or len(text) > 10_000 or text.count("{") > 50


def test_hostile_arguments_to_every_tool_over_every_transport(served_world: tuple[str, World]) -> None:
    url, world = served_world
    values, whole = hostile()
    access = McpToolAccess(url, TOKENS["support"], role="support")
    http = httpx.Client(base_url=url, headers=SUPPORT, timeout=60)
    refused = 0
    try:
        for tool in world.list_tools():
            name = tool["name"]
            batch = list(payloads(tool, values, whole))
            before = world.snapshot()
            changed = False
            for arguments in batch:
                status, body = _rest(http, name, arguments)
                assert status < 500, (name, arguments if len(json.dumps(arguments)) < 300 else "…", body)
                changed |= status == 200
                refused += status != 200
                if over_mcp(arguments):
                    outcome = access.call_tool(name, arguments if isinstance(arguments, dict) else {"value": arguments})
                    assert outcome["ok"] or outcome["error"]["code"] != "unreachable", (name, outcome)
                    changed |= bool(outcome["ok"])
            for start in range(0, len(batch), BATCH):
                status, replies = _rpc(http, name, batch[start : start + BATCH])
                assert status in (200, 413), replies  # 413: the batch is bigger than the body limit
                for reply in replies if isinstance(replies, list) else [replies]:  # a refused batch: one error
                    assert "error" not in reply or reply["error"]["code"] != -32603, reply  # no internal error
                    changed |= bool(reply.get("result", {}).get("ok"))
            if not changed:  # every call was refused: nothing may have changed
                assert world.snapshot() == before, f"a refused call to {name} changed the world"
            else:
                world.reset()
    finally:
        access.close()
        http.close()
    assert refused > 1000
    trajectory = httpx.post(
        f"{url}/agentenv",
        json={"jsonrpc": "2.0", "id": 1, "method": "trajectory/get", "params": {"limit": 100000}},
        headers={"authorization": f"Bearer {TOKENS['control']}"},
        timeout=60,
    )
    assert trajectory.status_code == 200  # readable after every hostile call
    for line in world.trajectory.to_jsonl().splitlines():
        json.loads(line)


def test_hostile_arguments_in_process_never_raise() -> None:
    world = build_world("slack,email,helpdesk", artifacts=["acme"], roles=ROLES)
    values, whole = hostile()
    for tool in world.list_tools():
        before = world.snapshot()
        changed = False
        for arguments in payloads(tool, values, whole):
            outcome = world.call(tool["name"], arguments if isinstance(arguments, dict) else {"value": arguments})
            changed |= outcome.ok
            if outcome.error is not None:
                json.dumps(outcome.error, ensure_ascii=False).encode("utf-8")  # echoable as valid text
        if not changed:
            assert world.snapshot() == before, tool["name"]
        else:
            world.reset()


# ---- hostile request bodies on every route of every served surface ----------------------------------------
def hostile_values() -> list[bytes]:
    """JSON values (and not-quite-JSON) that once answered HTTP 500: integers past the interpreter's 4,300-digit
    limit, nesting far past the parser's recursion, broken text; plus ordinary edge values."""
    values = [b"1" * digits for digits in (4301, 5000, 20_000)] + [b"-" + b"9" * 4301, b"1" * 4300]
    for depth in (999, 1001, 5_000, 100_000):
        values += [b"[" * depth + b"]" * depth, b'{"a":' * depth + b"1" + b"}" * depth]
    values += [b'[{"a":[' * 2_000 + b"]}]" * 2_000, b"[" * 100_000, b'{"a":' * 100_000]
    values += [b"\xff\xfe", b'"\xc3\x28"', b'"\\ud800"', b"NaN", b"-Infinity", b"1e999999", b"", b"null", b"[]"]
    values += [b"{}", b'"x"', b"true", b"0", b"-0.0", b'{"a":1,"a":2}', b"\x00", b"{", b"]", b"1 2"]
    return values


ENVELOPES: list[Callable[[bytes], bytes]] = [
    lambda v: v,
    lambda v: b'{"jsonrpc":"2.0","id":1,"method":"data/get","params":' + v + b"}",
    lambda v: b'{"jsonrpc":"2.0","id":' + v + b',"method":"tools/list"}',
    lambda v: b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_ticket","arguments":{"ticket_id":'
    + v + b"}}}",
    lambda v: b"[" + v + b"]",
    lambda v: b'{"ticket_id":' + v + b"}",
    lambda v: b'{"virtual_time":' + v + b',"virtual_seconds_per_real_second":' + v + b"}",
    lambda v: b'{"action":' + v + b',"tool_name":"get_ticket","arguments":' + v + b"}",
    lambda v: b'{"type":"reset","data":' + v + b"}",
    lambda v: b'{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","parts":['
    + v + b'],"messageId":"m"}}}',
]
GATEWAY_ROUTES = [
    ("POST", "/rest/tools/get_ticket"), ("POST", "/agentenv"), ("POST", "/envs/helpdesk/agentenv"),
    ("PUT", "/clock/set-time"), ("POST", "/triggers/register"), ("POST", "/tools/disable"), ("POST", "/step"),
    ("POST", "/mcp"), ("POST", "/tools/enable"), ("POST", "/triggers/remove"), ("POST", "/rest/tools/issue_refund"),
]


def hostile_bodies() -> list[bytes]:
    return [envelope(value) for value in hostile_values() for envelope in ENVELOPES]


def test_hostile_bodies_get_no_5xx_on_any_route_of_any_served_surface(served_world: tuple[str, World]) -> None:
    from agentenv_a2a.cli import build_served_agent
    from agentenv_openenv.app import build_app as openenv_app
    from agentenv_rl.api import Template
    from starlette.testclient import TestClient

    url, world = served_world
    bodies = hostile_bodies()
    control = {"authorization": f"Bearer {TOKENS['control']}", "content-type": "application/json",
               "accept": "application/json, text/event-stream"}

    def post_all(client: Any, routes: list[tuple[str, str]], headers: dict[str, str]) -> int:
        """Every hostile body to every route: no 5xx; how many were sent."""
        for method, path in routes:
            for body in bodies:
                status = client.request(method, path, content=body, headers=headers).status_code
                assert status < 500, (path, body[:80], status)
        return len(routes) * len(bodies)

    with httpx.Client(base_url=url, timeout=60) as http:
        cases = post_all(http, GATEWAY_ROUTES, control)
        world.reset()
    json_type = {"content-type": "application/json"}
    openenv = openenv_app(Template("support-refund"), 2)
    with TestClient(openenv, raise_server_exceptions=False) as client:
        cases += post_all(client, [("POST", "/reset"), ("POST", "/step")], json_type)
        with client.websocket_connect("/ws") as ws:
            for body in bodies[::7]:
                ws.send_bytes(body)
                assert ws.receive_json()["type"] in ("error", "observation", "state"), body[:80]
                cases += 1
    a2a, _ = build_served_agent(env="helpdesk", artifacts=["acme"], role="default", agent_kind="scripted",
                                agent_settings={"policy_data": {"turn": []}}, name=None, description=None, url=None)
    with TestClient(a2a, raise_server_exceptions=False) as client:
        cases += post_all(client, [("POST", "/"), ("POST", "/agentenv")], json_type)
    assert cases >= 5_000, cases
