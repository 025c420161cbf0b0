"""Fixtures for the step tests: run a task for real and read what it stored."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from agentenv_testing.tasks import TaskRuns

sys.path.insert(0, str(Path(__file__).parent))  # the tests import steps_taskkit (pytest runs in importlib mode)


@pytest.fixture
def runs(tmp_path: Path) -> TaskRuns:
    return TaskRuns(tmp_path)


@pytest.fixture
def step() -> Callable[[dict[str, Any], str], dict[str, Any]]:
    """The record of one step of a run, by id."""

    def find(record: dict[str, Any], step_id: str) -> dict[str, Any]:
        return next(s for s in record["steps"] if s["id"] == step_id)

    return find


class ChatStub(BaseHTTPRequestHandler):
    """A chat-completions endpoint on loopback: answers "model <name> says hi", keeps every request."""

    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append({"auth": self.headers.get("Authorization"), "body": body, "path": self.path})
        reply = {
            "choices": [
                {"message": {"role": "assistant", "content": f"model {body['model']} says hi"}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def chat_stub() -> Iterator[str]:
    """The stub's base URL (…/v1); what it was sent is in `ChatStub.seen`."""
    ChatStub.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatStub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture
def chat_requests() -> list[dict[str, Any]]:
    """The requests the chat stub received in this test (use with `chat_stub`)."""
    return ChatStub.seen
