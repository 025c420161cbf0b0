"""Talking to an A2A agent the way a client does: its card (raw JSON), messages followed to the end of
their task (official a2a-sdk client), and the agentenv agent-config extension (JSON-RPC 2.0).

Every problem is reported, never raised past the validator: a failed exchange carries its error, and
`ProbeError` names the URL and what went wrong so a row can show it.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Any

EXTENSION_URI = "urn:agentenv:agent-config/v1"
TERMINAL = frozenset({"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"})
PAUSED = frozenset({"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"})


class ProbeError(RuntimeError):
    """The agent could not be asked, or answered with an error; the message says which and why."""


def pretty(state: str | None) -> str:
    """`TASK_STATE_INPUT_REQUIRED` → `input-required` (the protocol's wording)."""
    return (state or "none").removeprefix("TASK_STATE_").lower().replace("_", "-")


@dataclass
class Exchange:
    """One message sent and followed: the task's states as seen, its end, its answer."""

    task_id: str | None = None
    context_id: str | None = None
    states: list[str] = field(default_factory=list)
    final_state: str | None = None
    text: str = ""
    parts: int = 0
    error: str | None = None
    message_only: bool = False
    task: dict[str, Any] | None = None

    @property
    def completed(self) -> bool:
        return self.error is None and (self.message_only or self.final_state == "TASK_STATE_COMPLETED")

    def summary(self) -> str:
        if self.error:
            return self.error
        if self.message_only:
            return f"answered with a message: {self.text[:200]!r}"
        states = " → ".join(pretty(s) for s in self.states) or "no states"
        return f"task {self.task_id}: {states}; answer {self.text[:200]!r}"


class AgentProbe:
    """A client of one A2A agent at `url` (base URL; the card is at `/.well-known/agent-card.json`)."""

    def __init__(self, url: str, *, timeout: float = 30.0, headers: dict[str, str] | None = None) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.headers = dict(headers or {})
        self._ids = itertools.count(1)
        self._card: dict[str, Any] | None = None

    # ---- card --------------------------------------------------------------------------------------
    async def fetch_card(self) -> tuple[int, Any, str]:
        """(HTTP status, parsed JSON or None, the card URL) from the first well-known path that answers."""
        import httpx
        from agentenv_a2a.api import CARD_PATHS

        last: tuple[int, Any, str] = (0, None, self.url + CARD_PATHS[0])
        async with httpx.AsyncClient(headers=self.headers, timeout=self.timeout) as http:
            for path in CARD_PATHS:
                try:
                    response = await http.get(self.url + path)
                except httpx.HTTPError as exc:
                    raise ProbeError(f"cannot reach the agent at {self.url}: {type(exc).__name__}: {exc}") from None
                try:
                    body = response.json()
                except ValueError:
                    body = None
                last = (response.status_code, body, self.url + path)
                if response.status_code == 200:
                    break
        if last[0] == 200 and isinstance(last[1], dict):
            self._card = last[1]
        return last

    async def card(self) -> dict[str, Any]:
        if self._card is None:
            status, body, where = await self.fetch_card()
            if status != 200 or not isinstance(body, dict):
                raise ProbeError(f"no agent card at {where} (HTTP {status})")
        assert self._card is not None
        return self._card

    async def extension(self) -> dict[str, Any] | None:
        """The params of the card's `urn:agentenv:agent-config/v1` extension, or None."""
        card = await self.card()
        found = card.get("capabilities")
        capabilities: dict[str, Any] = found if isinstance(found, dict) else {}
        for entry in capabilities.get("extensions") or []:
            if isinstance(entry, dict) and entry.get("uri") == EXTENSION_URI:
                params = entry.get("params")
                return params if isinstance(params, dict) else {}
        return None

    async def ext(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call an agent-config extension method; ProbeError when the extension is missing or refuses."""
        import httpx

        declared = await self.extension()
        if declared is None:
            raise ProbeError(f"the agent's card declares no {EXTENSION_URI} extension (capabilities.extensions)")
        from agentenv_a2a.api import extension_endpoint, rpc_methods

        if rpc_methods(declared) is None and isinstance(declared.get("methods"), dict):
            raise ProbeError(
                f"the card's {EXTENSION_URI} extension offers only the reference implementation's REST operations "
                f"({', '.join(declared['methods'])}) and no agentenv JSON-RPC methods (params.rpc), which this "
                "check needs; serve the agent with agentenv-a2a (build_a2a_app / agentenv a2a-serve)"
            )
        endpoint = extension_endpoint(self.url, declared, "/agentenv")  # a path is under the agent's base URL
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params or {}}
        async with httpx.AsyncClient(headers=self.headers, timeout=self.timeout) as http:
            try:
                response = await http.post(endpoint, json=body)
            except httpx.HTTPError as exc:
                raise ProbeError(f"{method} at {endpoint}: {type(exc).__name__}: {exc}") from None
        try:
            reply = response.json()
        except ValueError:
            raise ProbeError(f"{method} at {endpoint}: HTTP {response.status_code}, not JSON") from None
        if not isinstance(reply, dict):
            raise ProbeError(f"{method} at {endpoint}: the reply is not a JSON-RPC object")
        if "error" in reply:
            error = reply["error"] if isinstance(reply["error"], dict) else {"message": reply["error"]}
            raise ProbeError(f"{method} refused: {error.get('message', error)}")
        return reply.get("result")

    # ---- messages ----------------------------------------------------------------------------------
    async def _client_card(self, http: Any) -> Any:
        """The parsed card the SDK client is made from: 1.0 else 0.3, relative URLs resolved against the card's
        address (agentenv-a2a's `fetch_card`, which the `a2a` agent kind uses too)."""
        from agentenv_a2a.api import CardError, fetch_card

        try:
            card, _where = await fetch_card(http, self.url)
        except CardError as exc:
            raise ProbeError(str(exc)) from None
        return card

    async def send(self, parts: list[Any] | str, *, context_id: str | None = None) -> Exchange:
        """Send one user message and follow its task to a terminal (or paused) state."""
        try:
            async with asyncio.timeout(self.timeout):
                return await self._send(parts, context_id)
        except TimeoutError:
            return Exchange(error=f"no final answer within {self.timeout:g} s")
        except Exception as exc:  # any client failure is the finding, not a crash
            return Exchange(error=f"{type(exc).__name__}: {exc}")

    async def _send(self, parts: list[Any] | str, context_id: str | None) -> Exchange:
        import httpx
        from a2a.client import ClientConfig, create_client
        from a2a.helpers import new_message, new_text_part
        from a2a.types.a2a_pb2 import GetTaskRequest, Role, SendMessageRequest

        if isinstance(parts, str):
            parts = [new_text_part(parts)]
        message = new_message(list(parts), context_id=context_id, role=Role.ROLE_USER)
        result = Exchange()
        async with httpx.AsyncClient(headers=self.headers, timeout=self.timeout) as http:
            card = await self._client_card(http)
            config = ClientConfig(httpx_client=http, streaming=bool(card.capabilities.streaming))
            client = await create_client(card, client_config=config)
            try:
                async for event in client.send_message(SendMessageRequest(message=message)):
                    if event.HasField("message"):
                        result.message_only = True
                        result.context_id = event.message.context_id or None
                        result.text = _text(event.message.parts)
                        result.parts = len(event.message.parts)
                        return result
                    self._observe(event, result)
                if result.task_id is None:
                    result.error = "the agent answered with neither a message nor a task"
                    return result
                delay = 0.05
                while True:
                    task = await client.get_task(GetTaskRequest(id=result.task_id))
                    state = _state(task.status.state)
                    if not result.states or result.states[-1] != state:
                        result.states.append(state)
                    if state in TERMINAL or state in PAUSED:
                        return self._finish(task, state, result)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 1.0)
            finally:
                await client.close()

    def _observe(self, event: Any, result: Exchange) -> None:
        for name in ("task", "status_update", "artifact_update"):
            if not event.HasField(name):
                continue
            update = getattr(event, name)
            result.task_id = update.id if name == "task" else update.task_id
            result.context_id = update.context_id or result.context_id
            if name == "task" or name == "status_update":
                state = _state(update.status.state)
                if state != "TASK_STATE_UNSPECIFIED" and (not result.states or result.states[-1] != state):
                    result.states.append(state)

    def _finish(self, task: Any, state: str, result: Exchange) -> Exchange:
        from google.protobuf.json_format import MessageToDict

        result.final_state = state
        result.task = MessageToDict(task)
        parts = [part for artifact in task.artifacts for part in artifact.parts]
        if task.status.HasField("message"):
            status_parts = list(task.status.message.parts)
            parts = parts or status_parts
        result.parts = len(parts)
        result.text = _text(parts)
        return result

    async def get_task(self, task_id: str) -> Any:
        """GetTask; ProbeError with the agent's error when it refuses."""
        import httpx
        from a2a.client import ClientConfig, create_client
        from a2a.types.a2a_pb2 import GetTaskRequest

        async with httpx.AsyncClient(headers=self.headers, timeout=self.timeout) as http:
            try:
                card = await self._client_card(http)
            except ProbeError:
                raise
            except Exception as exc:
                raise ProbeError(f"{type(exc).__name__}: {exc}") from None
            client = await create_client(card, client_config=ClientConfig(httpx_client=http, streaming=False))
            try:
                return await client.get_task(GetTaskRequest(id=task_id))
            except Exception as exc:
                raise ProbeError(f"{type(exc).__name__}: {exc}") from None
            finally:
                await client.close()


def _state(value: int) -> str:
    from a2a.types.a2a_pb2 import TaskState

    return str(TaskState.Name(value))


def _text(parts: Any) -> str:
    """Text parts, then data parts as JSON, joined by newlines."""
    import json

    from google.protobuf.json_format import MessageToDict

    out = []
    for part in parts:
        if part.HasField("text"):
            out.append(part.text)
        elif part.HasField("data"):
            out.append(json.dumps(MessageToDict(part.data), sort_keys=True))
    return "\n".join(out)
