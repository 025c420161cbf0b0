"""The A2A glue both examples share: serve any agent with `async answer(prompt, world, conversation) -> str` as an
A2A agent with the official a2a-sdk, taking the agentenv world out of each message.

agentenv's `a2a` agent kind (with `world = "mcp"`) puts the world's MCP endpoint in every message's metadata under
`urn:agentenv:world/v1`: `{"mcp": {"url", "headers"}, "role"}`. The card declares that extension, so agentenv knows
this agent takes a world. Each message becomes one task; the answer is its artifact; an exception fails the task
with its text. `conversation` is the A2A context id, so a later prompt can continue the same conversation.
"""

from __future__ import annotations

import argparse
from typing import Any, Protocol

import uvicorn
from a2a.helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette

WORLD = "urn:agentenv:world/v1"


class Answers(Protocol):
    async def answer(self, prompt: str, world: dict[str, Any], conversation: str) -> str: ...


class WorldExecutor(AgentExecutor):
    """One A2A task per message: the agent answers with the world the message carries."""

    def __init__(self, agent: Answers) -> None:
        self.agent = agent

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        world = MessageToDict(context.message.metadata).get(WORLD)
        if world is None:
            await updater.failed(updater.new_agent_message([new_text_part(f"no world: send it as {WORLD}")]))
            return
        await updater.start_work()
        try:
            text = await self.agent.answer(context.get_user_input(), world, task.context_id)
        except Exception as exc:  # the caller sees why the task failed
            await updater.failed(updater.new_agent_message([new_text_part(f"{type(exc).__name__}: {exc}")]))
            return
        await updater.add_artifact([new_text_part(text)], name="answer")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("tasks run to the end")


def a2a_app(agent: Answers, *, name: str, url: str) -> Starlette:
    """The agent card (JSON-RPC at `url`, streaming, the world extension) and the JSON-RPC routes."""
    card = AgentCard(
        name=name,
        description="Resolves support tickets in an agentenv world.",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(
            streaming=True, extensions=[AgentExtension(uri=WORLD, description="acts in the world sent with it")]
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="support", name="Support", description="Refunds, tickets, emails.", tags=["support"])],
    )
    handler = DefaultRequestHandler(WorldExecutor(agent), InMemoryTaskStore(), card)
    return Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")])


def serve(make_agent: Any, *, name: str, port: int) -> None:
    """`python agent.py [--host H] [--port P] [--model M]`: make the agent for the model and serve it until Ctrl-C."""
    parser = argparse.ArgumentParser(description=f"{name}, served over A2A")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=port)
    parser.add_argument("--model", default="gpt-4o-mini", help="model name sent to the OpenAI-compatible endpoint")
    args = parser.parse_args()
    app = a2a_app(make_agent(args.model), name=name, url=f"http://{args.host}:{args.port}/")
    uvicorn.run(app, host=args.host, port=args.port)
