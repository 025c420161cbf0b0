"""`agentenv serve` and the generated `agentenv tools` CLI, run as real subprocesses."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import pytest
from agentenv_gateway.toolcli import ArgError, parse_tool_args, tool_help


def agentenv(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, timeout=120, env=env
    )


def test_generated_cli_against_a_served_world(served, tokens):
    listed = agentenv("tools", "--url", served.url, "--token", tokens["support"])
    assert listed.returncode == 0, listed.stderr
    assert "get_ticket" in listed.stdout and "issue_refund" not in listed.stdout
    as_json = agentenv("tools", "--url", served.url, "--token", tokens["billing_lead"], "--json")
    assert "issue_refund" in {t["name"] for t in json.loads(as_json.stdout)}

    ticket = agentenv(
        "tools", "--url", served.url, "--token", tokens["support"], "get_ticket", "--ticket-id", "TCK-9001"
    )
    assert ticket.returncode == 0, ticket.stderr
    assert json.loads(ticket.stdout)["subject"] == "Boots arrived damaged — refund please"

    help_text = agentenv("tools", "--url", served.url, "--token", tokens["support"], "add_ticket_comment", "--help")
    assert help_text.returncode == 0
    assert "--ticket-id STRING" in help_text.stdout and "[required]" in help_text.stdout
    assert "--public / --no-public" in help_text.stdout

    env = os.environ | {"AGENTENV_TOKEN": tokens["billing_lead"]}
    comment = agentenv(
        "tools",
        "--url",
        served.url,
        "add_ticket_comment",
        "--ticket-id",
        "TCK-9001",
        "--body",
        "Refund approved",
        "--no-public",
        env=env,
    )
    assert comment.returncode == 0, comment.stdout + comment.stderr
    last = served.world.trajectory.events[-1]
    assert last["tool"] == "add_ticket_comment" and last["args"]["public"] is False and last["role"] == "billing_lead"

    refused = agentenv(
        "tools",
        "--url",
        served.url,
        "issue_refund",
        "--order-id",
        "ORD-5001",
        "--amount",
        "500",
        "--reason",
        "too much",
        env=env,
    )
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["field"] == "amount"
    assert served.world.trajectory.events[-1]["args"]["amount"] == 500.0  # coerced to a number from the schema

    forbidden = agentenv("tools", "--url", served.url, "--token", tokens["support"], "issue_refund", "--amount", "1")
    assert forbidden.returncode == 2 and "no tool 'issue_refund'" in forbidden.stderr
    unknown = agentenv("tools", "--url", served.url, "--token", tokens["support"], "get_ticket", "--nope", "1")
    assert unknown.returncode == 2 and "unknown option --nope" in unknown.stderr
    no_token = agentenv("tools", "--url", served.url)
    assert no_token.returncode == 2 and "needs a bearer token: pass --token" in no_token.stderr
    wrong = agentenv("tools", "--url", served.url, "--token", "tok-guessed")
    assert wrong.returncode == 2, wrong
    assert "rejected the bearer token given (--token or AGENTENV_TOKEN)" in wrong.stderr, wrong.stderr
    assert "needs a bearer token" not in wrong.stderr  # it was reported as missing


def test_serve_command_end_to_end(tmp_path):
    roles = tmp_path / "roles.toml"
    roles.write_text(
        '[roles.support]\ntools = ["*"]\ndeny = ["issue_refund"]\ntoken = "env:GW_SUPPORT_TOKEN"\n'
        '[roles.billing_lead]\ntoken = "tok-lead"\n'
    )
    env = os.environ | {"GW_SUPPORT_TOKEN": "tok-from-env"}
    process = subprocess.Popen(
        [sys.executable, "-m", "agentenv", "serve", "helpdesk", "-a", "acme", "--port", "0", "--role-file", str(roles)],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        match = re.search(r"at (http://\S+)", first)
        assert match, first
        url = match.group(1)
        listed = agentenv("tools", "--url", url, "--token", "tok-from-env", "--json")
        names = {t["name"] for t in json.loads(listed.stdout)}
        assert "get_ticket" in names and "issue_refund" not in names
        lead = agentenv("tools", "--url", url, "--token", "tok-lead", "--json")
        assert "issue_refund" in {t["name"] for t in json.loads(lead.stdout)}
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(20)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["serve", "helpdesk", "--host", "0.0.0.0"], "refusing to serve a world without tokens"),
        (["serve", "helpdesk", "--token", "admin=x"], "role(s) admin are not defined"),
        (["serve", "helpdesk", "--token", "support"], "expected ROLE=TOKEN"),
        (["serve", "helpdesk", "--token", "default=env:GW_UNSET_VARIABLE"], "GW_UNSET_VARIABLE"),
        (["serve", "nope"], "nope"),
        (["serve", "helpdesk", "--upstream", "x"], "expected NAME=COMMAND"),
    ],
)
def test_serve_refuses_bad_setups(args, message):
    result = agentenv(*args)  # refused at once: it never serves (the subprocess limit would end a server)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr


def test_cli_commands_stay_off_the_help_path():
    probe = (
        "import contextlib, io, sys\n"
        "from agentenv.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(['--help'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'starlette', 'uvicorn', 'httpx2')))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]", result.stdout


SCHEMA = {
    "type": "object",
    "properties": {
        "count": {"type": "integer"},
        "ratio": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
        "flag": {"type": "boolean", "default": False},
        "tags": {"type": "array", "items": {"type": "integer"}},
        "meta": {"type": "object"},
        "name": {"type": "string", "description": "Who."},
        "attachments": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/Att"}}, {"type": "null"}]},
    },
    "required": ["name"],
    "$defs": {"Att": {"type": "object", "properties": {"filename": {"type": "string"}}}},
}


def test_options_are_typed_from_the_schema():
    parsed = parse_tool_args(
        SCHEMA,
        [
            "--name",
            "Dana",
            "--count",
            "3",
            "--ratio=0.5",
            "--flag",
            "--tags",
            "1",
            "--tags",
            "[2, 3]",
            "--meta",
            '{"a": 1}',
            "--attachments",
            '{"filename": "a.png"}',
        ],
    )
    assert parsed == {
        "name": "Dana",
        "count": 3,
        "ratio": 0.5,
        "flag": True,
        "tags": [1, 2, 3],
        "meta": {"a": 1},
        "attachments": [{"filename": "a.png"}],
    }
    assert parse_tool_args(SCHEMA, ["--name", "x", "--flag", "false"])["flag"] is False
    assert parse_tool_args(SCHEMA, ["--name", "x", "--no-flag"])["flag"] is False
    for argv, message in [
        (["--count", "3"], "missing required --name"),
        (["--name", "x", "--count", "three"], "--count: expected integer"),
        (["--name", "x", "--meta", "{"], "--meta: not valid JSON"),
        (["--name", "x", "--bogus", "1"], "unknown option --bogus"),
        (["--name"], "--name needs a value"),
        (["stray"], "unexpected value 'stray'"),
        (["--name", "x", "--no-count"], "only works for true/false"),
    ]:
        with pytest.raises(ArgError, match=re.escape(message)):
            parse_tool_args(SCHEMA, argv)
    text = tool_help({"name": "t", "description": "Does things.", "inputSchema": SCHEMA}, "http://h")
    assert "--name STRING" in text and "Who. [required]" in text and "--flag / --no-flag" in text


def test_tools_tokens_counts_the_roles_tools_full_short_and_trimmed(served, tokens):
    counted = agentenv(
        "tools",
        "--url",
        served.url,
        "--token",
        tokens["billing_lead"],
        "--tokens",
        "--json",
        "--only",
        "get_ticket",
        "--only",
        "issue_refund",
    )
    assert counted.returncode == 0, counted.stderr
    rows = {(r["tools"], r["descriptions"]): r for r in json.loads(counted.stdout)}
    assert set(rows) == {("all", "full"), ("all", "short"), ("only", "full"), ("only", "short")}
    assert all(r["counted_with"] == "o200k_base" for r in rows.values())  # the tokens extra is in the dev env
    everything, trimmed = rows["all", "full"], rows["only", "full"]
    assert trimmed["count"] == 2 and everything["count"] > 2
    assert 0 < trimmed["tokens"] < everything["tokens"] and rows["all", "short"]["tokens"] <= everything["tokens"]
    table = agentenv("tools", "--url", served.url, "--token", tokens["billing_lead"], "--tokens")
    assert "COUNTED WITH" in table.stdout and f"{everything['tokens']:,}" in table.stdout
    wrong = agentenv("tools", "--url", served.url, "--token", tokens["support"], "--tokens", "--only", "issue_refund")
    assert wrong.returncode == 2 and "--only issue_refund: not tools of this role" in wrong.stderr


def test_the_server_tells_a_missing_token_from_a_rejected_one(served, tokens):
    import httpx

    missing = httpx.get(f"{served.url}/rest/tools", timeout=10)
    rejected = httpx.get(f"{served.url}/rest/tools", headers={"authorization": "Bearer tok-guessed"}, timeout=10)
    assert missing.status_code == rejected.status_code == 401
    assert missing.json()["error"]["message"].startswith("missing bearer token: send Authorization: Bearer TOKEN")
    assert rejected.json()["error"]["message"].startswith("the bearer token was rejected: it opens no role here")
