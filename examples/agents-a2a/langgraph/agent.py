"""A support agent built as a LangGraph graph, served over A2A, acting in an agentenv world over MCP.

    pip install -r requirements.txt
    OPENAI_BASE_URL=http://127.0.0.1:8788/v1 OPENAI_API_KEY=unused python agent.py --port 9102

The model is any OpenAI-compatible Chat Completions endpoint (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `--model`).
The world's tools arrive with each A2A message: agentenv's `a2a` agent kind puts the world's MCP endpoint in
the message metadata under `urn:agentenv:world/v1`, and langchain-mcp-adapters turns it into LangChain tools.
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
from google.protobuf.json_format import MessageToDict
from langchain_core.messages import SystemMessage
from langchain_core.tools import BaseTool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from starlette.applications import Starlette

WORLD = "urn:agentenv:world/v1"
"""Where agentenv puts the world in each message's metadata: {"mcp": {"url", "headers"}, "role"}."""

INSTRUCTIONS = (
    "You are Acme's billing lead. Resolve the customer's support ticket with the tools you have: read the "
    "ticket and the order, refund only what Acme's policy allows, close the ticket with its resolution and "
    "email the customer what you did."
)


# ---- the agent: a LangGraph graph, model ⇄ tools until the model answers -----------------------------------
def support_graph(model: ChatOpenAI, tools: list[BaseTool], memory: InMemorySaver) -> Any:
    llm = model.bind_tools(tools)

    async def think(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await llm.ainvoke([SystemMessage(INSTRUCTIONS), *state["messages"]])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", think)
    graph.add_node("tools", ToolNode(tools, handle_tool_errors=True))  # a refused call goes back to the model
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=memory)


class SupportAgent:
    def __init__(self, model: str) -> None:
        self.model = ChatOpenAI(model=model, temperature=0)
        self.memory = InMemorySaver()  # one conversation per A2A context (the graph's thread)

    async def answer(self, prompt: str, world: dict[str, Any], conversation: str) -> str:
        mcp = world["mcp"]
        client = MultiServerMCPClient(
            {"world": {"transport": "streamable_http", "url": mcp["url"], "headers": mcp["headers"]}}
        )
        graph = support_graph(self.model, await client.get_tools(), self.memory)
        config = {"configurable": {"thread_id": conversation}, "recursion_limit": 40}
        state = await graph.ainvoke({"messages": [("user", prompt)]}, config)
        return str(state["messages"][-1].text)


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
        name="Acme billing lead (LangGraph)",
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
    parser.add_argument("--port", type=int, default=9102)
    parser.add_argument("--model", default="gpt-4o-mini", help="model name sent to the endpoint")
    args = parser.parse_args()
    uvicorn.run(app(SupportAgent(args.model), f"http://{args.host}:{args.port}/"), host=args.host, port=args.port)
