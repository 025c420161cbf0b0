"""Who may use the explorer: loopback needs nothing; any other bind needs a token, and writes from another
origin are refused on every bind (a page on another site must not start or cancel runs through a browser).

The token is made once, printed once, and kept in a 0600 file so the next `agentenv up` on the same machine
uses the same one. Requests carry it as `Authorization: Bearer TOKEN`, or as `?token=` where a browser cannot
set a header (the page's first load, EventSource streams).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


class AccessError(ValueError):
    """A bind or token setting that would leave the explorer open; the message says what to pass."""


def is_loopback(host: str) -> bool:
    name = host.strip("[]")
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def default_token_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "agentenv" / "explorer-token"


def load_or_make_token(path: Path) -> tuple[str, bool]:
    """(token, whether it was made now). A new token is written 0600; an existing file must not be readable by
    others (it would not be a secret any more)."""
    if path.exists():
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            raise AccessError(f"{path}: the token file is readable by others (mode {mode:o}); chmod 600 it")
        token = path.read_text(encoding="utf-8").strip()
        if len(token) < 16:
            raise AccessError(f"{path}: the token is shorter than 16 characters; delete the file to make a new one")
        return token, False
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(32)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as sink:
        sink.write(token + "\n")
    return token, True


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}


def cross_origin(method: str, headers: dict[str, str]) -> str | None:
    """Why a write comes from another origin, or None. A browser sends `Origin` (and `Sec-Fetch-Site`) with
    every cross-site POST; command-line clients send neither and are judged by the token alone."""
    if method not in WRITES:
        return None
    if headers.get("sec-fetch-site") in ("cross-site", "same-site"):
        return f"Sec-Fetch-Site is {headers['sec-fetch-site']}"
    origin = headers.get("origin")
    if origin is None:
        return None
    if origin == "null":
        return "the Origin is null"
    if urlsplit(origin).netloc.lower() != headers.get("host", "").lower():
        return f"Origin {origin} is not this server ({headers.get('host')})"
    return None


def _token_of(scope: Scope, headers: dict[str, str]) -> str | None:
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
    return values[0] if values else None


class AccessMiddleware:
    """ASGI middleware: the origin rule for writes, and the token on every request when one is set."""

    def __init__(self, app: Asgi, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        why = cross_origin(scope["method"], headers)
        if why is not None:
            await _refuse(send, 403, f"cross-origin write refused: {why}; use the explorer's own page")
            return
        if self.token is not None:
            given = _token_of(scope, headers)
            if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
                why = "needs its token" if given is None else "refuses it: the token given was rejected"
                await _refuse(
                    send,
                    401,
                    f"this explorer {why}; send `Authorization: Bearer TOKEN` or open the URL `agentenv up` printed "
                    "(with ?token=)",
                )
                return
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message, "status": status}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
