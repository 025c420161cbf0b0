"""How `agentenv tools --url` reaches a served env: ours or any server of the AgentEnv protocol.

The card (public, fetched without a token if none is given) says which transports the server offers; its
URLs may be relative (joined onto the env address) or absolute. An HTTP+JSON interface (our gateway's
`/rest`) lists and calls tools over REST as the token's role; otherwise the tools are listed and called
over the card's MCP interface (`/mcp` by convention), which every protocol server has.
"""

from __future__ import annotations

from typing import Any

from agentenv_gateway.client import McpToolAccess
from agentenv_gateway.protocol import MCP_PATH, resolve

CARD = "/.well-known/agent-env.json"


class TargetError(Exception):
    """The env cannot be reached or used; the message says what to fix."""


def _interface(card: dict[str, Any], transport: str) -> str | None:
    for item in card.get("additionalInterfaces") or []:
        if isinstance(item, dict) and str(item.get("transport", "")).lower() == transport and item.get("url"):
            return str(item["url"])
    return None


class ToolTarget:
    def __init__(self, url: str, token: str | None, *, timeout: float) -> None:
        import httpx

        self.base = url.rstrip("/").removesuffix(CARD)
        self.token = token
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(headers=headers, timeout=timeout)
        self.card = self._card()
        rest = _interface(self.card, "http+json")
        self.rest = resolve(self.base, rest) if rest else None
        self.mcp_url = resolve(self.base, _interface(self.card, "mcp") or MCP_PATH)
        self._mcp: McpToolAccess | None = None

    def _card(self) -> dict[str, Any]:
        import httpx

        try:
            response = self.http.get(self.base + CARD)
        except httpx.HTTPError as exc:
            raise TargetError(f"--url {self.base}: cannot reach the env ({type(exc).__name__}: {exc})") from None
        if response.status_code == 401:
            raise TargetError(self._unauthorized())
        if response.status_code != 200:
            raise TargetError(f"--url {self.base}: no Environment Card there (HTTP {response.status_code})")
        try:
            card = response.json()
        except ValueError:
            card = None
        if isinstance(card, dict):
            return card
        raise TargetError(f"--url {self.base}: the card is not a JSON object")

    def _unauthorized(self) -> str:
        """A 401 means no token was sent, or the one sent opens no role: say which."""
        if self.token:
            return (
                f"{self.base} rejected the bearer token given (--token or AGENTENV_TOKEN): it opens no role there; "
                "pass a token of a role the server was started with"
            )
        return "the env needs a bearer token: pass --token TOKEN (or set AGENTENV_TOKEN)"

    def _mcp_access(self) -> McpToolAccess:
        if self._mcp is None:
            self._mcp = McpToolAccess(self.base, self.token, mcp_url=self.mcp_url)
        return self._mcp

    def list_tools(self) -> list[dict[str, Any]]:
        if self.rest is None:
            try:
                return self._mcp_access().list_tools()
            except Exception as exc:
                raise TargetError(f"{self.mcp_url}: MCP tools/list failed ({type(exc).__name__}: {exc})") from None
        response = self.http.get(f"{self.rest}/tools")
        if response.status_code == 401:
            raise TargetError(self._unauthorized())
        if response.status_code != 200:
            raise TargetError(f"{self.rest}/tools: HTTP {response.status_code}: {response.text[:300]}")
        tools: list[dict[str, Any]] = response.json().get("tools") or []
        return tools

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """`{"ok": true, "result": …}` or `{"ok": false, "error": …}`."""
        if self.rest is None:
            return self._mcp_access().call_tool(name, arguments)
        response = self.http.post(f"{self.rest}/tools/{name}", json=arguments)
        try:
            payload: Any = response.json()
        except ValueError:
            message = f"HTTP {response.status_code}: {response.text[:500]}"
            return {"ok": False, "error": {"code": "http_error", "message": message}}
        if isinstance(payload, dict) and "ok" in payload:
            return payload
        return {"ok": False, "error": payload}

    def close(self) -> None:
        if self._mcp is not None:
            self._mcp.close()
        self.http.close()
