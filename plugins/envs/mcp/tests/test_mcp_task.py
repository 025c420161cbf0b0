"""A task declares `mcp-server-git` beside helpdesk in its deploy_env step; a scripted agent works across both and
a state verifier grades it on the helpdesk's data and the calls it made. Real server, real repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agentenv_testing.tasks import TaskRuns

pytestmark = pytest.mark.slow  # the servers' venv

SHIPPED = "Ship replacement boots for TCK-9001"


def commit(repo: Path, message: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "ops", "GIT_AUTHOR_EMAIL": "ops@example.com"}
    env |= {"GIT_COMMITTER_NAME": "ops", "GIT_COMMITTER_EMAIL": "ops@example.com"}
    (repo / "shipments.md").write_text("TCK-9001: replacement boots shipped\n")
    subprocess.run(["git", "add", "shipments.md"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", message], cwd=repo, check=True, env=env)


def task(servers_bin: Path, repo: Path, actions: list[dict[str, Any]]) -> dict[str, Any]:
    git = {"command": [str(servers_bin / "mcp-server-git"), "--repository", str(repo)], "start_timeout": 60}
    comment = "SELECT COUNT(*) FROM ticket_comments WHERE ticket_id = 'TCK-9001' AND body LIKE '%replacement%'"
    return {
        "name": "ship-note",
        "steps": [
            {
                "id": "world",
                "type": "deploy_env",
                "envs": ["helpdesk"],
                "artifacts": ["acme"],
                "mcp": {"git": git},
                "roles": {"support": {"tools": ["*"], "deny": ["git_commit", "git_reset", "issue_refund"]}},
            },
            {
                "id": "agent",
                "type": "deploy_agent",
                "env": "world",
                "kind": "scripted",
                "role": "support",
                "settings": {"policy_data": {"turn": [{"actions": actions}]}},
            },
            {"id": "ask", "type": "prompt_agent", "agent": "agent", "prompt": "Has TCK-9001's replacement shipped?"},
            {
                "id": "grade",
                "type": "rubrics_verifier",
                "env": "world",
                "prompt_step": "ask",
                "criteria": [
                    {"name": "read_the_log", "check": {"tool_called": "git_log"}},
                    {"name": "noted", "check": {"sql": comment, "env": "helpdesk", "equals": 1}},
                ],
            },
        ],
    }


def note(body: str) -> dict[str, Any]:
    return {"call": "add_ticket_comment", "args": {"ticket_id": "TCK-9001", "body": body, "public": False}}


def test_a_task_with_a_real_git_server_is_graded_by_world_state(servers_bin: Path, repo: Path, tmp_path: Path) -> None:
    commit(repo, SHIPPED)
    runs = TaskRuns(tmp_path / "runs")
    solved = runs(
        task(
            servers_bin,
            repo,
            [
                {"call": "git_log", "args": {"repo_path": str(repo), "max_count": 5}, "expect": "ok"},
                note(f"Git says: {SHIPPED!r}; the replacement is on its way."),
                {"call": "git_commit", "args": {"repo_path": str(repo), "message": "x"}, "save": "refused"},
            ],
        )
    )
    assert solved["status"] == "succeeded", [s.get("error") for s in solved["steps"]]
    assert solved["score"] == 1.0
    events = runs.trajectory(solved)
    called = [(e["tool"], e["role"], (e.get("error") or {}).get("code")) for e in events if e["kind"] == "tool_call"]
    assert called == [
        ("git_log", "support", None),
        ("add_ticket_comment", "support", None),
        ("git_commit", "support", "forbidden"),
    ]
    assert SHIPPED in str(events[0]["result"])

    guessed = runs(task(servers_bin, repo, [note("Probably shipped, no idea.")]))
    assert guessed["status"] == "succeeded" and guessed["score"] < 1.0


def test_a_bad_server_in_a_task_fails_the_deploy_naming_the_field(tmp_path: Path) -> None:
    runs = TaskRuns(tmp_path / "runs")
    broken = {"id": "world", "type": "deploy_env", "envs": ["helpdesk"], "mcp": {"ghost": "/nonexistent/mcp-server"}}
    record = runs({"name": "broken", "steps": [broken]})
    (step,) = record["steps"]
    assert record["status"] == "failed"
    assert step["error"].startswith(
        "field `mcp.ghost`: env ghost: the MCP server (/nonexistent/mcp-server) did not start"
    )
    clash = {"id": "world", "type": "deploy_env", "envs": ["helpdesk"], "mcp": {"helpdesk": "x"}}
    with pytest.raises(
        ValueError, match=r"clash.json: step 'world' \(deploy_env\): field `mcp.helpdesk`: .* also in `envs`"
    ):
        runs({"name": "clash", "steps": [clash]})  # refused by preflight, before anything starts
