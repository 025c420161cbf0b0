"""The `a2a` agent kind: any remote A2A agent, driven by URL with the official a2a-sdk client.

A remote agent cannot be handed Python callables. With `world = "mcp"` it gets the world the way any outside
agent does: the world behind `tools` is served over MCP for the agent's role (the gateway on loopback with a
token for that role only, or the served world's own endpoint), and every message carries that endpoint in its
metadata under `urn:agentenv:world/v1`, an extension the remote agent's card declares. Its calls then go
through RBAC, triggers and the trajectory like any agent's. With `world = "none"` (the default) `tools` is
not used, and the task gives the agent whatever it needs in the prompt or its own configuration.

The SDK (~300 ms to import) is imported inside `respond`, never at module import, so listing or
registering agent kinds stays cheap.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from agentenv.contracts import AgentKind, AgentResponse, ToolAccess
from pydantic import BaseModel, ConfigDict, Field

from agentenv_a2a.parts import response_from_parts

if TYPE_CHECKING:
    from a2a.client import Client
    from a2a.types.a2a_pb2 import AgentCard, Task


WORLD_URI = "urn:agentenv:world/v1"
"""The extension carrying the world to a remote agent: message metadata `{WORLD_URI: {"mcp": {"url", "headers"},
"role"}}` (streamable-HTTP MCP, the headers to send with it, the role the agent acts as)."""


class A2aError(RuntimeError):
    """A remote A2A agent could not be reached, or its task did not complete."""


class A2aSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        description="Base URL of the remote agent; its card is read from `<url>/.well-known/agent-card.json`."
    )
    timeout: float = Field(60.0, gt=0, description="Seconds one prompt may take, card fetch to final answer.")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers sent on every request.")
    world: Literal["none", "mcp"] = Field(
        "none",
        description="How the remote agent reaches the world: `mcp` serves the role's tools over MCP and sends the "
        f"endpoint with every message (metadata `{WORLD_URI}`, which the agent's card must declare); `none` sends "
        "nothing.",
    )


# Task states (names of the SDK's `TaskState` enum) after which a turn is over.
DONE = "TASK_STATE_COMPLETED"
WAITING = frozenset({"TASK_STATE_INPUT_REQUIRED"})
FAILED = frozenset({"TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED"})
POLL_SECONDS = 0.05
POLL_MAX_SECONDS = 1.0


class A2aAgent(AgentKind[A2aSettings]):
    """Sends each prompt to a remote A2A agent as a user message and returns its final answer.

    One instance is one conversation: the context id the remote agent assigns is sent with every later
    prompt, and a task waiting for input (`input-required`) is continued by the next prompt.
    """

    name: ClassVar[str] = "a2a"
    description: ClassVar[str] = "A remote agent spoken to over the A2A protocol (a2a-sdk client)."
    Settings: ClassVar[type[BaseModel]] = A2aSettings

    def __init__(self, settings: A2aSettings) -> None:
        super().__init__(settings)
        self.context_id: str | None = None
        self.pending_task_id: str | None = None
        self._card: AgentCard | None = None
        self._world: Any = None
        """The `WorldServer` serving the world over MCP (`world = "mcp"`), made at the first prompt."""

    @property
    def url(self) -> str:
        return str(self.settings.url).rstrip("/")

    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse:
        """Run one prompt to completion on the remote agent (`tools` reaches it only with `world = "mcp"`)."""
        timeout = self.settings.timeout
        try:
            async with asyncio.timeout(timeout):
                world = await self._world_metadata(tools) if self.settings.world == "mcp" else None
                return await self._exchange(prompt, world)
        except TimeoutError as exc:
            raise A2aError(
                f"A2A agent at {self.url} gave no final answer within {timeout:g} s (settings.timeout)"
            ) from exc

    async def _world_metadata(self, tools: ToolAccess) -> dict[str, Any]:
        """The world behind `tools`, served over MCP for its role: what each message carries under `WORLD_URI`."""
        if self._world is None:
            try:
                from agentenv_harness.api import WorldServer
            except ImportError:
                raise A2aError(
                    'settings.world = "mcp" needs agentenv-harness (it serves the world over MCP): '
                    "pip install 'agentenv-a2a[world]'"
                ) from None
            self._world = WorldServer()
        try:
            endpoint = await asyncio.to_thread(self._world.endpoint, tools)
        except Exception as exc:  # a ToolAccess that is no world (HarnessError names it), the gateway not starting
            raise A2aError(
                f'settings.world = "mcp": the world cannot be served to the agent at {self.url}: {exc}'
            ) from exc
        return {"mcp": {"url": endpoint.url, "headers": dict(endpoint.headers)}, "role": endpoint.role}

    def close(self) -> None:
        """Stop serving the world (when `world = "mcp"` started a server for it)."""
        if self._world is not None:
            self._world.close()
            self._world = None

    async def _exchange(self, prompt: str, world: dict[str, Any] | None = None) -> AgentResponse:
        import httpx
        from a2a.client import ClientConfig, create_client
        from a2a.utils.errors import A2AError

        from agentenv_a2a.cards import CardError, fetch_card

        settings: Any = self.settings
        http = httpx.AsyncClient(headers=dict(settings.headers), timeout=httpx.Timeout(settings.timeout))
        try:
            if self._card is None:  # fetched once per agent instance, reused by later prompts
                try:
                    self._card, _where = await fetch_card(http, self.url)  # 1.0 else 0.3; relative URLs resolved
                except CardError as exc:
                    raise A2aError(str(exc)) from exc
            if world is not None and WORLD_URI not in {ext.uri for ext in self._card.capabilities.extensions}:
                raise A2aError(
                    f'settings.world = "mcp": the A2A agent at {self.url} does not declare the extension {WORLD_URI} '
                    "on its card, so it would not take the world's tools; declare it in the card's "
                    'capabilities.extensions (see examples/agents-a2a) or set world = "none"'
                )
            try:
                client = await create_client(self._card, client_config=ClientConfig(httpx_client=http))
            except ValueError as exc:
                raise A2aError(f"the card of the A2A agent at {self.url} offers no usable interface: {exc}") from exc
            try:
                return await self._send(client, prompt, world)
            except (A2AError, httpx.HTTPError) as exc:
                self.pending_task_id = None  # whatever the remote was waiting on, the next prompt starts afresh
                raise A2aError(f"A2A agent at {self.url} failed the request: {type(exc).__name__}: {exc}") from exc
            finally:
                await client.close()
        finally:
            await http.aclose()

    async def _send(self, client: Client, prompt: str, world: dict[str, Any] | None) -> AgentResponse:
        from a2a.helpers import new_text_message
        from a2a.types.a2a_pb2 import GetTaskRequest, Role, SendMessageRequest

        message = new_text_message(
            prompt, role=Role.ROLE_USER, context_id=self.context_id, task_id=self.pending_task_id
        )
        if world is not None:
            message.metadata.update({WORLD_URI: world})
            message.extensions.append(WORLD_URI)
        task_id: str | None = None
        async for event in client.send_message(SendMessageRequest(message=message)):
            if event.HasField("message"):
                if event.message.context_id:
                    self.context_id = event.message.context_id
                self.pending_task_id = None
                return response_from_parts(list(event.message.parts))
            for field in ("task", "status_update", "artifact_update"):
                if event.HasField(field):
                    update = getattr(event, field)
                    task_id = update.id if field == "task" else update.task_id
                    self.context_id = update.context_id or self.context_id
        if task_id is None:
            raise A2aError(f"A2A agent at {self.url} answered with neither a message nor a task")
        # The stream (or the blocking call) ended: read the whole task, polling while it still runs.
        delay = POLL_SECONDS
        while True:
            task = await client.get_task(GetTaskRequest(id=task_id))
            state = _state_name(task)
            if state == DONE or state in WAITING or state in FAILED:
                return self._finish(task, state)
            await asyncio.sleep(delay)
            delay = min(delay * 2, POLL_MAX_SECONDS)

    def _finish(self, task: Task, state: str) -> AgentResponse:
        status_parts = list(task.status.message.parts) if task.status.HasField("message") else []
        if state in FAILED:
            detail = response_from_parts(status_parts).text
            self.pending_task_id = None
            raise A2aError(
                f"A2A agent at {self.url}: task {task.id} ended in state {_pretty(state)}"
                + (f": {detail}" if detail else "")
            )
        self.pending_task_id = task.id if state in WAITING else None
        parts = [part for artifact in task.artifacts for part in artifact.parts]
        return response_from_parts(parts or status_parts)


def _state_name(task: Task) -> str:
    from a2a.types.a2a_pb2 import TaskState

    return str(TaskState.Name(task.status.state))


def _pretty(state: str) -> str:
    """`TASK_STATE_INPUT_REQUIRED` → `input-required` (the protocol's wording)."""
    return state.removeprefix("TASK_STATE_").lower().replace("_", "-")
