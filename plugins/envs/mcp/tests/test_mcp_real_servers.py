"""Real third-party MCP servers from PyPI as envs of a helpdesk world: in process, and served by `agentenv serve
--mcp` to the official MCP SDK client, role by role."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from agentenv_mcp.api import attach, build_spec, close_servers
from agentenv_runtime import build_world
from agentenv_testing.services import agentenv_serve

pytestmark = pytest.mark.slow  # makes venvs of the servers (once per session)


def git_spec(servers_bin: Path, repo: Path) -> str:
    return f"{shlex.quote(str(servers_bin / 'mcp-server-git'))} --repository {shlex.quote(str(repo))}"


def time_spec(servers_bin: Path) -> str:
    return f"{shlex.quote(str(servers_bin / 'mcp-server-time'))} --local-timezone UTC"


def ok(outcome: Any) -> Any:
    assert outcome.ok, outcome.error
    return outcome.result


def test_git_time_and_sqlite_beside_helpdesk_in_one_world(
    servers_bin: Path, sqlite_bin: Path, repo: Path, tmp_path: Path
) -> None:
    world = build_world("helpdesk", artifacts=["acme"])
    sqlite = [str(sqlite_bin / "mcp-server-sqlite"), "--db-path", str(tmp_path / "notes.db")]
    attach(
        world,
        [
            build_spec("git", git_spec(servers_bin, repo), where="test"),
            build_spec("time", time_spec(servers_bin), where="test"),
            build_spec("sqlite", {"command": sqlite}, where="test"),
        ],
    )
    try:
        assert list(world.envs) == ["helpdesk", "git", "time", "sqlite"]
        assert {"git_log", "git_commit", "get_current_time", "read_query", "get_ticket"} <= set(world.tools)
        assert "Initial" in str(ok(world.call("git_log", {"repo_path": str(repo)})))
        now = ok(world.call("get_current_time", {"timezone": "UTC"}))
        assert now["timezone"] == "UTC"
        ok(world.call("create_table", {"query": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"}))
        ok(world.call("write_query", {"query": "INSERT INTO notes (body) VALUES ('refund approved')"}))
        assert "refund approved" in str(ok(world.call("read_query", {"query": "SELECT body FROM notes"})))

        # The server's own schema refuses bad arguments before the call reaches it.
        refused = world.call("get_current_time", {"timezone": 3})
        assert refused.error is not None and refused.error["code"] == "invalid_arguments"
        assert refused.error["errors"][0]["field"] == "timezone"
        # A call the server itself fails is an error naming the env's tool, and the world goes on.
        failed = world.call("get_current_time", {"timezone": "Mars/Olympus"})
        assert failed.error is not None and failed.error["code"] == "upstream_error"
        assert failed.error["message"].startswith("time.get_current_time:")
        assert ok(world.call("get_ticket", {"ticket_id": "TCK-9001"}))["ticket_id"] == "TCK-9001"

        calls = [(e["tool"], e["error"] is None) for e in world.trajectory.events if e["kind"] == "tool_call"]
        assert calls[:2] == [("git_log", True), ("get_current_time", True)]
        assert ("get_current_time", False) in calls and calls[-1] == ("get_ticket", True)

        first = world.env("sqlite").connection
        world.reset()  # each server is started again (the sqlite file, on disk, is the server's, and stays)
        assert world.env("sqlite").connection is not first
        assert "refund approved" in str(ok(world.call("read_query", {"query": "SELECT body FROM notes"})))
    finally:
        close_servers(world)


ROLE_FILE = """
[roles.support]
tools = ["*"]
deny = ["git_commit", "git_add", "git_reset", "issue_refund"]
token = "env:TOKEN_SUPPORT"

[roles.lead]
tools = ["*"]
token = "env:TOKEN_LEAD"
"""
TOKENS = {"support": "tok-support", "lead": "tok-lead", "control": "tok-control"}


@pytest.fixture
def served(servers_bin: Path, repo: Path, tmp_path: Path) -> Iterator[str]:
    """`agentenv serve helpdesk --mcp git=… --mcp time=…` on a free loopback port; its URL."""
    roles = tmp_path / "roles.toml"
    roles.write_text(ROLE_FILE)
    args = ["helpdesk", "-a", "acme", "--role-file", str(roles), "--token", "control=env:TOKEN_CONTROL"]
    args += ["--mcp", f"git={git_spec(servers_bin, repo)}", "--mcp", f"time={time_spec(servers_bin)}"]
    env = {**os.environ, "TOKEN_SUPPORT": TOKENS["support"], "TOKEN_LEAD": TOKENS["lead"]}
    env["TOKEN_CONTROL"] = TOKENS["control"]
    with agentenv_serve(args, env=env) as url:
        yield url


async def tools_and_calls(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> tuple[set[str], list[Any]]:
    """The role's tool names and the results of `calls`, through the official MCP SDK client."""
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        return names, [await session.call_tool(name, arguments) for name, arguments in calls]


def test_served_world_lists_and_calls_their_tools_by_role(served: str, repo: Path) -> None:
    where = {"repo_path": str(repo)}
    commit = ("git_commit", where | {"message": "Note TCK-9001 refund"})
    support, (log, denied) = asyncio.run(tools_and_calls(served, TOKENS["support"], [("git_log", where), commit]))
    (repo / "refunds.md").write_text("TCK-9001: refunded 89.99\n")
    lead, (added, committed) = asyncio.run(
        tools_and_calls(served, TOKENS["lead"], [("git_add", where | {"files": ["refunds.md"]}), commit])
    )
    assert {"git_log", "git_status", "get_current_time", "convert_time", "get_ticket"} <= support
    assert not {"git_commit", "git_add", "issue_refund"} & support
    assert {"git_commit", "git_add", "issue_refund"} <= lead
    assert log.is_error is False and "Initial" in str(log.structured_content or log.content)
    assert denied.is_error and denied.structured_content["error"]["code"] == "forbidden"
    assert added.is_error is False and committed.is_error is False
    head = subprocess.run(["git", "log", "-1", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True)
    assert head.stdout.strip() == "Note TCK-9001 refund"  # the real server changed the real repository

    answer = httpx.post(
        f"{served}/agentenv",
        json={"jsonrpc": "2.0", "id": 1, "method": "trajectory/get", "params": {}},
        headers={"Authorization": f"Bearer {TOKENS['control']}"},
    ).json()["result"]
    calls = [(e["role"], e["tool"], e["error"] is None) for e in answer["events"] if e["kind"] == "tool_call"]
    assert calls == [
        ("support", "git_log", True),
        ("support", "git_commit", False),
        ("lead", "git_add", True),
        ("lead", "git_commit", True),
    ]
    card = httpx.get(f"{served}/.well-known/agent-env.json", headers={"Authorization": "Bearer tok-lead"}).json()
    children = {child["name"]: child for child in card["children_environments"]}
    assert list(children) == ["helpdesk", "git", "time"]
    assert "git_log" in {tool["name"] for tool in children["git"]["capabilities"]["tools"]}
