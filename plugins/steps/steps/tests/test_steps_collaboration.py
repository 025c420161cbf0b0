"""add_skills, register_agent_triggers and review inside real tasks."""
# ruff: noqa: F811 - the fixtures imported from steps_morekit are parameters of the tests

from __future__ import annotations

import json
import threading
import time

import pytest
from agentenv_runtime import TaskError
from agentenv_testing.tasks import temporary_config
from steps_morekit import made  # noqa: F401 - pytest fixtures
from steps_taskkit import deploy, prompt, scripted, task

POST = {"call": "post_message", "args": {"channel": "#general", "text": "status update"}, "expect": "ok"}


# ---- add_skills -------------------------------------------------------------------------------------
def test_skills_extend_an_llm_agents_system_prompt(runs, step, tmp_path, chat_stub, chat_requests):
    runs.root.joinpath("objects", "skills").mkdir(parents=True)
    runs.root.joinpath("objects", "skills", "refunds.json").write_text(
        json.dumps({"name": "refunds", "instructions": "Refund only damaged items."})
    )
    llm = {
        "id": "agent",
        "type": "deploy_agent",
        "env": "world",
        "kind": "llm",
        "system_prompt": "You are the support bot.",
        "settings": {"base_url": chat_stub, "model": "stub"},
    }
    skills = [
        {"name": "tone", "text": "Be brief (run {run_id})."},
        {"name": "refunds", "store": "store:skills/refunds.json"},
        {"name": "cli", "cli": "cli"},
    ]
    steps = (
        deploy(),
        llm,
        {"id": "cli", "type": "build_mcp_cli", "env": "world"},
        {"id": "skills", "type": "add_skills", "agent": "agent", "skills": skills},
        prompt("ask", "agent", "hello"),
    )
    record = runs(task(*steps), config=temporary_config(tmp_path))
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "skills")["output"] == {
        "skills": ["tone", "refunds", "cli"],
        "added": ["tone", "refunds", "cli"],
        "applied": "system_prompt",
    }
    system = chat_requests[0]["body"]["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith("You are the support bot.\n\n## Skills\n\n### tone\nBe brief (run ")
    assert record["id"] in system["content"]
    assert "### refunds\nRefund only damaged items." in system["content"]
    assert "python3 world-tools.py --url URL" in system["content"] and "- post_message:" in system["content"]


def test_skills_after_the_conversation_began_update_it_and_others_are_recorded(
    runs, step, made, chat_stub, chat_requests
):
    llm = {
        "id": "agent",
        "type": "deploy_agent",
        "env": "world",
        "kind": "llm",
        "settings": {"base_url": chat_stub, "model": "stub"},
    }
    steps = (
        deploy(),
        llm,
        scripted("bot", "world", [{"say": "hi"}]),
        prompt("first", "agent", "one"),
        {"id": "s1", "type": "add_skills", "agent": "agent", "skills": [{"name": "late", "text": "Late skill."}]},
        {"id": "s2", "type": "add_skills", "agent": "bot", "skills": [{"name": "a", "text": "A."}]},
        {"id": "s3", "type": "add_skills", "agent": "bot", "skills": [{"name": "b", "text": "B."}]},
        prompt("second", "agent", "two"),
    )
    record = runs(task(*steps))
    assert record["status"] == "succeeded", record["steps"]
    assert chat_requests[0]["body"]["messages"][0]["role"] == "user"  # no system prompt before the skills
    assert chat_requests[1]["body"]["messages"][0] == {
        "role": "system",
        "content": "## Skills\n\n### late\nLate skill.",
    }
    assert step(record, "s3")["output"] == {"skills": ["a", "b"], "added": ["b"], "applied": "recorded"}
    assert [s["name"] for s in made["bot"].agent.skills] == ["a", "b"]


def test_missing_stored_skill_fails_naming_the_field(runs, step):
    steps = (deploy(), scripted("bot", "world", []))
    skill = {"id": "s", "type": "add_skills", "agent": "bot", "skills": [{"name": "x", "store": "skills/nope.md"}]}
    record = runs(task(*steps, skill))
    assert record["status"] == "failed"
    assert "field `skills[0].store`: no object 'skills/nope.md'" in step(record, "s")["error"]


def test_add_skills_preflight(runs):
    steps = (deploy(), scripted("bot", "world", []))
    with pytest.raises(TaskError) as err:
        skills = [{"name": "x", "text": "a", "cli": "c"}, {"name": "y", "cli": "ghost"}]
        runs(task(*steps, {"id": "s", "type": "add_skills", "agent": "bot", "skills": skills}))
    assert "field `skills.0`: Value error, give exactly one of `text`, `store` or `cli`" in str(err.value)
    with pytest.raises(TaskError) as err:
        skills = [{"name": "y", "cli": "ghost"}]
        runs(task(*steps, {"id": "s", "type": "add_skills", "agent": "bot", "skills": skills}))
    assert "field `skills[0].cli`: no step 'ghost'" in str(err.value)


# ---- register_agent_triggers ------------------------------------------------------------------------
def test_simulated_person_reacts_on_trigger_turn_and_match(runs, step):
    agent = scripted("agent", "world", [POST, {"say": "posted"}], [{"say": "ok 2"}], [{"say": "ok 3"}])
    watch = {
        "id": "rules",
        "type": "register_env_triggers",
        "env": "world",
        "triggers": [{"id": "posted", "kind": "tool_call", "when": {"tool": "post_message"}, "actions": []}],
    }
    reactions = {
        "id": "person",
        "type": "register_agent_triggers",
        "agent": "agent",
        "triggers": [
            {"id": "saw-post", "trigger": "posted", "reply": "I saw your post"},
            {"id": "second", "turn": 2, "reply": "turn two, seed {seed}"},
            {"id": "bye", "match": "OK 3", "reply": "bye now"},
        ],
    }
    record = runs(task(deploy(), agent, watch, reactions, prompt("chat", "agent", "start")), seed=7)
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "person")["output"] == {"registered": ["saw-post", "second", "bye"], "agent": "agent"}
    assert step(record, "chat")["output"]["turns"] == [
        {"user": "start", "agent": "posted"},
        {"user": "I saw your post", "agent": "ok 2", "reaction": "saw-post"},
        {"user": "turn two, seed 7", "agent": "ok 3", "reaction": "second"},
        {"user": "bye now", "agent": "", "reaction": "bye"},
    ]


def test_reactions_go_before_scripted_user_turns_and_fire_once(runs, step):
    agent = scripted("agent", "world", [{"say": "a"}], [{"say": "a"}], [{"say": "c"}])
    reactions = {
        "id": "person",
        "type": "register_agent_triggers",
        "agent": "agent",
        "triggers": [{"id": "again", "match": "^a$", "reply": "react"}],
    }
    chat = prompt("chat", "agent", "start", user={"turns": ["scripted 1", "scripted 2"]})
    record = runs(task(deploy(), agent, reactions, chat))
    assert [t["user"] for t in step(record, "chat")["output"]["turns"]] == [
        "start",
        "react",
        "scripted 1",
        "scripted 2",
    ]


def test_agent_trigger_preflight(runs):
    steps = (deploy(), scripted("agent", "world", []))
    bad = [{"id": "x", "reply": "hi"}, {"id": "x", "match": "(", "reply": "hi"}]
    with pytest.raises(TaskError) as err:
        runs(task(*steps, {"id": "p", "type": "register_agent_triggers", "agent": "agent", "triggers": bad}))
    text = str(err.value)
    assert "field `triggers.0`: Value error, give at least one of `turn`, `match` or `trigger`" in text
    assert "field `triggers.1`: Value error, `match` is not a regular expression" in text
    with pytest.raises(TaskError) as err:
        triggers = [{"id": "x", "turn": 1, "reply": "a"}, {"id": "x", "turn": 2, "reply": "b"}]
        runs(task(*steps, {"id": "p", "type": "register_agent_triggers", "agent": "ghost", "triggers": triggers}))
    assert "trigger ids must be unique; repeated: x" in str(err.value)
    assert "field `agent`: no step 'ghost'" not in str(err.value)  # field errors first; ids checked after


# ---- review -----------------------------------------------------------------------------------------
def test_auto_approve_and_abort(runs, step):
    record = runs(task(deploy(), {"id": "gate", "type": "review", "auto": "approve"}))
    assert record["status"] == "succeeded"
    assert step(record, "gate")["output"] == {"decision": "approve", "note": "decided by `auto`", "source": "auto"}
    record = runs(task(deploy(), {"id": "gate", "type": "review", "auto": "abort"}, scripted("after", "world", [])))
    assert record["status"] == "failed" and "review aborted the run (auto)" in step(record, "gate")["error"]
    assert step(record, "after")["status"] == "skipped"


def test_decision_file_written_while_waiting(runs, step, tmp_path):
    target = tmp_path / "decisions" / "gate.json"

    def reviewer() -> None:
        time.sleep(0.3)
        target.parent.mkdir(parents=True)
        target.write_text(json.dumps({"decision": "approve", "note": "looks right"}))

    threading.Thread(target=reviewer, daemon=True).start()
    gate = {"id": "gate", "type": "review", "decision_file": str(target), "timeout": 30, "poll_seconds": 0.05}
    record = runs(task(deploy(), gate))
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "gate")["output"] == {"decision": "approve", "note": "looks right", "source": "file"}


def test_abort_file_fails_with_the_note_and_timeout_fails(runs, step, tmp_path):
    target = tmp_path / "abort.json"
    target.write_text(json.dumps({"decision": "abort", "note": "refund amount is wrong"}))
    record = runs(task({"id": "gate", "type": "review", "decision_file": str(target)}))
    assert record["status"] == "failed"
    assert step(record, "gate")["error"] == "review aborted the run (file): refund amount is wrong"
    gate = {"id": "gate", "type": "review", "decision_file": str(tmp_path / "never.json"), "timeout": 0.2}
    record = runs(task(gate))
    assert record["status"] == "failed" and "field `timeout`: no decision in" in step(record, "gate")["error"]
    record = runs(task({**gate, "on_timeout": "approve"}))
    assert record["status"] == "succeeded" and step(record, "gate")["output"]["source"] == "timeout"


def test_review_preflight(runs):
    with pytest.raises(TaskError) as err:
        runs(task({"id": "gate", "type": "review"}))
    assert "step 'gate' (review): field `decision_file`: give `decision_file`" in str(err.value)
