"""A support agent built with the OpenAI Agents SDK, served over A2A, acting in an agentenv world over MCP.

    pip install -r requirements.txt
    OPENAI_BASE_URL=http://127.0.0.1:8788/v1 OPENAI_API_KEY=unused python agent.py --port 9101

The model is any OpenAI-compatible Chat Completions endpoint (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `--model`).
Each A2A message carries the world's MCP endpoint (see ../serve_a2a.py); the SDK's own MCP client connects to it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from agents import Agent, OpenAIChatCompletionsModel, Runner, SQLiteSession, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the A2A glue both examples share
from serve_a2a import serve

INSTRUCTIONS = (
    "You are Acme's billing lead. Resolve the customer's support ticket with the tools you have: read the "
    "ticket and the order, refund only what Acme's policy allows, close the ticket with its resolution and "
    "email the customer what you did."
)


class SupportAgent:
    """Plain OpenAI Agents SDK: an `Agent` with the world's tools as an MCP server, run by `Runner`."""

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


if __name__ == "__main__":
    serve(SupportAgent, name="Acme billing lead (OpenAI Agents SDK)", port=9101)
