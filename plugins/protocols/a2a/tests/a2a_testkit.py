"""Test helpers: a tiny notes world, an agent that acts in it, and a stand-in plugin host."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from agentenv import PluginHost
from agentenv.contracts import AgentKind, AgentResponse, ToolAccess
from agentenv.hookspecs import hookimpl
from agentenv_runtime import Env, ToolError, World, WorldToolAccess, tool
from agentenv_testing.hosts import host_of


class NotesEnv(Env):
    """One table of notes; enough to see that a served agent really acted in the world."""

    name: ClassVar[str] = "notes"
    schema: ClassVar[str] = "CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, text TEXT NOT NULL);"

    @tool
    def add_note(self, text: str) -> dict[str, Any]:
        """Add a note.

        Args:
            text: What the note says.
        """
        if not text.strip():
            raise ToolError("text is empty; write something", field="text")
        cursor = self.db.execute("INSERT INTO notes (text) VALUES (?)", (text,))
        return {"id": cursor.lastrowid, "text": text}

    @tool(read_only=True)
    def count_notes(self) -> dict[str, Any]:
        """How many notes there are."""
        return {"count": self.db.execute("SELECT COUNT(*) FROM notes").fetchone()[0]}


class EchoAgent(AgentKind):
    """Writes each prompt as a note and echoes it; `fail…` raises, `sleep…` takes a while."""

    name: ClassVar[str] = "echo-test"
    description: ClassVar[str] = "echoes prompts into the notes world"

    def __init__(self, settings: Any = None) -> None:
        super().__init__(settings or self.Settings())
        self.turns = 0

    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse:
        self.turns += 1
        if prompt.startswith("fail"):
            raise RuntimeError("the echo agent was told to fail")
        if prompt.startswith("sleep"):
            await asyncio.sleep(1.5)
        note = tools.call_tool("add_note", {"text": prompt})
        count = tools.call_tool("count_notes", {})
        return AgentResponse(
            text=f"echo: {prompt}",
            structured={"turn": self.turns, "note": note["result"], "notes": count["result"]["count"]},
        )


def notes_world() -> tuple[World, WorldToolAccess]:
    world = World([NotesEnv()])
    return world, WorldToolAccess(world, "default")


class NotesPlugin:
    """A plugin giving the `notes` env and the `echo-test` agent kind, for a host made with `host_of`."""

    @hookimpl
    def agentenv_register_envs(self) -> list[type[Any]]:
        return [NotesEnv]

    @hookimpl
    def agentenv_register_agent_kinds(self) -> list[type[Any]]:
        return [EchoAgent]


def notes_host() -> PluginHost:
    """A real plugin host holding only `NotesPlugin` (no entry points)."""
    return host_of(NotesPlugin())


def interview_app() -> Any:
    """A plain a2a-sdk agent (not ours): answers `direct…` with a bare message, otherwise asks for a name
    (`input-required`) and completes the same task once it gets one."""
    from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.tasks import TaskUpdater
    from a2a.types.a2a_pb2 import AgentCapabilities, TaskState

    class Interviewer(AgentExecutor):
        async def execute(self, context: Any, event_queue: Any) -> None:
            text = context.get_user_input()
            if context.current_task is None and text.startswith("direct"):
                await event_queue.enqueue_event(
                    new_text_message(f"direct answer to {text}", context_id=context.context_id)
                )
                return
            task = context.current_task
            if task is None:
                task = new_task_from_user_message(context.message)
                await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
                await updater.add_artifact([new_text_part(f"hello, {text}")], name="greeting")
                await updater.complete()
            else:
                await updater.requires_input(updater.new_agent_message([new_text_part("what is your name?")]))

        async def cancel(self, context: Any, event_queue: Any) -> None:
            raise NotImplementedError

    return plain_app(Interviewer(), "Interviewer", "asks for a name", AgentCapabilities(streaming=False))


def plain_app(executor: Any, name: str, description: str, capabilities: Any) -> Any:
    """(Starlette app, card) of an a2a-sdk executor: JSON-RPC 1.0 at `/`; set the card's interface url once the
    port is known."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types.a2a_pb2 import AgentCard, AgentInterface
    from starlette.applications import Starlette

    card = AgentCard(
        name=name,
        description=description,
        version="1",
        supported_interfaces=[
            AgentInterface(url="http://127.0.0.1/", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=capabilities,
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
    )
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card)
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")]
    return Starlette(routes=routes), card


def world_app(*, declare: bool = True) -> Any:
    """A plain a2a-sdk agent that takes the world as an outside agent does: from each message's metadata under
    `urn:agentenv:world/v1` it connects to the world's MCP endpoint (with the headers given), lists its tools and
    writes the prompt as a note. It answers with JSON: the role, the tools it saw and the note call's outcome
    (or `{"world": null}` when the message carried none). `declare=False` leaves the extension off its card."""
    import json

    from a2a.helpers import new_task_from_user_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.tasks import TaskUpdater
    from a2a.types.a2a_pb2 import AgentCapabilities, AgentExtension
    from agentenv_a2a.agent import WORLD_URI
    from agentenv_gateway.api import McpToolAccess
    from google.protobuf.json_format import MessageToDict

    def act(world: dict[str, Any], prompt: str) -> dict[str, Any]:
        token = world["mcp"]["headers"]["Authorization"].removeprefix("Bearer ")
        mcp_url = world["mcp"]["url"]
        tools = McpToolAccess(mcp_url.removesuffix("/mcp"), token, role=world["role"], mcp_url=mcp_url)
        try:
            names = sorted(t["name"] for t in tools.list_tools())
            return {"role": world["role"], "tools": names, "note": tools.call_tool("add_note", {"text": prompt})}
        finally:
            tools.close()

    class WorldAgent(AgentExecutor):
        async def execute(self, context: Any, event_queue: Any) -> None:
            task = context.current_task or new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            world = MessageToDict(context.message.metadata).get(WORLD_URI)
            seen = await asyncio.to_thread(act, world, context.get_user_input()) if world else {"world": None}
            await updater.add_artifact([new_text_part(json.dumps(seen))], name="seen")
            await updater.complete()

        async def cancel(self, context: Any, event_queue: Any) -> None:
            raise NotImplementedError

    extensions = [AgentExtension(uri=WORLD_URI, description="acts in the world sent with each message")]
    capabilities = AgentCapabilities(streaming=True, extensions=extensions if declare else [])
    return plain_app(WorldAgent(), "World agent", "writes notes in the world it is given", capabilities)
