"""A support agent built as a LangGraph graph, served over A2A, acting in an agentenv world over MCP.

    pip install -r requirements.txt
    OPENAI_BASE_URL=http://127.0.0.1:8788/v1 OPENAI_API_KEY=unused python agent.py --port 9102

The model is any OpenAI-compatible Chat Completions endpoint (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `--model`).
Each A2A message carries the world's MCP endpoint (see ../serve_a2a.py); langchain-mcp-adapters turns it into
LangChain tools.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import SystemMessage
from langchain_core.tools import BaseTool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the A2A glue both examples share
from serve_a2a import serve

INSTRUCTIONS = (
    "You are Acme's billing lead. Resolve the customer's support ticket with the tools you have: read the "
    "ticket and the order, refund only what Acme's policy allows, close the ticket with its resolution and "
    "email the customer what you did."
)


def support_graph(model: ChatOpenAI, tools: list[BaseTool], memory: InMemorySaver) -> Any:
    """Model ⇄ tools until the model answers without a tool call."""
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
    """The graph, with the world's tools loaded over MCP for each message."""

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


if __name__ == "__main__":
    serve(SupportAgent, name="Acme billing lead (LangGraph)", port=9102)
