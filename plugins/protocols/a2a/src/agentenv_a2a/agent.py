"""The `a2a` agent kind: any remote A2A agent, driven by URL with the official a2a-sdk client.

A remote agent cannot be handed Python callables, so the `tools` argument of `respond` is not used:
a remote agent reaches the world through the world's own served endpoints (the gateway's MCP or REST
interfaces), which the task gives it in the prompt or in its own configuration.

The SDK (~300 ms to import) is imported inside `respond`, never at module import, so listing or
registering agent kinds stays cheap.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from agentenv.contracts import AgentKind, AgentResponse, ToolAccess
from pydantic import BaseModel, ConfigDict, Field

from agentenv_a2a.parts import response_from_parts

if TYPE_CHECKING:
    from a2a.client import Client
    from a2a.types.a2a_pb2 import AgentCard, Task


class A2aError(RuntimeError):
    """A remote A2A agent could not be reached, or its task did not complete."""


class A2aSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        description="Base URL of the remote agent; its card is read from `<url>/.well-known/agent-card.json`."
    )
    timeout: float = Field(60.0, gt=0, description="Seconds one prompt may take, card fetch to final answer.")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers sent on every request.")


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

    @property
    def url(self) -> str:
        return str(self.settings.url).rstrip("/")

    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse:
        """Run one prompt to completion on the remote agent (`tools` is not used; see the module docstring)."""
        timeout = self.settings.timeout
        try:
            async with asyncio.timeout(timeout):
                return await self._exchange(prompt)
        except TimeoutError as exc:
            raise A2aError(
                f"A2A agent at {self.url} gave no final answer within {timeout:g} s (settings.timeout)"
            ) from exc

    async def _exchange(self, prompt: str) -> AgentResponse:
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
            try:
                client = await create_client(self._card, client_config=ClientConfig(httpx_client=http))
            except ValueError as exc:
                raise A2aError(f"the card of the A2A agent at {self.url} offers no usable interface: {exc}") from exc
            try:
                return await self._send(client, prompt)
            except (A2AError, httpx.HTTPError) as exc:
                self.pending_task_id = None  # whatever the remote was waiting on, the next prompt starts afresh
                raise A2aError(f"A2A agent at {self.url} failed the request: {type(exc).__name__}: {exc}") from exc
            finally:
                await client.close()
        finally:
            await http.aclose()

    async def _send(self, client: Client, prompt: str) -> AgentResponse:
        from a2a.helpers import new_text_message
        from a2a.types.a2a_pb2 import GetTaskRequest, Role, SendMessageRequest

        message = new_text_message(
            prompt, role=Role.ROLE_USER, context_id=self.context_id, task_id=self.pending_task_id
        )
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
