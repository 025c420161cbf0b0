"""An MCP server's lifecycle follows the world's, and a bad server fails alone with an error naming its env.

The server here is `faulty_server.py`, a hand-written stdio server: no real server misbehaves on request. The
real third-party servers are in `test_mcp_real_servers.py`.
"""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

import pytest
from agentenv_mcp.api import McpServerError, attach, build_spec, close_servers, start_env
from agentenv_runtime import World, build_world

FAULTY = Path(__file__).with_name("faulty_server.py")


def spec(mode: str = "ok", name: str = "counter", **fields: object):
    """A faulty-server spec whose argv carries a unique marker, to find its process."""
    marker = uuid.uuid4().hex
    data = {"command": [sys.executable, str(FAULTY), mode, marker], **fields}
    return build_spec(name, data, where="test"), marker


def running(marker: str) -> bool:
    """Whether a process with `marker` in its command line is alive."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                return True
        except OSError:
            continue
    return False


def count(world: World) -> int:
    outcome = world.call("count", {})
    assert outcome.ok, outcome.error
    return int(outcome.result["calls"])


def test_reset_restarts_the_server_and_close_stops_it() -> None:
    server, marker = spec()
    world = build_world("helpdesk", artifacts=["acme"])
    attach(world, [server])
    assert world.call("bump", {"by": 5}).ok and count(world) == 5
    first = world.env("counter").connection
    world.reset()
    assert count(world) == 0  # a fresh server: its initial state
    assert world.env("counter").connection is not first and first.session is None
    close_servers(world)
    assert not running(marker)


def test_reset_calls_a_declared_reset_tool_instead_of_restarting() -> None:
    server, _ = spec(reset_tool="reset")
    env = start_env(server)
    try:
        connection = env.connection
        world = World([env])
        world.call("bump", {"by": 2})
        world.reset()
        assert count(world) == 0 and env.connection is connection
    finally:
        env.close()


def test_a_fork_gets_its_own_fresh_server() -> None:
    server, _ = spec()
    world = World([start_env(server)])
    clone = world.fork()
    try:
        world.call("bump", {"by": 3})
        assert count(world) == 3 and count(clone) == 0
        clone.call("bump", {"by": 1})
        assert count(world) == 3 and count(clone) == 1
    finally:
        close_servers(world)
        close_servers(clone)


def test_arguments_are_checked_against_its_schema_before_the_call() -> None:
    server, _ = spec()
    world = World([start_env(server)])
    try:
        refused = world.call("bump", {"by": 0})
        assert refused.error is not None and refused.error["code"] == "invalid_arguments"
        assert refused.error["errors"][0]["field"] == "by"
        assert world.call("bump", {}).error["errors"][0]["field"] == "by"  # type: ignore[index]
        assert count(world) == 0  # the server never saw the refused calls
        recorded = [(e["tool"], e["error"] is None) for e in world.trajectory.events if e["kind"] == "tool_call"]
        assert recorded == [("bump", False), ("bump", False), ("count", True)]
    finally:
        close_servers(world)


def test_its_tools_follow_rbac_and_fire_triggers() -> None:
    server, _ = spec()
    roles = {"viewer": {"tools": ["*"], "deny": ["bump"]}}
    world = build_world("helpdesk", artifacts=["acme"], roles=roles)
    attach(world, [server])
    try:
        world.check_roles()
        assert "bump" not in world.tool_names("viewer") and "count" in world.tool_names("viewer")
        assert world.call("bump", {"by": 1}, role="viewer").error["code"] == "forbidden"  # type: ignore[index]
        world.add_trigger(
            {
                "id": "note-bump",
                "kind": "tool_call",
                "when": {"tool": "bump"},
                "actions": [
                    {
                        "call_tool": {
                            "tool": "add_ticket_comment",
                            "args": {"ticket_id": "TCK-9001", "body": "counter bumped", "public": False},
                        }
                    }
                ],
            }
        )
        assert world.call("bump", {"by": 1}).ok
        comments = world.query("helpdesk", "SELECT body FROM ticket_comments WHERE ticket_id = 'TCK-9001'")
        assert {"body": "counter bumped"} in comments
    finally:
        close_servers(world)


def test_a_server_that_exits_at_start_is_named_with_its_last_words() -> None:
    server, _ = spec("exit", name="broken_db")
    with pytest.raises(McpServerError) as caught:
        start_env(server)
    message = str(caught.value)
    assert message.startswith("env broken_db: the MCP server") and "did not start" in message
    assert "cannot open the database: permission denied" in message


def test_a_server_that_hangs_is_stopped_after_its_start_timeout() -> None:
    server, marker = spec("hang", name="stuck", start_timeout=2)
    with pytest.raises(McpServerError, match=r"env stuck: .* did not answer within 2s"):
        start_env(server)
    assert not running(marker)  # its process did not outlive the failed start


def test_a_server_with_an_invalid_schema_is_refused_naming_the_tool() -> None:
    server, marker = spec("bad-schema", name="odd")
    with pytest.raises(McpServerError, match=r"env odd: tool 'broken': inputSchema is not a valid JSON Schema"):
        start_env(server)
    assert not running(marker)


def test_a_server_that_floods_stderr_works_and_keeps_only_a_tail() -> None:
    server, _ = spec("flood", name="loud")
    env = start_env(server)
    try:
        assert World([env]).call("bump", {"by": 1}).ok
        tail = env._stderr
        assert tail is not None
        # The server wrote all 32 MiB before it answered, so the answer means the pipe was drained as it wrote;
        # the drain thread may still hold the pipe's last buffer-full: wait for it (a deadline, not a timing check).
        deadline = time.monotonic() + 30
        while not env.stderr_tail().endswith("flood done") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tail.total > 32 * 1024 * 1024  # every byte was drained
        assert env.stderr_tail().endswith("flood done") and len(env.stderr_tail()) < 32 * 1024
    finally:
        env.close()


def test_a_bad_server_breaks_nothing_else_in_the_world() -> None:
    good, good_marker = spec(name="counter")
    bad, _ = spec("exit", name="broken_db")
    world = build_world("helpdesk", artifacts=["acme"])
    before = sorted(world.tools)
    with pytest.raises(McpServerError, match="env broken_db"):
        attach(world, [good, bad])
    assert sorted(world.tools) == before and list(world.envs) == ["helpdesk"]
    assert not running(good_marker)  # the server started before the bad one was stopped again
    assert world.call("get_ticket", {"ticket_id": "TCK-9001"}).ok


def test_serve_with_a_bad_mcp_server_fails_with_its_name(tmp_path: Path) -> None:
    import subprocess

    agentenv = Path(sys.executable).with_name("agentenv")
    bad = f"broken_db={sys.executable} {FAULTY} exit"
    done = subprocess.run(
        [str(agentenv), "serve", "helpdesk", "--port", "0", "--mcp", bad], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert "error: --mcp env broken_db: the MCP server" in done.stderr
    assert "cannot open the database: permission denied" in done.stderr


def test_probe_lists_what_a_world_would_see() -> None:
    import subprocess

    agentenv = Path(sys.executable).with_name("agentenv")
    done = subprocess.run(
        [str(agentenv), "mcp", "probe", f"counter={sys.executable} {FAULTY} ok"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == ["env counter: 3 tool(s)", "  bump: Add `by` to the counter."]
    refused = subprocess.run(
        [str(agentenv), "mcp", "probe", f"odd={sys.executable} {FAULTY} bad-schema"], capture_output=True, text=True
    )
    assert refused.returncode == 2 and "env odd: tool 'broken'" in refused.stderr


def test_the_three_forms_parse_and_bad_declarations_name_the_field() -> None:
    from agentenv_mcp.api import McpSpecError, parse_spec

    image = parse_spec("git=docker:mcp/git:1 --repository /repo")
    assert image.argv() == [
        "docker",
        "run",
        "-i",
        "--rm",
        "--label",
        "agentenv.mcp=git",
        "mcp/git:1",
        "--repository",
        "/repo",
    ]
    assert parse_spec("web=https://example.test/mcp").url == "https://example.test/mcp"
    assert not parse_spec("web=https://example.test/mcp").started
    assert parse_spec('t={"command": ["mcp-server-time"], "reset_tool": "reset"}').reset_tool == "reset"
    assert parse_spec("t=mcp-server-time --local-timezone UTC").argv() == ["mcp-server-time", "--local-timezone", "UTC"]
    with pytest.raises(McpSpecError, match=r"--mcp 'nothing': expected NAME=COMMAND"):
        parse_spec("nothing")
    with pytest.raises(
        McpSpecError, match=r"--mcp t: .*give exactly one of `command`, `url` or `image` \(got command, url\)"
    ):
        parse_spec('t={"command": "x", "url": "http://h/mcp"}')
    with pytest.raises(McpSpecError, match=r"--mcp 9x: .*use a plain identifier"):
        parse_spec("9x=cmd")
    with pytest.raises(McpSpecError, match=r"--mcp t: reset_tol: Extra inputs are not permitted"):
        parse_spec('t={"command": "x", "reset_tol": "reset"}')
