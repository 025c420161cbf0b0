"""Fixtures for the agent tests: a tiny shop world in process and a stand-in chat-completions server."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Annotated, Any

import pytest
from agentenv_runtime import Artifact, Env, ToolError, World, WorldToolAccess, tool
from pydantic import Field


class ShopEnv(Env):
    """Accounts, orders and refunds: just enough to chain lookups into a refund."""

    name = "shop"
    schema = """
    CREATE TABLE accounts (account_id TEXT PRIMARY KEY, email TEXT NOT NULL, name TEXT NOT NULL);
    CREATE TABLE orders (order_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, total REAL NOT NULL);
    CREATE TABLE refunds (
        refund_id INTEGER PRIMARY KEY AUTOINCREMENT, order_id TEXT NOT NULL, amount REAL NOT NULL, reason TEXT
    );
    """

    @tool(read_only=True)
    def lookup_account(self, email: str) -> dict[str, Any]:
        """Find a customer account by email.

        Args:
            email: The customer's email address.
        """
        rows = self.query("SELECT * FROM accounts WHERE email = ?", (email,))
        if not rows:
            raise ToolError(f"no account with email {email!r}", code="not_found", field="email")
        return rows[0]

    @tool(read_only=True)
    def list_orders(self, account_id: str) -> list[dict[str, Any]]:
        """List an account's orders, oldest first.

        Args:
            account_id: The account, e.g. ACC-1001.
        """
        return self.query("SELECT * FROM orders WHERE account_id = ? ORDER BY order_id", (account_id,))

    @tool
    def issue_refund(self, order_id: str, amount: Annotated[float, Field(gt=0)], reason: str = "") -> dict[str, Any]:
        """Refund part or all of an order.

        Args:
            order_id: The order to refund.
            amount: How much to refund; at most the order total.
            reason: Why, for the record.
        """
        rows = self.query("SELECT total FROM orders WHERE order_id = ?", (order_id,))
        if not rows:
            raise ToolError(f"no order {order_id!r}", code="not_found", field="order_id")
        self.db.execute("INSERT INTO refunds (order_id, amount, reason) VALUES (?, ?, ?)", (order_id, amount, reason))
        if amount > rows[0]["total"]:
            raise ToolError(f"amount {amount} exceeds the order total {rows[0]['total']}", field="amount")
        refund_id = self.db.execute("SELECT max(refund_id) FROM refunds").fetchone()[0]
        return {"refund_id": f"R-{refund_id}", "order_id": order_id, "amount": amount}


SHOP_DATA = {
    "accounts": [{"account_id": "ACC-1001", "email": "dana.kim@example.com", "name": "Dana Kim"}],
    "orders": [
        {"order_id": "ORD-5001", "account_id": "ACC-1001", "total": 129.99},
        {"order_id": "ORD-5002", "account_id": "ACC-1001", "total": 20.0},
    ],
}


def make_world() -> World:
    env = ShopEnv()
    env.load(Artifact.build(name="tiny", env="shop", version="1", data=SHOP_DATA))
    return World([env])


@pytest.fixture
def new_world() -> Callable[[], World]:
    """Make a fresh, identical shop world (for determinism checks)."""
    return make_world


@pytest.fixture
def world() -> World:
    return make_world()


@pytest.fixture
def access(world: World) -> WorldToolAccess:
    return WorldToolAccess(world)


@dataclass
class StandIn:
    """A scripted OpenAI-compatible server: answers `replies` in order and records every request."""

    url: str = ""
    replies: list[tuple[int, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def reply(self, body: Any, status: int = 200) -> None:
        self.replies.append((status, body))

    def say(self, text: str) -> None:
        self.reply({"choices": [{"message": {"role": "assistant", "content": text}}]})

    def call(self, *calls: tuple[str, str, Any]) -> None:
        """Answer with tool calls `(id, name, arguments)`; dict arguments are sent as JSON text."""
        tool_calls = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for call_id, name, args in calls
        ]
        self.reply(
            {
                "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": tool_calls}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            }
        )


@pytest.fixture
def standin() -> Iterator[StandIn]:
    state = StandIn()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            state.requests.append(
                {
                    "path": self.path,
                    "headers": dict(self.headers),
                    "body": json.loads(self.rfile.read(length) or b"null"),
                }
            )
            status, body = state.replies.pop(0) if state.replies else (500, {"error": {"message": "no reply left"}})
            raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
