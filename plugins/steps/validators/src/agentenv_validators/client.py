"""Talking to a served world: its Environment Card, its JSON-RPC data plane and its MCP tool list.

Works against any server that follows the AgentEnv environment protocol, not only our gateway. The MCP
SDK is imported inside `mcp_tools`, so importing this module stays cheap.
"""

from __future__ import annotations

import json
import os
from typing import Any

CARD_PATH = "/.well-known/agent-env.json"
DEFAULT_TIMEOUT = 30.0


class ProbeError(Exception):
    """The world did not answer as the protocol says (unreachable, not JSON, a transport error)."""


def resolve_token(token: str | None) -> str | None:
    """A bearer token, literal or `env:NAME` (read from the environment, so it never sits in a task file)."""
    if token and token.startswith("env:"):
        name = token.removeprefix("env:")
        if name not in os.environ:
            raise ProbeError(f"field `token`: the environment variable {name} is not set")
        return os.environ[name]
    return token


class WorldClient:
    """One served world, by base URL (the card's URL is accepted too)."""

    def __init__(self, url: str, *, token: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.base = url.rstrip("/").removesuffix(CARD_PATH).rstrip("/")
        self.token = resolve_token(token)
        self.timeout = timeout
        self.headers = {"authorization": f"Bearer {self.token}"} if self.token else {}
        self._card: dict[str, Any] | None = None
        self._next_id = 0

    # ---- the card ------------------------------------------------------------------------------------
    async def fetch_card(self) -> tuple[int, Any]:
        """(HTTP status, the parsed body or None); raises ProbeError when the server cannot be reached."""
        import httpx  # here, not at module top: httpx pulls in rich and its CLI, too slow for start-up

        async with httpx.AsyncClient(headers=self.headers, timeout=self.timeout) as http:
            try:
                response = await http.get(self.base + CARD_PATH)
            except httpx.HTTPError as exc:
                raise ProbeError(f"cannot reach {self.base}{CARD_PATH} ({type(exc).__name__}: {exc})") from None
        try:
            body = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        if response.status_code == 200 and isinstance(body, dict):
            self._card = body
        return response.status_code, body

    async def card(self) -> dict[str, Any]:
        """The card (fetched once); a ProbeError when there is none."""
        if self._card is None:
            status, body = await self.fetch_card()
            if status != 200 or not isinstance(body, dict):
                raise ProbeError(f"{self.base}{CARD_PATH} answered HTTP {status} without a JSON object card")
        assert self._card is not None
        return self._card

    async def interface(self, transport: str, default_path: str) -> str:
        """The URL the card gives for `transport` (case-insensitive), else base URL + `default_path`."""
        try:
            card = await self.card()
        except ProbeError:
            card = {}
        for item in card.get("additionalInterfaces") or []:
            if (
                isinstance(item, dict)
                and str(item.get("transport", "")).lower() == transport.lower()
                and item.get("url")
            ):
                from agentenv_gateway.api import resolve

                return resolve(self.base, str(item["url"]))  # the protocol's URLs are relative to the env address
        return self.base + default_path

    # ---- JSON-RPC data plane -------------------------------------------------------------------------
    async def rpc(
        self, method: str, params: dict[str, Any] | None = None, *, raw: bool = False
    ) -> tuple[Any, dict[str, Any] | None]:
        """(result, None) or (None, the JSON-RPC error object); `data/get`'s parts come as `{env: tables}` unless
        `raw` (see `export`)."""
        url = await self.interface("JSONRPC", "/agentenv")
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        import httpx  # here, not at module top: httpx pulls in rich and its CLI, too slow for start-up

        async with httpx.AsyncClient(headers=self.headers, timeout=self.timeout) as http:
            try:
                response = await http.post(url, json=message)
            except httpx.HTTPError as exc:
                raise ProbeError(f"{method}: cannot reach {url} ({type(exc).__name__}: {exc})") from None
        try:
            reply = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ProbeError(
                f"{method}: {url} answered HTTP {response.status_code} with a body that is not JSON"
            ) from None
        if not isinstance(reply, dict) or reply.get("jsonrpc") != "2.0" or reply.get("id") != self._next_id:
            raise ProbeError(
                f"{method}: the reply is not a JSON-RPC 2.0 response to request {self._next_id}: {reply!r}"
            )
        if "error" in reply:
            error = reply["error"] if isinstance(reply["error"], dict) else {"message": str(reply["error"])}
            return None, error
        if "result" not in reply:
            raise ProbeError(f"{method}: the JSON-RPC reply has neither `result` nor `error`")
        if method == "data/get" and not raw:
            return await self.export(reply["result"]), None
        return reply["result"], None

    async def export(self, answer: Any) -> Any:
        """`data/get`'s `{"parts": [...]}` as `{env: tables}`.

        `metadata.env` is optional in the protocol (its `DataPart.metadata` may be absent): a part naming no env
        belongs to the env the data plane serves, the card's only child when it has one (the reference gateway
        forwards `data/*` to its one backing server, whose parts name nothing), else the card itself (a leaf)."""
        from agentenv_gateway.api import export_of

        if not isinstance(answer, dict) or not isinstance(answer.get("parts"), list):
            return answer
        try:
            card = await self.card()
        except ProbeError:
            card = {}
        children = card.get("children_environments") or []
        only = children[0] if len(children) == 1 and isinstance(children[0], dict) else card
        return export_of(answer, str(only.get("name") or card.get("name") or "env"))

    # ---- MCP -----------------------------------------------------------------------------------------
    async def mcp_tools(self) -> list[dict[str, Any]]:
        """Every tool the MCP endpoint lists (all pages), as `{name, description, inputSchema}` dicts."""
        import httpx2
        from mcp.client.session import ClientSession
        from mcp.client.streamable_http import streamable_http_client
        from mcp_types import PaginatedRequestParams

        url = await self.interface("mcp", "/mcp")
        tools: list[dict[str, Any]] = []
        try:
            async with (
                httpx2.AsyncClient(headers=self.headers, timeout=self.timeout) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                cursor = None
                for _ in range(1000):  # a server that pages forever is a broken server
                    params = PaginatedRequestParams(cursor=cursor) if cursor else None
                    listed = await session.list_tools(params=params)
                    tools += [
                        {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                        for t in listed.tools
                    ]
                    cursor = listed.next_cursor
                    if not cursor:
                        break
        except Exception as exc:  # the SDK raises exception groups and transport errors of many types
            raise ProbeError(f"MCP tools/list at {url} failed: {_first_cause(exc)}") from None
        return tools


def _first_cause(exc: BaseException) -> str:
    """The innermost useful message of an exception (group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"
