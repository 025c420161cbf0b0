"""deploy_human_agent, install_agent, teardown_sandboxes and peer_agents inside real tasks."""
# ruff: noqa: F811 - the fixtures imported from steps_morekit are parameters of the tests

from __future__ import annotations

import json
import socket

import pytest
from agentenv_runtime import TaskError
from steps_morekit import inline_config, made, sandbox  # noqa: F401 - pytest fixtures
from steps_taskkit import calls, deploy, prompt, scripted, task


# ---- deploy_human_agent -----------------------------------------------------------------------------
@pytest.fixture
def operator_url():
    """A scripted 'human operator' served over A2A on loopback by agentenv-a2a."""
    pytest.importorskip("a2a")
    from agentenv_a2a.server import build_a2a_app, serve_a2a
    from agentenv_agents.scripted import ScriptedAgent
    from agentenv_runtime import build_world

    world = build_world("slack", artifacts=["acme"])
    policy = {"turn": [{"actions": [{"say": "Operator here: approved ({{ prompt }})"}]}]}
    agent = ScriptedAgent({"policy_data": policy})
    app = build_a2a_app(agent, world.tool_access("default"), name="Sam (operator)", description="Sam approves refunds.")
    with serve_a2a(app, host="127.0.0.1", port=0) as url:
        yield url


def human(url: str, **fields):
    return {"id": "sam", "type": "deploy_human_agent", "url": url, "env": "world", **fields}


def test_human_operator_is_registered_and_answers_prompts(runs, step, operator_url):
    record = runs(task(deploy(), human(operator_url), prompt("ask", "sam", "may I refund 89.99?")))
    assert record["status"] == "succeeded", record["steps"]
    output = step(record, "sam")["output"]
    assert output["kind"] == "a2a" and output["name"] == "Sam (operator)" and output["version"]
    assert output["skills"] == ["Sam (operator)"]
    assert step(record, "ask")["output"]["response"] == "Operator here: approved (may I refund 89.99?)"
    turns = [e for e in runs.trajectory(record) if e["kind"] == "agent_turn"]
    assert turns[0]["agent"].startswith("Operator here")


def test_unreachable_operator_fails_naming_url(runs, step):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    record = runs(task(deploy(), human(f"http://127.0.0.1:{port}", card_timeout=2)))
    assert record["status"] == "failed"
    assert "field `url`: cannot reach" in step(record, "sam")["error"]


def test_human_agent_preflight_names_env_and_url(runs):
    with pytest.raises(TaskError) as err:
        runs(task(deploy(), {"id": "sam", "type": "deploy_human_agent", "url": "ftp://x", "env": "nope"}))
    assert "step 'sam' (deploy_human_agent): field `url`" in str(err.value)
    with pytest.raises(TaskError) as err:
        runs(task(deploy(), human("http://127.0.0.1:1", env="nope")))
    assert "step 'sam' (deploy_human_agent): field `env`: no step 'nope'" in str(err.value)


# ---- install_agent ----------------------------------------------------------------------------------
def test_install_agent_writes_files_runs_commands(runs, step, inline_config, tmp_path, made):
    bundle = tmp_path / "bundle"
    (bundle / "agent" / "lib").mkdir(parents=True)
    (bundle / "agent" / "main.py").write_text("import lib.greet\nprint(lib.greet.TEXT)\n")
    (bundle / "agent" / "lib" / "greet.py").write_text("TEXT = 'installed ok'\n")
    (bundle / "agent" / "lib" / "__init__.py").write_text("")
    install = {
        "files": {"opt/bot": "file:agent", "opt/bot/VERSION": "1.2.3\n"},
        "commands": ["cd opt/bot && python3 main.py > ../../result.txt", ["cat", "opt/bot/VERSION"]],
    }
    steps = (sandbox(), {"id": "install", "type": "install_agent", "sandbox": "box", "install": install})
    record = runs(task(*steps), config=inline_config, bundle_dir=bundle)
    assert record["status"] == "succeeded", record["steps"]
    output = step(record, "install")["output"]
    assert output["files"] == ["opt/bot/lib/__init__.py", "opt/bot/lib/greet.py", "opt/bot/main.py", "opt/bot/VERSION"]
    assert [c["exit_code"] for c in output["commands"]] == [0, 0]
    assert made["box"].status() == "missing"  # torn down with the run; the command ran before that:
    assert output["sandbox"] == made["box"].id


def test_install_declaration_file_and_failing_command(runs, step, inline_config, tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    declaration = {"install": {"files": {"a.txt": "hi"}, "commands": ["test -f a.txt", "echo broken >&2; exit 7"]}}
    (bundle / "install.json").write_text(json.dumps(declaration))
    steps = (sandbox(), {"id": "install", "type": "install_agent", "sandbox": "box", "declaration": "install.json"})
    record = runs(task(*steps), config=inline_config, bundle_dir=bundle)
    assert record["status"] == "failed"
    error = step(record, "install")["error"]
    assert "field `install.commands[1]`" in error and "exited with 7" in error and "broken" in error


def test_install_agent_preflight(runs):
    with pytest.raises(TaskError) as err:
        runs(task(sandbox(), {"id": "install", "type": "install_agent", "sandbox": "box"}))
    assert "field `install`: give exactly one of `install` (inline) or `declaration`" in str(err.value)


# ---- teardown_sandboxes -----------------------------------------------------------------------------
def test_teardown_mid_run_makes_later_use_fail_but_the_run_succeeds(runs, step, inline_config, made):
    steps = (
        sandbox(),
        deploy(),
        scripted("agent", "world", [{"say": "hi"}]),
        {"id": "down", "type": "teardown_sandboxes", "targets": ["box", "world", "agent"]},
        {"id": "late", "type": "install_agent", "sandbox": "box", "install": {"files": {"a": "b"}}},
        {**prompt("ask", "agent"), "depends_on": ["down"]},
        {"id": "load", "type": "load_artifact", "env": "world", "artifacts": ["acme"], "depends_on": ["down"]},
    )
    for later in steps[-3:]:
        later["fail_task_on_error"] = False
    record = runs(task(*steps), config=inline_config)
    assert record["status"] == "succeeded", record["steps"]
    output = step(record, "down")["output"]
    assert output["torn_down"] == ["box", "world", "agent"] and output["errors"] == [] and output["not_found"] == []
    assert made["box"].status() == "missing"
    late = step(record, "late")
    assert late["status"] == "failed" and "torn down by step 'down'" in late["error"]
    assert step(record, "ask")["status"] == "failed" and "TornDown" in step(record, "ask")["error"]
    assert step(record, "load")["status"] == "failed" and "TornDown" in step(record, "load")["error"]
    saved = output["trajectories"]["world"]
    assert saved == f"runs/{record['id']}/world.trajectory.jsonl"
    assert runs.object(saved) is not None
    assert record["teardown_errors"] == []


def test_teardown_of_a_step_that_made_nothing_never_fails(runs, step):
    steps = (deploy(), {"id": "check", "type": "sync_env_clock", "env": "world", "start": "2026-12-01T09:00:00Z"})
    record = runs(task(*steps, {"id": "down", "type": "teardown_sandboxes", "targets": "check"}))
    assert record["status"] == "succeeded"
    assert step(record, "down")["output"]["not_found"] == ["check"]


def test_teardown_preflight_names_unknown_targets(runs):
    with pytest.raises(TaskError) as err:
        runs(task(deploy(), {"id": "down", "type": "teardown_sandboxes", "targets": ["ghost"]}))
    assert "step 'down' (teardown_sandboxes): field `targets`: no step 'ghost'" in str(err.value)


# ---- peer_agents ------------------------------------------------------------------------------------
def test_peers_can_be_messaged_and_are_recorded(runs, step, made):
    ask = {"call": "message_peer", "args": {"peer": "helper", "text": "total of ORD-5001?"}, "save": "answer"}
    steps = (
        deploy(),
        scripted("lead", "world", [ask, {"say": "helper says: {{ answer.reply }}"}]),
        scripted("helper", "world", [{"say": "129.99 (you asked: {{ prompt }})"}]),
        {"id": "team", "type": "peer_agents", "peers": {"lead": ["helper"]}},
        prompt("go", "lead", "delegate"),
    )
    record = runs(task(*steps))
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "team")["output"] == {"peers": {"lead": ["helper"]}}
    assert step(record, "go")["output"]["response"] == "helper says: 129.99 (you asked: total of ORD-5001?)"
    events = runs.trajectory(record)
    [sent] = [e for e in events if e["kind"] == "peer_message"]
    assert (sent["sender"], sent["peer"], sent["reply"]) == ("lead", "helper", "129.99 (you asked: total of ORD-5001?)")
    assert calls(events, "message_peer") == []  # not a world tool: recorded as a peer message
    assert made["lead"].agent.peers == {"helper": "scripted agent acting as default"}
    assert not hasattr(made["helper"].agent, "peers")
    assert "message_peer" in [t["name"] for t in made["lead"].tools.list_tools()]


def test_mutual_peers_and_refusals(runs, step, made):
    bad = {"call": "message_peer", "args": {"peer": "nobody", "text": "hi"}, "save": "x"}
    steps = (
        deploy(),
        scripted("a", "world", [bad, {"say": "done"}]),
        scripted("b", "world", [{"say": "b here"}]),
        {"id": "team", "type": "peer_agents", "peers": {"a": ["b"]}, "mutual": True},
        prompt("go", "a"),
    )
    record = runs(task(*steps))
    assert step(record, "team")["output"] == {"peers": {"a": ["b"], "b": ["a"]}}
    [refused] = made["a"].agent.calls
    assert refused["ok"] is False and "'nobody' is not a peer of a" in refused["error"]["message"]


def test_peer_preflight(runs):
    with pytest.raises(TaskError) as err:
        runs(task(deploy(), scripted("a", "world", []), {"id": "p", "type": "peer_agents", "peers": {"a": ["a", "z"]}}))
    text = str(err.value)
    assert "field `peers.a`: no step 'z'" in text and "field `peers.a`: an agent cannot be its own peer" in text
