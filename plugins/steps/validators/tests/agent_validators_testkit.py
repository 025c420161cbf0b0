"""Helpers for the agent validator tests: a stand-in chat model, scripted policies, broken A2A agents.

The stand-in model is rule-based and honest about what it reads: it calls a tool the user names (when it
is offered), asks its peer when told to, recalls a code from the conversation, and ends every answer with
the system prompt it was given ("echoes the system prompt"), so the `llm` kind served by agentenv-a2a can
pass every check for real.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from agentenv.contracts import AgentKind, AgentResponse, ToolAccess
from agentenv_runtime import Env, tool


# ---- a tiny world for served agents --------------------------------------------------------------------
class MemoEnv(Env):
    """One table of memos; a world a served agent can act in."""

    name: ClassVar[str] = "memo"
    schema: ClassVar[str] = "CREATE TABLE memos (id INTEGER PRIMARY KEY AUTOINCREMENT, text TEXT NOT NULL);"

    @tool
    def add_memo(self, text: str) -> dict[str, Any]:
        """Add a memo.

        Args:
            text: What the memo says.
        """
        cursor = self.db.execute("INSERT INTO memos (text) VALUES (?)", (text,))
        return {"id": cursor.lastrowid, "text": text}


# ---- the stand-in chat model ----------------------------------------------------------------------------
def _reply(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") or []
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    system = messages[0]["content"] if messages and messages[0].get("role") == "system" else ""
    last = messages[-1] if messages else {}
    call: dict[str, Any] | None = None
    if last.get("role") == "tool":
        results = []
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            results.insert(0, str(message.get("content")))
        answer = "Tool results: " + " | ".join(results)
    else:
        text = str(last.get("content") or "")
        token = re.search(r'token "([^"]+)"', text)
        remembered = [
            m.group(1)
            for message in messages
            if message.get("role") == "user"
            for m in [re.search(r"code for later: (\S+?)\.", str(message.get("content")))]
            if m
        ]
        if "probe_ping" in text and "probe_ping" in tools and token:
            call = {"name": "probe_ping", "arguments": {"token": token.group(1)}}
        elif "peer" in text.lower() and "message_peer" in tools:
            call = {"name": "message_peer", "arguments": {"text": "What is the secret token?"}}
        elif "what was the code" in text.lower():
            answer = f"The code was {remembered[-1]}." if remembered else "I do not remember any code."
        else:
            answer = "PONG" if "PONG" in text else "OK"
    if call is not None:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                }
            ],
        }
    else:
        message = {"role": "assistant", "content": f"{answer}\n[system prompt: {system}]" if system else answer}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def model_app() -> Any:
    """An OpenAI-compatible `/v1/chat/completions` stand-in (Starlette)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def completions(request: Request) -> JSONResponse:
        return JSONResponse(_reply(await request.json()))

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


@contextmanager
def serve_model() -> Iterator[str]:
    """The stand-in model on loopback; yields its base URL (`…/v1`)."""
    from agentenv_a2a.server import serve_a2a

    with serve_a2a(model_app()) as url:
        yield f"{url}/v1"


@contextmanager
def serve_llm_agent(model_url: str, *, card_url: str | None = None) -> Iterator[tuple[str, Any]]:
    """An `llm` agent (on the stand-in model) acting in a memo world, served by agentenv-a2a (its card advertising
    `card_url` when given: `"/"` makes every card URL relative)."""
    from agentenv_a2a.server import build_a2a_app, serve_a2a
    from agentenv_agents.llm import LlmAgent
    from agentenv_runtime import World

    world = World([MemoEnv()], roles={"clerk": {"tools": ["*"]}})
    agent = LlmAgent({"base_url": model_url, "model": "stand-in", "system_prompt": ""})
    app = build_a2a_app(
        agent, world.tool_access("default"), name="Memo clerk", description="Keeps memos.", url=card_url
    )
    with serve_a2a(app) as url:
        yield url, app


# ---- scripted policies, one per validator ------------------------------------------------------------
def say(text: str) -> dict[str, Any]:
    return {"say": text}


POLICIES: dict[str, list[dict[str, Any]]] = {
    "system_prompt": [
        {"actions": [{"call": "agent_config", "save": "config"}, say("Hello. {{ config.system_prompt }}")]}
    ],
    "skill": [
        {"actions": [{"call": "agent_config", "save": "config"}, say("4, following my skills: {{ config.skills }}")]}
    ],
    "mcp": [
        {
            "actions": [
                {"call": "probe_ping", "args": {"token": "{{ prompt }}"}, "save": "ping"},
                say("The probe said {{ ping }}"),
            ]
        }
    ],
    "peer": [
        {
            "actions": [
                {"call": "message_peer", "args": {"text": "What is the secret token?"}, "save": "reply"},
                say("{{ reply.text }}"),
            ]
        }
    ],
    "memo": [
        {"actions": [{"call": "memory_write", "args": {"key": "code", "value": "{{ prompt }}"}}, say("OK")]},
        {"actions": [{"call": "memory_read", "args": {"key": "code"}, "save": "memo"}, say("{{ memo.value }}")]},
    ],
    "pong": [{"actions": [say("PONG")]} for _ in range(4)],
}


def policy(name: str) -> dict[str, Any]:
    return {"description": f"validator test policy {name}", "turn": POLICIES[name]}


# ---- broken agents --------------------------------------------------------------------------------------
class PlainAgent(AgentKind):
    """Answers PONG; crashes on file attachments (used behind a card that says it takes images)."""

    name: ClassVar[str] = "plain-test"
    description: ClassVar[str] = "a plain agent"

    def __init__(self) -> None:
        from pydantic import BaseModel

        class Nothing(BaseModel):
            pass

        super().__init__(Nothing())

    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse:
        if "[attached file" in prompt:
            raise RuntimeError("cannot read attachments")
        return AgentResponse(text="PONG")


def plain_sdk_app(*, lacking: bool = False, images: bool = False) -> Any:
    """A plain a2a-sdk agent (no agentenv extension). `lacking`: its card has no description, skills or
    output modes. `images`: it declares image/png input but fails on any attachment."""
    from a2a.helpers import new_task_from_user_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
    from starlette.applications import Starlette

    class Plain(AgentExecutor):
        async def execute(self, context: Any, event_queue: Any) -> None:
            task = context.current_task or new_task_from_user_message(context.message)
            if context.current_task is None:
                await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            await updater.start_work()
            if any(part.HasField("raw") for part in context.message.parts):
                await updater.failed(updater.new_agent_message([new_text_part("cannot read attachments")]))
                return
            await updater.add_artifact([new_text_part("PONG")], name="answer")
            await updater.complete()

        async def cancel(self, context: Any, event_queue: Any) -> None:
            raise NotImplementedError

    modes = ["text/plain", "image/png"] if images else ["text/plain"]
    card = AgentCard(
        name="Plain",
        description="" if lacking else "A plain A2A agent without the agentenv extension.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url="http://127.0.0.1/", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=modes,
        default_output_modes=[] if lacking else ["text/plain"],
        skills=[] if lacking else [AgentSkill(id="pong", name="pong", description="Answers PONG.", tags=["t"])],
    )
    handler = DefaultRequestHandler(agent_executor=Plain(), task_store=InMemoryTaskStore(), agent_card=card)
    return Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")]), card


@contextmanager
def serve_plain(**kwargs: Any) -> Iterator[str]:
    from agentenv_a2a.server import serve_a2a

    app, card = plain_sdk_app(**kwargs)
    with serve_a2a(app) as url:
        card.supported_interfaces[0].url = url + "/"
        yield url
