"""A support agent built with the OpenAI Agents SDK, served over A2A, acting in an agentenv world over MCP.

    pip install -r requirements.txt
    OPENAI_BASE_URL=http://127.0.0.1:8788/v1 OPENAI_API_KEY=unused python agent.py --port 9101

The model is any OpenAI-compatible Chat Completions endpoint (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `--model`).
The world's tools arrive with each A2A message: agentenv's `a2a` agent kind puts the world's MCP endpoint in
the message metadata under `urn:agentenv:world/v1`, and the agent connects the SDK's own MCP client to it.
"""

from __future__ import annotations

import argparse
from typing import Any

import uvicorn
from a2a.helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill
from agents import Agent, OpenAIChatCompletionsModel, Runner, SQLiteSession, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from google.protobuf.json_format import MessageToDict
from openai import AsyncOpenAI
from starlette.applications import Starlette

WORLD = "urn:agentenv:world/v1"
"""Where agentenv puts the world in each message's metadata: {"mcp": {"url", "headers"}, "role"}."""

INSTRUCTIONS = (
    "You are Acme's billing lead. Resolve the customer's support ticket with the tools you have: read the "
    "ticket and the order, refund only what Acme's policy allows, close the ticket with its resolution and "
    "email the customer what you did."
)


# ---- the agent: plain OpenAI Agents SDK ---------------------------------------------------------------------
class SupportAgent:
    def __init__(self, model: str) -> None:
        set_tracing_disabled(True)  # traces would go to OpenAI's servers; the run stays on this machine
        self.model = OpenAIChatCompletionsModel(model=model, openai_client=AsyncOpenAI())
        self.sessions: dict[str, SQLiteSession] = {}  # one conversation per A2A context

    async def answer(self, prompt: str, world: dict[str, Any], conversation: str) -> str:
        mcp = world["mcp"]
        async with MCPServerStreamableHttp({"url": mcp["url"], "headers": mcp["headers"]}, name="world") as tools:
            agent = Agent(name="Acme billing lead", instructions=INSTRUCTIONS, model=self.model, mcp_servers=[tools])
            session = self.sessions.setdefault(conversation, SQLiteSession(conversation))
            result = await Runner.run(agent, prompt, session=session, max_turns=20)
        return str(result.final_output)


# ---- the glue: one A2A task per message, the world taken from its metadata -----------------------------------
class Executor(AgentExecutor):
    def __init__(self, agent: SupportAgent) -> None:
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


def app(agent: SupportAgent, url: str) -> Starlette:
    card = AgentCard(
        name="Acme billing lead (OpenAI Agents SDK)",
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
    handler = DefaultRequestHandler(agent_executor=Executor(agent), task_store=InMemoryTaskStore(), agent_card=card)
    return Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9101)
    parser.add_argument("--model", default="gpt-4o-mini", help="model name sent to the endpoint")
    args = parser.parse_args()
    uvicorn.run(app(SupportAgent(args.model), f"http://{args.host}:{args.port}/"), host=args.host, port=args.port)
